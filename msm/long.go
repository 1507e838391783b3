package msm

// stepLong is MSM-long (section 5.2.3, figure 5.1). States: New,
// Exclusive-Read, Exclusive-Write, Exclusive-ReadWrite, Shared-Read,
// Shared-Modified1, Shared-Modified2, Race (and Spin, handled by Step).
func stepLong(c Cell, a Access, env Env) (Cell, bool) {
	switch c.State {
	case New:
		// TS_d ← TS_t; Exclusive-Read / Exclusive-Write; E_d ← L_t.
		return own(c, a, env), false

	case ExclWrite:
		if env.HappensBefore(c.TS, a) {
			return own(c, a, env), false
		}
		if locks := Meet(env, c.Locks, a.Locks); locks != 0 {
			// C_d ← E_d ∩ L_t, S_d ← {t, threadof(TS_d)}; no segment is stored.
			return share(SharedModified1, c, a, c.TS, locks, env), false
		}
		return race(c)

	case ExclRead:
		if env.HappensBefore(c.TS, a) {
			return own(c, a, env), false // choice 4 for a read
		}
		locks := Meet(env, c.Locks, a.Locks)
		if !a.Write {
			return share(SharedRead, c, a, c.TS, locks, env), false // choice 3
		}
		if locks != 0 {
			return share(SharedModified1, c, a, c.TS, locks, env), false
		}
		return race(c)

	case SharedRead:
		// Lockset only, no happens-before test, never reports.
		c.Locks = env.Intersect(c.Locks, a.Locks)
		c.Threads = env.AddThread(c.Threads, a.Thread)
		if a.Write && c.Locks == 0 {
			return toExclReadWrite(c, a), false // choice 6
		}
		if a.Write {
			c.State = SharedModified1
		}
		return c, false

	case SharedModified1:
		// Lockset only, no happens-before test, never reports.
		c.Locks = env.Intersect(c.Locks, a.Locks)
		c.Threads = env.AddThread(c.Threads, a.Thread) // choice 8
		if c.Locks == 0 {
			return toExclReadWrite(c, a), false // choice 6
		}
		return c, false

	case ExclReadWrite:
		hb := env.HappensBefore(c.TS, a)
		if !a.Write {
			if hb {
				// Choice 5: back to Shared-Read with C_d ← L_t.
				c.State = SharedRead
				c.Locks = a.Locks
				c.Threads = env.AddThread(c.Threads, a.Thread)
				return c, false
			}
			// Keep TS_d (choice 10), C_d ← L_t, S_d ← {t, threadof(TS_d)}.
			return share(SharedModified2, c, a, c.TS, a.Locks, env), false
		}
		if hb {
			c.TS = a.TS
			c.Threads = env.AddThread(c.Threads, a.Thread) // choice 8
			return c, false
		}
		if a.Locks != 0 {
			// TS_d ← TS_t, C_d ← L_t, S_d ← {t, threadof(old TS_d)}.
			return share(SharedModified2, c, a, a.TS, a.Locks, env), false
		}
		return race(c)

	case SharedModified2:
		locks := env.Intersect(c.Locks, a.Locks)
		if locks != 0 {
			c.Locks = locks
			c.Threads = env.AddThread(c.Threads, a.Thread) // choice 8
			return c, false
		}
		if env.HappensBefore(c.TS, a) {
			c.Locks = 0
			c.Threads = env.AddThread(c.Threads, a.Thread)
			return toExclReadWrite(c, a), false
		}
		return race(c)
	}
	panic("msm: unreachable state " + c.State.String() + " in MSM-long")
}

// toExclReadWrite moves c (whose Threads is already updated) into
// Exclusive-ReadWrite owned by the current access: TS_d ← TS_t, no lockset.
func toExclReadWrite(c Cell, a Access) Cell {
	return Cell{State: ExclReadWrite, TS: a.TS, Threads: c.Threads}
}
