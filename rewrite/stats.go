package rewrite

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"time"
)

// WriteStats prints the --stats counts of the rewrite; took is the time
// the whole command took.
func (r *Result) WriteStats(w io.Writer, took time.Duration) {
	s := r.Stats
	fmt.Fprintf(w, "instructions decoded:        %d\n", s.Instructions)
	fmt.Fprintf(w, "undecodable instructions:    %d\n", r.Undecodable)
	fmt.Fprintf(w, "memory instructions:         %d\n", s.MemInsts)
	pct := 0.0
	if s.MemInsts > 0 {
		pct = 100 * float64(s.Instrumented) / float64(s.MemInsts)
	}
	fmt.Fprintf(w, "instrumented:                %d (%.1f%%)\n", s.Instrumented, pct)
	fmt.Fprintf(w, "checked in a batch call:     %d (of the instrumented: one call checks a block's group)\n", s.Batched)
	fmt.Fprintf(w, "calls left in place:         %d (ending a relocated block: not emulated by push and jump)\n", s.CallsKept)
	fmt.Fprintf(w, "functions traced:            %d (entry not patchable: %d)\n", s.Traced, s.TraceSkipped)
	for _, k := range sortedKeys(s.Skipped) {
		fmt.Fprintf(w, "skipped, %-30s %d\n", k+":", s.Skipped[k])
	}
	for _, k := range sortedKeys(s.Tactics) {
		fmt.Fprintf(w, "tactic %-32s %d blocks\n", k+":", s.Tactics[k])
	}
	fmt.Fprintf(w, "basic blocks:                %d\n", len(r.Graph.Blocks))
	fmt.Fprintf(w, "functions:                   %d\n", len(r.Graph.Funcs))
	fmt.Fprintf(w, "jump tables recovered:       %d\n", r.Graph.JumpTables)
	fmt.Fprintf(w, "trampoline bytes:            %d\n", r.TextSize)
	if lr := r.Loops; lr != nil {
		fmt.Fprintf(w, "loops:                       %d\n", lr.Stats.Loops)
		fmt.Fprintf(w, "wait-enclosing loops:        %d\n", lr.Stats.WaitLoops)
		fmt.Fprintf(w, "spinning-read loops:         %d\n", lr.Stats.SpinLoops)
		fmt.Fprintf(w, "loop hooks placed:           %d (not placeable: %d)\n", s.Hooks, s.HooksSkipped)
		fmt.Fprintf(w, "loop analysis time:          %.3fs\n", r.LoopTime.Seconds())
	}
	fmt.Fprintf(w, "rewrite time:                %.3fs\n", took.Seconds())
}

// sortedKeys gives a map's keys in order, for output that does not
// depend on map iteration.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	var ks []K
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
