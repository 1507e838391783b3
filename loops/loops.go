package loops

import (
	"sort"

	"golang.org/x/arch/x86/x86asm"

	"hgrewrite/cfg"
	"hgrewrite/disasm"
)

// Defaults for Options fields left zero.
const (
	DefaultWaitBlocks  = 64
	DefaultWaitBytes   = 4096
	DefaultSpinBlocks  = 7 // dissertation, table 9.2: loops of up to seven blocks
	DefaultCalleeInsts = 40
)

// Options bound the analyses.
type Options struct {
	WaitBlocks  int // max blocks of a wait-enclosing loop; 0 means DefaultWaitBlocks
	WaitBytes   int // max bytes of a wait-enclosing loop; 0 means DefaultWaitBytes
	SpinBlocks  int // max blocks of a spinning-read loop; 0 means DefaultSpinBlocks
	CalleeInsts int // max instructions of a callee the spin analysis looks into; 0 means DefaultCalleeInsts
}

// Input is the graph and what the analyses need besides it.
type Input struct {
	Graph *cfg.Graph
	// Decode returns the full decoding of the instruction at addr (register
	// operands etc.). Without it only natural and wait loops are found:
	// wait parameters stay Unknown and no spinning-read loop is reported.
	Decode func(addr uint64) (x86asm.Inst, bool)
	PLT    map[uint64]string // PLT stub address -> imported function name
	GOT    map[uint64]string // GOT slot address -> imported name (call *slot(%rip))
}

// Exit is a control-flow edge leaving a loop.
type Exit struct {
	From   int    // index in Graph.Blocks of the loop block the edge leaves from
	To     uint64 // address outside the loop the edge goes to
	Branch bool   // true: the taken edge of From's last instruction (Jcc or Jmp); false: the fall-through edge
}

// Loop is a natural loop: all back edges to one header, merged.
type Loop struct {
	Func   int    // index in Graph.Funcs
	Header uint64 // start address of the header block
	Blocks []int  // indices into Graph.Blocks, sorted
	Bytes  int
	Exits  []Exit // sorted by From, then To (then Branch)
	Parent int    // index in Result.Loops of the innermost enclosing loop, -1 if none
	Depth  int    // 1 for an outermost loop
	// Sub marks the natural loop of a single back edge of a header that
	// has several (the merged loop is its parent). Sub-loops are only
	// candidates for spinning-read loops.
	Sub bool
}

// ValueKind says how a Value is computed.
type ValueKind uint8

const (
	Unknown ValueKind = iota
	Const             // the link-time address Addr (e.g. `lea cv(%rip),%rdi` -> Addr = address of cv)
	RegPlus           // value of register Reg plus Disp, where Reg is not modified anywhere in the loop
	// Load is the 8-byte value loaded from memory at (Reg + Disp), or from
	// link-time address Addr if Reg == 0 (rip-relative or absolute), where
	// neither Reg nor that memory slot is written in the loop.
	Load
	// LoadPlus is Load plus Add: the value loaded as for Load, with Add
	// added to it (-O0 code computing &p->field as `mov -8(%rbp),%rax;
	// add $0x30,%rax`). A consumer that does not know this kind must treat
	// it as Unknown.
	LoadPlus

	// entryReg (internal, wrapper detection only): register Reg + Disp at
	// the function entry.
	entryReg ValueKind = 100
)

// Value says how to compute a pointer argument at a loop exit, even when
// the loop body never ran.
type Value struct {
	Kind ValueKind
	Reg  x86asm.Reg // a 64-bit GPR (x86asm.RAX..x86asm.R15, or x86asm.RSP / x86asm.RBP); 0 for none
	Disp int64
	Addr uint64
	Add  int64  // LoadPlus only: added to the loaded value
	Why  string // how it was found, or why it is Unknown
}

// WaitCall is a condition wait called in a wait loop.
type WaitCall struct {
	Addr   uint64 // address of the call instruction
	Callee string // imported name, e.g. pthread_cond_wait, or the symbol of a wait function of the binary
	// Import is the wait the call amounts to, which fixes what Mutex is: a
	// pthread or C11 name (Mutex is the mutex), or a libstdc++/libc++ name
	// (Mutex is the std::unique_lock). It equals Callee except for wrappers
	// such as libuv's uv_cond_wait, where it is the import they call.
	Import string
	CV     Value // first argument (rdi): the condition variable (for std::condition_variable, `this`)
	Mutex  Value // second argument (rsi): the mutex (pthread, C11) or the std::unique_lock (libstdc++)
}

