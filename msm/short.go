package msm

// stepShort is MSM-short (section 5.2.6, figure 5.4). States: New,
// Exclusive-Read, Exclusive-Write, Shared-Read, Shared-Modified, Race (and
// Spin, handled by Step).
func stepShort(c Cell, a Access, env Env) (Cell, bool) {
	switch c.State {
	case New:
		// TS_d ← TS_t; Exclusive-Read / Exclusive-Write; E_d ← L_t.
		return own(c, a, env), false

	case ExclWrite:
		if env.HappensBefore(c.TS, a) {
			return own(c, a, env), false
		}
		if locks := Meet(env, c.Locks, a.Locks); locks != 0 {
			// TS_d ← TS_t, C_d ← E_d ∩ L_t, S_d ← {t, threadof(old TS_d)}.
			return share(SharedModified, c, a, a.TS, locks, env), false
		}
		return race(c)

	case ExclRead:
		hb := env.HappensBefore(c.TS, a)
		if hb {
			return own(c, a, env), false // choice 4 for a read
		}
		locks := Meet(env, c.Locks, a.Locks)
		if !a.Write {
			// Keep TS_d (choice 3), C_d ← E_d ∩ L_t, S_d ← {t, threadof(TS_d)}.
			return share(SharedRead, c, a, c.TS, locks, env), false
		}
		if locks != 0 {
			return share(SharedModified, c, a, a.TS, locks, env), false
		}
		return race(c)

	case SharedRead:
		locks := env.Intersect(c.Locks, a.Locks)
		if !a.Write {
			// No happens-before test on a read.
			c.Locks = locks
			c.Threads = env.AddThread(c.Threads, a.Thread)
			return c, false
		}
		// Choice 1: race only when the write is parallel to TS_d and no
		// lock protects it (C_d ∩ L_t = ∅). Choice 2: TS_d ← TS_t.
		if locks != 0 || env.HappensBefore(c.TS, a) {
			return Cell{State: SharedModified, TS: a.TS, Locks: locks,
				Threads: env.AddThread(c.Threads, a.Thread)}, false
		}
		return race(c)

	case SharedModified:
		locks := env.Intersect(c.Locks, a.Locks)
		if locks != 0 {
			c.Locks = locks
			c.Threads = env.AddThread(c.Threads, a.Thread) // choice 8
			if a.Write {
				c.TS = a.TS // TS_d follows the writes (package doc, choice 12)
			}
			return c, false
		}
		if env.HappensBefore(c.TS, a) {
			return exclusiveFor(a), false
		}
		return race(c)
	}
	panic("msm: unreachable state " + c.State.String() + " in MSM-short")
}
