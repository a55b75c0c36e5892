package stdio

import "sync"

// lineRing keeps the last n lines written to it.
type lineRing struct {
	mu    sync.Mutex
	lines []string
	next  int
	full  bool
}

func newLineRing(n int) *lineRing {
	if n <= 0 {
		n = DefaultStderrLines
	}
	return &lineRing{lines: make([]string, n)}
}

func (r *lineRing) add(line string) {
	const maxLine = 500
	if len(line) > maxLine {
		line = line[:maxLine] + "…"
	}
	r.mu.Lock()
	r.lines[r.next] = line
	r.next = (r.next + 1) % len(r.lines)
	if r.next == 0 {
		r.full = true
	}
	r.mu.Unlock()
}

// snapshot returns the kept lines, oldest first.
func (r *lineRing) snapshot() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.full {
		return append([]string(nil), r.lines[:r.next]...)
	}
	out := make([]string, 0, len(r.lines))
	out = append(out, r.lines[r.next:]...)
	return append(out, r.lines[:r.next]...)
}
