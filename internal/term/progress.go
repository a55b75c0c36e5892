package term

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	// redrawEvery is the least time between two redraws at a terminal
	// (about 20 a second).
	redrawEvery = 50 * time.Millisecond
	barWidth    = 20
)

// Progress reports the progress of a long call: at a terminal it redraws a
// single line, elsewhere it prints one line per update. It is safe for
// concurrent use.
type Progress struct {
	mu    sync.Mutex
	out   io.Writer
	label string
	tty   bool
	width int // the most runes a terminal line may take
	now   func() time.Time

	last    time.Time // of the last redraw
	drawn   bool      // a line is on screen
	pending string    // a throttled line not drawn yet
	spin    int
	done    bool
}

// NewProgress returns a Progress writing to out under label. isTerminal
// (see IsTerminal) picks between redrawing one line and printing plain
// lines.
func NewProgress(out io.Writer, label string, isTerminal bool) *Progress {
	width := 80
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 20 {
		width = n
	}
	return &Progress{out: out, label: cleanLine(label), tty: isTerminal, width: width - 1, now: time.Now}
}

// Update reports progress out of total (total <= 0 when unknown) with an
// optional message.
//
// At a terminal it redraws the line, e.g.
//
//	label [#########-----------] 45% message
//
// or, without a total, a turning bar and the count ("label [/] 3 message");
// redraws come at most about 20 times a second, except the one that reaches
// the total. Elsewhere it prints a line per update: "label: 3/10 message".
// Updates after Done are ignored.
func (p *Progress) Update(progress, total float64, message string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	message = cleanLine(strings.TrimSpace(message))
	if !p.tty {
		line := num(progress)
		if total > 0 {
			line += "/" + num(total)
		}
		if message != "" {
			line += " " + message
		}
		if p.label != "" {
			line = p.label + ": " + line
		}
		fmt.Fprintln(p.out, line)
		return
	}
	var b strings.Builder
	if p.label != "" {
		b.WriteString(p.label)
		b.WriteByte(' ')
	}
	final := false
	if total > 0 {
		frac := progress / total
		if math.IsNaN(frac) {
			frac = 0
		}
		frac = min(max(frac, 0), 1)
		final = progress >= total
		filled := int(frac * barWidth)
		fmt.Fprintf(&b, "[%s%s] %d%%", strings.Repeat("#", filled), strings.Repeat("-", barWidth-filled), int(frac*100))
	} else {
		fmt.Fprintf(&b, "[%c] %s", `|/-\`[p.spin%4], num(progress))
		p.spin++
	}
	if message != "" {
		b.WriteByte(' ')
		b.WriteString(message)
	}
	line := truncate(b.String(), p.width)
	now := p.now()
	if !final && p.drawn && now.Sub(p.last) < redrawEvery {
		p.pending = line
		return
	}
	p.draw(line, now)
}

func (p *Progress) draw(line string, now time.Time) {
	fmt.Fprint(p.out, "\r\x1b[2K"+line)
	p.drawn = true
	p.pending = ""
	p.last = now
}

// Done ends the progress line: at a terminal it draws the last update if
// it was held back and moves to the next line. Later calls do nothing.
func (p *Progress) Done() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if !p.tty {
		return
	}
	if p.pending != "" {
		p.draw(p.pending, p.now())
	}
	if p.drawn {
		fmt.Fprintln(p.out)
	}
}

// truncate cuts s to at most n runes, marking the cut with "…".
func truncate(s string, n int) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
