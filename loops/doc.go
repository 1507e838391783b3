// Package loops finds the loops of a rewritten binary that matter for
// synchronisation: natural loops on the whole-binary control-flow graph,
// wait-enclosing loops (loops whose body calls a condition-variable wait,
// dissertation chapter 6) with a static recovery of the wait's arguments,
// and spinning-read loops (dissertation chapter 7.2, algorithm 3). It is
// pure logic over a cfg.Graph and a decoder; it does no I/O.
//
// # Natural loops
//
// Per function (cfg.Func, its reached blocks), edges are the fall-through
// and jump successors inside the function (calls are not edges; a block
// ending in a call has its return site as successor). Dominators come from
// the Cooper-Harvey-Kennedy iterative algorithm over a virtual root whose
// children are the function entry and every block control can reach in a
// way the graph has no edge for: blocks without predecessors, and blocks
// that start at a strong leader no direct jump or conditional
// fall-through explains (jump-table targets, landing pads, code pointers).
// This keeps dominance sound, at the price of missing loops that are only
// closed through a jump table. A back edge is n->h with h dominating n; the
// loop body is h plus the blocks reaching n without passing h; loops with
// the same header are merged. Retreating edges of irreducible regions make
// no loop. Parent is the innermost enclosing loop (the smallest loop of the
// function containing the header), Depth counts from 1. Exits are the
// successor edges of loop blocks that leave the loop (to another block of
// the function, or out of it). All work is per function and near linear;
// /usr/bin/node (1.9M blocks, 40k loops) takes about 1.5s.
//
// # Wait-enclosing loops
//
// A wait call is a direct call through the PLT, an indirect call through a
// GOT slot, or a direct call to a function of the binary, whose target
// IsWait: pthread_cond_wait, pthread_cond_timedwait,
// pthread_cond_clockwait, cnd_wait, cnd_timedwait (symbol versions
// ignored), or any wait*/__wait* member of std::condition_variable or
// std::condition_variable_any in the libstdc++ or libc++ mangling. That
// covers the libstdc++ import std::condition_variable::wait(unique_lock&)
// (_ZNSt18condition_variable4waitERSt11unique_lockISt5mutexE) and the
// templates instantiated in the program: the predicate wait(lock, pred)
// (at -O0 a template instance holding the loop; at -O2 inlined into the
// caller, which then loops around the import), wait_until/wait_for (at -O0
// a wait_until template the loop calls; at -O2 inlined down to a direct
// pthread_cond_clockwait), and condition_variable_any's waits. A small
// loop-free function of the binary that passes its own rdi and rsi to a
// wait is a wait too (a wrapper such as libuv's uv_cond_wait, which node
// uses everywhere); WaitCall.Callee is then the wrapper, WaitCall.Import
// the wait it calls.
//
// A wait loop is a natural loop of at most WaitBlocks blocks and WaitBytes
// bytes containing a wait call. Nested loops (listing 6.5, and the nested
// machine loops a multi-condition `while (a && b)` may become, listing 8.2):
// the innermost loop around each wait is reported, and each enclosing loop
// within the limits that has an exit edge none of the reported loops inside
// it has. As in the dissertation, every such loop end is a synchronisation
// point; an enclosing loop whose exits are all exits of inner ones adds
// nothing and is left out. A WaitLoop lists the waits of its whole body,
// nested loops included. Both loop shapes of figure 6.5 (condition on top
// entered by a jump, or rotated with the test at the bottom) are natural
// loops with one header; a condition that is a function call is just a
// call in the loop.
//
// # Wait parameters
//
// For each wait, rdi (the condition variable, or `this`) and rsi (the
// mutex, or for libstdc++/libc++ waits the std::unique_lock) are traced
// backwards: through the call's block, the loop body up to the header, and
// then before the loop along every path to the function entry, rewriting
// the traced expression at each definition: register moves, lea
// d(%rip) (Const), lea d(%reg), mov $imm, add/sub $imm, push/pop/leave for
// rsp, 8-byte loads (Load, or LoadPlus when a constant was added to the
// loaded pointer, as -O0 does for &p->field), and stores to the loaded slot
// (so -O0 code that keeps a pointer in a stack slot is followed to what was
// stored there). Paths must agree. The result is the deepest rewriting that
// is valid at every loop exit even when the body never ran: its register
// and memory slot are written neither in the loop nor between the point
// where it was found and the loop entry. Calls clobber rax, rcx, rdx, rsi,
// rdi, r8-r11 (so only rbx, rbp, r12-r15 and rsp can be RegPlus or Load
// bases across the wait itself); rsp must not move in the loop except by
// calls. Calls are assumed not to write the memory a Load reads, and
// stores through a different base register are assumed not to alias it.
// Const is preferred whenever the trace reaches one. Anything else is
// Unknown, with the reason in Why.
//
// # Spinning-read loops
//
// Natural loops of at most SpinBlocks blocks (default 7, table 9.2) that
// contain no wait call. Every exit edge must leave from a conditional jump;
// its condition (the flags of the last flag-writing instruction, or rcx
// for jrcxz) is sliced backwards through the iteration: registers, the
// flags, 8/16-bit partial writes, setcc/cmov, stack slots of the frame
// (rbp-based in a frame-pointer function, rsp-based when rsp does not move
// in the loop), and the return value of small callees. A value reaching the
// header is loop-invariant if nothing in the loop writes it, else it is
// loop-carried and the loop is rejected (induction variables, figure 7.9's
// list walk, memcpy-like loops). Any other memory read is a spin load; its
// address must be loop-invariant. The loop is a spinning-read loop if no
// exit condition is loop-carried or otherwise unknown, at least one depends
// on a load, and nothing the loop (or a callee it calls) stores may
// overlap a condition load: same fixed address, or same invariant base and
// overlapping displacement; a store or load whose address is not known
// symbolically (indexed, computed) may overlap anything; stores through
// different known bases are assumed not to alias.
//
// Choices:
//   - Atomic read-modify-writes (xchg, lock cmpxchg, lock xadd, lock-prefixed
//     ops) are loads that also store to the same address, so a loop whose
//     condition is their result is rejected: a test-and-set loop
//     `while (test_and_set(&l));` or a CAS loop writes the memory it spins
//     on and is not a spinning read (dissertation 7.2.1: the TAS reads and
//     writes lock_flag). In test-and-test-and-set the inner `while (flag);`
//     loop is a spinning-read loop and the outer xchg loop is not. Atomic
//     loads are plain moves on x86-64 and count as loads.
//   - Calls to imports (sched_yield, nanosleep, usleep, sleep,
//     pthread_yield, pthread_mutex_lock/unlock, any other) are assumed not
//     to write the condition memory; they clobber the caller-saved
//     registers. A direct call to a function of the binary of at most
//     CalleeInsts instructions that calls only imports is looked into: its
//     stores count as the loop's, its clobbers are the registers it really
//     writes (gcc's -fipa-ra relies on that), and when its return value
//     feeds the condition, its loads are spin loads (their addresses may
//     depend on arguments, which must be invariant in the caller). Loops
//     calling larger functions, functions that call others, or through
//     function pointers are rejected.
//   - Figure 7.10 (`do { lock; c = COND; unlock; sleep; } while (!c)`) is
//     found at -O0 and -O2: the stack copy of c written in the iteration
//     from the load of COND is followed like a register.
//   - Loads of stack slots are not spin loads: an unwritten slot is an
//     invariant value, a slot written in the iteration passes its value on.
//   - Thread-local (fs/gs) reads and vector registers make a condition
//     unknown.
//
// SpinLoop.Loads are the load instructions (in the loop or in callees),
// Conds their addresses for listings, Consts the fixed addresses among them
// (also when an invariant register or slot holding the address was set
// from a constant before the loop): the rewriter treats other stores to
// them as counterpart writes.
//
// # Limitations
//
// The graph has no jump-table edges, so loops closed only through a switch
// are missed or split. Code in .cold parts is a separate function, so exits
// through it are missed. Irreducible loops are not loops. Parameter
// recovery and the spin test assume calls and differently based stores do
// not write the slots they rely on. Without Input.Decode, wait parameters
// are Unknown and no spinning-read loop is reported.
package loops