// WaitLoop is a loop whose body calls a condition wait.
type WaitLoop struct {
	Loop  int        // index in Result.Loops
	Waits []WaitCall // wait calls in the loop body, nested loops' bodies included, sorted by Addr
	// Guards are edges that skip the loop: a conditional jump before a
	// rotated loop (fig. 6.5, variant 1: `if (!cond) do wait while
	// (!cond)`) whose one side leads into the loop and whose other side
	// goes where the loop's exits go. A signal sent before the waiter
	// arrives takes this edge, so it is instrumented like an exit. From is
	// the block before the loop.
	Guards []Exit
}

// SpinLoop is a spinning-read loop.
type SpinLoop struct {
	Loop   int      // index in Result.Loops
	Loads  []uint64 // load instructions (in the loop or its callees) the exit conditions depend on, sorted
	Conds  []string // human-readable condition addresses, e.g. "0x4040 (rip)", "0x10(%rbx)"
	Consts []uint64 // link-time addresses of the condition loads from fixed addresses, sorted
	// GuardLoads are loads of the same variables in the conditional jump
	// before a rotated loop (`if (flag) do yield(); while (flag);`): when
	// the flag is set before the loop is reached, that load is the one that
	// sees the counterpart write.
	GuardLoads []uint64
}

// Stats counts what was found.
type Stats struct {
	Loops, WaitLoops, SpinLoops int
	Rejected                    int // small loops (at most SpinBlocks blocks, no wait) rejected as spinning
}

// Result is the outcome of Analyze.
type Result struct {
	Loops []Loop
	Waits []WaitLoop
	Spins []SpinLoop
	Stats Stats
	// Rejections maps a rejected small loop (index in Loops) to the reason,
	// for --list-loops and tests.
	Rejections map[int]string
}

func (o Options) withDefaults() Options {
	if o.WaitBlocks <= 0 {
		o.WaitBlocks = DefaultWaitBlocks
	}
	if o.WaitBytes <= 0 {
		o.WaitBytes = DefaultWaitBytes
	}
	if o.SpinBlocks <= 0 {
		o.SpinBlocks = DefaultSpinBlocks
	}
	if o.CalleeInsts <= 0 {
		o.CalleeInsts = DefaultCalleeInsts
	}
	return o
}

// analyzer holds the state of one Analyze call.
type analyzer struct {
	in       Input
	g        *cfg.Graph
	opt      Options
	res      *Result
	jumped   []bool  // block is the target of a direct jump somewhere
	local    []int32 // global block -> local index in the current function, -1
	decode   map[uint64]*x86asm.Inst
	callee   map[int]*calleeInfo
	wrappers map[uint64]wrapper // function start -> condition wait it is
}

// Analyze finds the natural loops of every function, the wait-enclosing
// loops and the spinning-read loops.
func Analyze(in Input, opt Options) *Result {
	a := &analyzer{in: in, g: in.Graph, opt: opt.withDefaults(),
		res: &Result{Rejections: map[int]string{}}, callee: map[int]*calleeInfo{}}
	g := a.g
	if g == nil {
		return a.res
	}
	a.jumped = make([]bool, len(g.Blocks))
	for bi := range g.Blocks {
		b := &g.Blocks[bi]
		if !b.Reached {
			continue
		}
		last := &g.Sections[b.Sec].Insts[b.Last]
		if last.Kind == disasm.Jmp || last.Kind == disasm.Jcc {
			if t := g.BlockAt(last.Target); t >= 0 && g.Blocks[t].Start == last.Target {
				a.jumped[t] = true
			}
		}
	}
	a.local = make([]int32, len(g.Blocks))
	for i := range a.local {
		a.local[i] = -1
	}
	a.findWrappers()
	for fi := range g.Funcs {
		if len(g.Funcs[fi].Blocks) < 1 {
			continue
		}
		fg := a.buildFunc(fi)
		if fg == nil {
			continue
		}
		a.analyzeFunc(fg)
		fg.release(a)
	}
	a.res.Stats.Loops = len(a.res.Loops)
	a.res.Stats.WaitLoops = len(a.res.Waits)
	a.res.Stats.SpinLoops = len(a.res.Spins)
	return a.res
}

