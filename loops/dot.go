package loops

import (
	"fmt"
	"sort"
	"strings"

	"hgrewrite/cfg"
)

// Dot renders function fn's control-flow graph in Graphviz syntax with its
// loops highlighted: wait-loop blocks blue, spinning-read-loop blocks
// orange, other loop blocks grey, headers with a double border, exit edges
// red and dashed, wait calls and spin conditions in the labels.
func (r *Result) Dot(g *cfg.Graph, fn int) string {
	var sb strings.Builder
	if fn < 0 || fn >= len(g.Funcs) {
		return "digraph empty {}\n"
	}
	f := &g.Funcs[fn]
	name := f.Name
	if name == "" {
		name = fmt.Sprintf("0x%x", f.Start)
	}
	fmt.Fprintf(&sb, "digraph %q {\n\tnode [shape=box fontname=monospace fontsize=10];\n", name)
	fmt.Fprintf(&sb, "\tlabel=%q;\n", name)
	inFunc := map[int]bool{}
	for _, b := range f.Blocks {
		inFunc[b] = true
	}
	// Loops of the function, innermost last so that they win.
	type role struct {
		color string
		notes []string
	}
	roles := map[int]*role{}
	headers := map[uint64]bool{}
	exits := map[[2]uint64]bool{}
	var mine []int
	for li := range r.Loops {
		if r.Loops[li].Func == fn {
			mine = append(mine, li)
		}
	}
	sort.Slice(mine, func(i, j int) bool { return r.Loops[mine[i]].Depth < r.Loops[mine[j]].Depth })
	kind := map[int]string{}
	waitOf := map[int]*WaitLoop{}
	for i := range r.Waits {
		kind[r.Waits[i].Loop] = "wait"
		waitOf[r.Waits[i].Loop] = &r.Waits[i]
	}
	spinOf := map[int]*SpinLoop{}
	for i := range r.Spins {
		kind[r.Spins[i].Loop] = "spin"
		spinOf[r.Spins[i].Loop] = &r.Spins[i]
	}
	for _, li := range mine {
		L := &r.Loops[li]
		headers[L.Header] = true
		color := "lightgrey"
		switch kind[li] {
		case "wait":
			color = "lightblue"
		case "spin":
			color = "orange"
		}
		for _, b := range L.Blocks {
			if roles[b] == nil {
				roles[b] = &role{}
			}
			if kind[li] != "" || roles[b].color == "" || roles[b].color == "lightgrey" {
				roles[b].color = color
			}
		}
		for _, e := range L.Exits {
			exits[[2]uint64{g.Blocks[e.From].Start, e.To}] = true
		}
		h := g.BlockAt(L.Header)
		if roles[h] == nil {
			roles[h] = &role{color: color}
		}
		note := fmt.Sprintf("loop %d (depth %d)", li, L.Depth)
		if s := spinOf[li]; s != nil {
			note += " spin: " + strings.Join(s.Conds, ", ")
		}
		roles[h].notes = append(roles[h].notes, note)
		if w := waitOf[li]; w != nil {
			for _, wc := range w.Waits {
				b := g.BlockAt(wc.Addr)
				if roles[b] == nil {
					roles[b] = &role{color: color}
				}
				roles[b].notes = append(roles[b].notes,
					fmt.Sprintf("0x%x: %s cv=%s mutex=%s", wc.Addr, shortName(wc.Callee), wc.CV, wc.Mutex))
			}
		}
	}
	for _, b := range f.Blocks {
		blk := &g.Blocks[b]
		label := fmt.Sprintf("0x%x-0x%x", blk.Start, blk.End)
		attrs := ""
		if ro := roles[b]; ro != nil {
			for _, n := range ro.notes {
				label += "\\n" + escape(n)
			}
			attrs = fmt.Sprintf(" style=filled fillcolor=%s", ro.color)
		}
		if headers[blk.Start] {
			attrs += " peripheries=2"
		}
		fmt.Fprintf(&sb, "\tb%x [label=\"%s\"%s];\n", blk.Start, label, attrs)
	}
	for _, b := range f.Blocks {
		blk := &g.Blocks[b]
		for _, s := range blk.Succs {
			t := g.BlockAt(s)
			attr := ""
			if exits[[2]uint64{blk.Start, s}] {
				attr = " [color=red style=dashed label=exit]"
			}
			if t < 0 || g.Blocks[t].Start != s || !inFunc[t] {
				fmt.Fprintf(&sb, "\tx%x [label=\"0x%x\" shape=plaintext];\n", s, s)
				fmt.Fprintf(&sb, "\tb%x -> x%x%s;\n", blk.Start, s, attr)
				continue
			}
			fmt.Fprintf(&sb, "\tb%x -> b%x%s;\n", blk.Start, s, attr)
		}
	}
	sb.WriteString("}\n")
	return sb.String()
}

func shortName(s string) string {
	if i := strings.IndexByte(s, '@'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

func escape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
