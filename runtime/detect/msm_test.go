package detect

import "testing"

// Two threads read a location in parallel, then one of them writes it,
// all unlocked. MSM-short tests the write against the Shared-Read segment
// and reports; MSM-long's Shared-Read is lockset-only and moves to
// Exclusive-ReadWrite without a report. A further unordered write by the
// other thread races under MSM-long too.
func TestMSMLongAndShort(t *testing.T) {
	trace := func(b *bench) {
		t1 := b.create(0, 0x500)
		t2 := b.create(0, 0x510)
		b.flush(t1, rd(x, 4, 0x1001))
		// two batches: in one, the read would be checked as part of
		// the write (writtenNext)
		b.flush(t2, rd(x, 4, 0x2001))
		b.flush(t2, wr(x, 4, 0x2002))
	}
	b := newBench(t, "msm=short")
	trace(b)
	races, out := b.finish()
	wantReports(t, races, out, 1,
		"  Write of size 4 at 0x10000 by thread T2:\n",
		"  Previous read of size 4 by thread T1:\n", // the conflicting read, not T2's own

		"  Detected by MSM-short: the location is now in state Race.\n")

	b = newBench(t, "msm=long")
	trace(b)
	if n := b.d.rep.races; n != 0 {
		t.Fatalf("MSM-long reported %d races:\n%s", n, b.host.output())
	}
	b.flush(1, wr(x, 4, 0x1002))
	races, out = b.finish()
	wantReports(t, races, out, 1,
		"  Write of size 4 at 0x10000 by thread T1:\n",
		"  Previous write of size 4 by thread T2:\n",
		"  Detected by MSM-long: the location is now in state Race.\n")
}