// inst decodes one instruction fully, with a small cache: the spin and
// parameter analyses look at the same instructions several times.
func (a *analyzer) inst(in *disasm.Inst) *x86asm.Inst {
	if a.in.Decode == nil || in.Kind == disasm.Bad {
		return nil
	}
	if x, ok := a.decode[in.Addr]; ok {
		return x
	}
	if a.decode == nil || len(a.decode) > 1<<16 {
		a.decode = map[uint64]*x86asm.Inst{}
	}
	var xp *x86asm.Inst
	if x, ok := a.in.Decode(in.Addr); ok && (x.Op != 0 || in.Kind == disasm.Nop) {
		xp = &x
	}
	a.decode[in.Addr] = xp
	return xp
}

// fgraph is one function's control-flow graph over its reached blocks.
type fgraph struct {
	fi     int
	fp     bool    // rbp is a frame pointer
	blocks []int   // local -> global block index
	succ   [][]int // local successors inside the function
	pred   [][]int
	rpo    []int // reverse postorder of the blocks reachable from the roots
	order  []int // local -> position in rpo, -1 if unreachable
	idom   []int // local -> immediate dominator (local), -1 for roots; -2 unreachable
	pre    []int // dominator-tree preorder interval, for O(1) dominance tests
	post   []int
}

func (fg *fgraph) release(a *analyzer) {
	for _, b := range fg.blocks {
		a.local[b] = -1
	}
}

func (fg *fgraph) reachable(l int) bool { return fg.order[l] >= 0 }

// dominates reports whether local block h dominates local block n.
func (fg *fgraph) dominates(h, n int) bool {
	return fg.pre[h] <= fg.pre[n] && fg.post[n] <= fg.post[h]
}

// buildFunc builds the local graph and its dominator tree.
func (a *analyzer) buildFunc(fi int) *fgraph {
	g := a.g
	f := &g.Funcs[fi]
	fg := &fgraph{fi: fi, fp: f.FramePointer, blocks: f.Blocks}
	n := len(f.Blocks)
	for l, b := range f.Blocks {
		a.local[b] = int32(l)
	}
	fg.succ = make([][]int, n)
	fg.pred = make([][]int, n)
	for l, b := range f.Blocks {
		for _, s := range g.Blocks[b].Succs {
			if t := a.localAt(s); t >= 0 {
				if !containsInt(fg.succ[l], t) {
					fg.succ[l] = append(fg.succ[l], t)
					fg.pred[t] = append(fg.pred[t], l)
				}
			}
		}
	}
	// Roots: the entry, and blocks control reaches in ways the graph has
	// no edge for (jump-table targets, landing pads, code pointers).
	var roots []int
	for l, b := range f.Blocks {
		blk := &g.Blocks[b]
		if blk.Start == f.Start || l == 0 {
			roots = append(roots, l)
			continue
		}
		if len(fg.pred[l]) == 0 || g.IsLeader(blk.Start) && !a.jumped[b] && !a.fallLeader(fg, l) {
			roots = append(roots, l)
		}
	}
	fg.computeDominators(roots)
	return fg
}

// fallLeader reports whether local block l is a leader only because the
// block before it ends in a conditional jump or a call.
func (a *analyzer) fallLeader(fg *fgraph, l int) bool {
	for _, p := range fg.pred[l] {
		pb := &a.g.Blocks[fg.blocks[p]]
		if pb.End != a.g.Blocks[fg.blocks[l]].Start {
			continue
		}
		switch a.g.Sections[pb.Sec].Insts[pb.Last].Kind {
		case disasm.Jcc, disasm.Call, disasm.CallInd:
			return true
		}
	}
	return false
}

// localAt maps a successor address to a local block of the current
// function, or -1.
func (a *analyzer) localAt(addr uint64) int {
	bi := a.g.BlockAt(addr)
	if bi < 0 || a.g.Blocks[bi].Start != addr {
		return -1
	}
	return int(a.local[bi])
}

