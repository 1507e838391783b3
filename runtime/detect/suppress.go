package detect

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
)

// suppressions are the rules of a suppressions file (HG_OPTIONS
// suppressions=FILE), in ThreadSanitizer's syntax: one "type:pattern" per
// line, '#' starts a comment. A pattern matches a name when it occurs in
// it; '*' stands for any run of characters, a leading '^' anchors it to
// the name's start and a trailing '$' to its end. The names a report
// offers are its frames' functions, source files and modules, and the
// name, file and module of a global it is about.
//
// The types:
//   - race: a data race report any of whose frames (both accesses' stacks
//     and the stack after the access, not the threads' creation stacks)
//     or whose global matches;
//   - race_top: a race whose accesses' innermost frames match;
//   - called_from_lib: a race whose current or previous access was made
//     inside the named library (its innermost frame is in that module:
//     a string function it called, or an interposed call it made);
//   - thread: a race one of whose threads has a matching name or a
//     matching frame in its creation stack;
//   - deadlock: a lock-order inversion any of whose acquisition stacks
//     or mutexes matches.
//
// ThreadSanitizer's mutex: and signal: types are accepted and match
// nothing: hgrewrite has no such reports.
type suppressions struct {
	rules []suppression
	mu    sync.Mutex // guards hits
	hits  map[int]int
}

type suppression struct {
	kind    string
	pattern string
	line    int
}

var suppressionKinds = map[string]bool{
	"race": true, "race_top": true, "called_from_lib": true, "thread": true,
	"deadlock": true, "mutex": true, "signal": true,
}

// CheckSuppressions reads the suppressions file at path and says what is
// wrong with it, if anything (the runtime asks at start-up, before the
// program runs).
func CheckSuppressions(path string) error {
	_, err := readSuppressions(path)
	return err
}

// readSuppressions parses a suppressions file; an unreadable file or an
// unknown type is an error that names the line.
func readSuppressions(path string) (*suppressions, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("suppressions: %v", err)
	}
	defer f.Close()
	return parseSuppressions(f, path)
}

func parseSuppressions(f *os.File, path string) (*suppressions, error) {
	s := &suppressions{hits: map[int]int{}}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		kind, pattern, ok := strings.Cut(line, ":")
		kind, pattern = strings.TrimSpace(kind), strings.TrimSpace(pattern)
		if !ok || !suppressionKinds[kind] || pattern == "" {
			return nil, fmt.Errorf("%s:%d: %q is not type:pattern with a type among race, race_top, called_from_lib, thread, deadlock, mutex, signal", path, n, line)
		}
		s.rules = append(s.rules, suppression{kind, pattern, n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("suppressions: %s: %v", path, err)
	}
	return s, nil
}

// match says whether a rule suppresses rep, and counts the rule's use.
func (s *suppressions) match(rep *raceReport) bool {
	if s == nil {
		return false
	}
	for i, rule := range s.rules {
		if rule.matches(rep) {
			s.mu.Lock()
			s.hits[i]++
			s.mu.Unlock()
			return true
		}
	}
	return false
}

func (rule suppression) matches(rep *raceReport) bool {
	race := rep.Kind == kindRace
	switch {
	case rule.kind == "race" && race:
		return rule.anyFrame(rep.allFrames()) || rule.global(rep.Location)
	case rule.kind == "race_top" && race:
		for _, a := range rep.Accesses {
			if len(a.Stack) > 0 && rule.frame(a.Stack[0]) {
				return true
			}
		}
	case rule.kind == "called_from_lib" && race:
		for _, a := range rep.Accesses {
			if len(a.Stack) > 0 && a.Stack[0].Module != "" && templateMatch(rule.pattern, a.Stack[0].Module) {
				return true
			}
		}
	case rule.kind == "thread" && race:
		for _, t := range rep.Threads {
			if t.Name != "" && templateMatch(rule.pattern, t.Name) || rule.anyFrame(t.Created) {
				return true
			}
		}
	case rule.kind == "deadlock" && rep.Kind == kindLockOrder:
		return rule.anyFrame(rep.allFrames()) || rule.anyLock(rep.Locks)
	}
	return false
}

// allFrames is every frame of the report's accesses, of the stack after
// the access, and of a lock-order inversion's acquisitions.
func (rep *raceReport) allFrames() []Frame {
	var all []Frame
	for _, a := range rep.Accesses {
		all = append(all, a.Stack...)
	}
	for _, e := range rep.Cycle {
		all = append(all, e.Stack...)
	}
	return append(all, rep.Later...)
}

func (rule suppression) anyFrame(frames []Frame) bool {
	for _, f := range frames {
		if rule.frame(f) {
			return true
		}
	}
	return false
}

func (rule suppression) frame(f Frame) bool {
	for _, name := range []string{f.Func, f.File, f.Module} {
		if name != "" && templateMatch(rule.pattern, name) {
			return true
		}
	}
	return false
}

func (rule suppression) global(l reportLocation) bool {
	return l.Kind == "global" && (templateMatch(rule.pattern, l.Name) || l.Module != "" && templateMatch(rule.pattern, l.Module))
}

func (rule suppression) anyLock(locks []reportLock) bool {
	for _, l := range locks {
		if l.Name != "" && templateMatch(rule.pattern, l.Name) {
			return true
		}
	}
	return false
}

// used lists the rules that suppressed reports, with their counts, as
// printed at exit (stats=1 or verbosity=1).
func (s *suppressions) used() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var idx []int
	total := 0
	for i, n := range s.hits {
		idx = append(idx, i)
		total += n
	}
	sort.Ints(idx)
	var b strings.Builder
	fmt.Fprintf(&b, "hgrewrite: %d report(s) suppressed\n", total)
	for _, i := range idx {
		r := s.rules[i]
		fmt.Fprintf(&b, "hgrewrite: %d %s:%s (line %d)\n", s.hits[i], r.kind, r.pattern, r.line)
	}
	return b.String()
}

// templateMatch matches a suppression pattern against name: '*' is any
// run of characters, '^' at the start and '$' at the end anchor the
// pattern; without anchors it may match anywhere in name.
func templateMatch(pattern, name string) bool {
	start := strings.HasPrefix(pattern, "^")
	pattern = strings.TrimPrefix(pattern, "^")
	end := strings.HasSuffix(pattern, "$")
	pattern = strings.TrimSuffix(pattern, "$")
	parts := strings.Split(pattern, "*")
	// The first part must sit at the start when anchored; every later
	// part is found leftmost after the one before it, which finds a
	// match whenever there is one; the last part must end the name
	// when anchored.
	pos := 0
	for i, part := range parts {
		last := i == len(parts)-1
		switch {
		case i == 0 && start:
			if !strings.HasPrefix(name, part) {
				return false
			}
			pos = len(part)
		case last && end:
			return len(name)-len(part) >= pos && strings.HasSuffix(name, part)
		default:
			k := strings.Index(name[pos:], part)
			if k < 0 {
				return false
			}
			pos += k + len(part)
		}
	}
	return !end || pos == len(name)
}