// computeDominators runs the Cooper-Harvey-Kennedy iterative algorithm from
// a virtual root above roots, then numbers the dominator tree.
func (fg *fgraph) computeDominators(roots []int) {
	n := len(fg.blocks)
	fg.order = make([]int, n)
	for i := range fg.order {
		fg.order[i] = -1
	}
	// Iterative DFS for a postorder.
	post := make([]int, 0, n)
	seen := make([]bool, n)
	type frame struct{ node, next int }
	var stack []frame
	for _, r := range roots {
		if seen[r] {
			continue
		}
		seen[r] = true
		stack = append(stack, frame{r, 0})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next < len(fg.succ[top.node]) {
				s := fg.succ[top.node][top.next]
				top.next++
				if !seen[s] {
					seen[s] = true
					stack = append(stack, frame{s, 0})
				}
				continue
			}
			post = append(post, top.node)
			stack = stack[:len(stack)-1]
		}
	}
	m := len(post)
	fg.rpo = make([]int, m)
	for i, v := range post {
		fg.rpo[m-1-i] = v
	}
	for i, v := range fg.rpo {
		fg.order[v] = i
	}
	// idom in rpo numbering; the virtual root is m.
	const undef = -1
	idom := make([]int, m+1)
	for i := range idom {
		idom[i] = undef
	}
	idom[m] = m
	isRoot := make([]bool, n)
	for _, r := range roots {
		isRoot[r] = true
	}
	intersect := func(b1, b2 int) int {
		// Larger rpo number = later; the virtual root m is the largest
		// "postorder" node, so compare on postorder = m-1-rpo, with the root
		// at postorder m.
		po := func(x int) int {
			if x == m {
				return m
			}
			return m - 1 - x
		}
		for b1 != b2 {
			for po(b1) < po(b2) {
				b1 = idom[b1]
			}
			for po(b2) < po(b1) {
				b2 = idom[b2]
			}
		}
		return b1
	}
	for changed := true; changed; {
		changed = false
		for i := 0; i < m; i++ {
			v := fg.rpo[i]
			newIdom := undef
			if isRoot[v] {
				newIdom = m
			}
			for _, p := range fg.pred[v] {
				pi := fg.order[p]
				if pi < 0 || idom[pi] == undef {
					continue
				}
				if newIdom == undef {
					newIdom = pi
				} else {
					newIdom = intersect(pi, newIdom)
				}
			}
			if newIdom != undef && idom[i] != newIdom {
				idom[i] = newIdom
				changed = true
			}
		}
	}
	fg.idom = make([]int, n)
	for i := range fg.idom {
		fg.idom[i] = -2
	}
	children := make([][]int, m+1)
	for i := 0; i < m; i++ {
		d := idom[i]
		if d == m {
			fg.idom[fg.rpo[i]] = -1
		} else {
			fg.idom[fg.rpo[i]] = fg.rpo[d]
		}
		children[d] = append(children[d], i)
	}
	fg.pre = make([]int, n)
	fg.post = make([]int, n)
	for i := range fg.pre {
		fg.pre[i], fg.post[i] = -1, -1
	}
	clock := 0
	type dfr struct{ node, next int }
	st := []dfr{{m, 0}}
	for len(st) > 0 {
		top := &st[len(st)-1]
		if top.next == 0 && top.node != m {
			fg.pre[fg.rpo[top.node]] = clock
			clock++
		}
		if top.next < len(children[top.node]) {
			c := children[top.node][top.next]
			top.next++
			st = append(st, dfr{c, 0})
			continue
		}
		if top.node != m {
			fg.post[fg.rpo[top.node]] = clock
			clock++
		}
		st = st[:len(st)-1]
	}
}

// floop is a loop under construction, in local block numbers.
type floop struct {
	header int
	body   []int // local blocks, header included
	index  int   // index in Result.Loops
	sub    bool  // the natural loop of one back edge of a header with several
}

// analyzeFunc finds the function's natural loops and classifies them.
func (a *analyzer) analyzeFunc(fg *fgraph) {
	latches := map[int][]int{}
	var headers []int
	for _, v := range fg.rpo {
		for _, h := range fg.succ[v] {
			if fg.reachable(h) && fg.dominates(h, v) {
				if _, ok := latches[h]; !ok {
					headers = append(headers, h)
				}
				latches[h] = append(latches[h], v)
			}
		}
	}
	if len(headers) == 0 {
		return
	}
	n := len(fg.blocks)
	stamp := make([]int, n)
	for i := range stamp {
		stamp[i] = -1
	}
	loops := make([]*floop, 0, len(headers))
	for k, h := range headers {
		lp := &floop{header: h, body: []int{h}}
		stamp[h] = k
		work := append([]int(nil), latches[h]...)
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			if stamp[v] == k || !fg.reachable(v) {
				continue
			}
			stamp[v] = k
			lp.body = append(lp.body, v)
			work = append(work, fg.pred[v]...)
		}
		sort.Ints(lp.body) // local order is address order
		loops = append(loops, lp)
	}
	// A header with several back edges gets, besides the merged loop, one
	// sub-loop per back edge: a spinning read often closes on the header
	// of a larger loop (a test-and-test-and-set lock: `while (word)
	// yield();` inside `for (;;) { ...; if (!xchg(&word, 1)) break; }`
	// compiles to one header with two back edges), and the merged loop
	// writes the condition's memory where the inner one does not.
	for _, h := range headers {
		if len(latches[h]) < 2 {
			continue
		}
		for _, latch := range latches[h] {
			lp := &floop{header: h, body: []int{h}, sub: true}
			seen := map[int]bool{h: true}
			work := []int{latch}
			for len(work) > 0 && len(lp.body) <= a.opt.SpinBlocks {
				v := work[len(work)-1]
				work = work[:len(work)-1]
				if seen[v] || !fg.reachable(v) {
					continue
				}
				seen[v] = true
				lp.body = append(lp.body, v)
				work = append(work, fg.pred[v]...)
			}
			if len(lp.body) > a.opt.SpinBlocks {
				continue // only ever a spinning-read candidate
			}
			sort.Ints(lp.body)
			loops = append(loops, lp)
		}
	}
	// Result order: by header address; parents from the largest loops down.
	sort.SliceStable(loops, func(i, j int) bool {
		if loops[i].header != loops[j].header {
			return loops[i].header < loops[j].header
		}
		return !loops[i].sub && loops[j].sub
	})
	base := len(a.res.Loops)
	for i, lp := range loops {
		lp.index = base + i
		a.res.Loops = append(a.res.Loops, a.makeLoop(fg, lp))
	}
	bySize := append([]*floop(nil), loops...)
	sort.SliceStable(bySize, func(i, j int) bool { return len(bySize[i].body) > len(bySize[j].body) })
	innermost := make([]int, n)
	for i := range innermost {
		innermost[i] = -1
	}
	for _, lp := range bySize {
		L := &a.res.Loops[lp.index]
		L.Parent = innermost[lp.header]
		L.Depth = 1
		if L.Parent >= 0 {
			L.Depth = a.res.Loops[L.Parent].Depth + 1
		}
		if lp.sub {
			continue // a sub-loop is a view of its parent, not a nesting level
		}
		for _, v := range lp.body {
			innermost[v] = lp.index
		}
	}
	a.classify(fg, loops)
}

func (a *analyzer) makeLoop(fg *fgraph, lp *floop) Loop {
	g := a.g
	L := Loop{Func: fg.fi, Header: g.Blocks[fg.blocks[lp.header]].Start, Parent: -1, Sub: lp.sub}
	in := map[int]bool{}
	for _, v := range lp.body {
		in[v] = true
	}
	for _, v := range lp.body {
		bi := fg.blocks[v]
		L.Blocks = append(L.Blocks, bi)
		b := &g.Blocks[bi]
		L.Bytes += int(b.End - b.Start)
		last := &g.Sections[b.Sec].Insts[b.Last]
		for k, s := range b.Succs {
			if t := a.localAt(s); t >= 0 && in[t] {
				continue
			}
			branch := (last.Kind == disasm.Jcc || last.Kind == disasm.Jmp) && k == 0
			L.Exits = append(L.Exits, Exit{From: bi, To: s, Branch: branch})
		}
	}
	sort.Slice(L.Exits, func(i, j int) bool {
		x, y := L.Exits[i], L.Exits[j]
		if x.From != y.From {
			return x.From < y.From
		}
		if x.To != y.To {
			return x.To < y.To
		}
		return !x.Branch && y.Branch
	})
	return L
}
