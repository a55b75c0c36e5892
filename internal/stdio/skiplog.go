package stdio

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/wire"
)

// LogSkip returns an OnSkip that logs to log a line of stdout that was
// skipped, or a summary of the lines skipped without a record each (they
// are rate-limited: a server printing a million lines makes a few
// records), with secrets hidden as wire.RedactURLSecrets does.
func LogSkip(log *slog.Logger) func(Skip) {
	return func(s Skip) {
		// A server may print what it was sent (a header, its config) to
		// stdout: the line is logged with its secrets hidden, as errors
		// show a server's stderr.
		s.Line = wire.RedactURLSecrets(s.Line)
		if s.Err != nil {
			s.Err = errors.New(wire.RedactURLSecrets(s.Err.Error()))
		}
		switch {
		case s.Suppressed > 0:
			log.Warn("server wrote more lines to stdout that were skipped (non-JSON, or responses that could not be decoded); not logged one by one",
				"skipped", s.Suppressed, "last", s.Line)
		case s.Err != nil:
			log.Warn("server sent a response that could not be decoded; its call fails", "error", s.Err, "line", s.Line)
		default:
			log.Warn("server wrote a non-JSON line to stdout (logs belong on stderr); skipped", "line", s.Line)
		}
	}
}

// Skip reports a line of stdout that the connection skipped, or, in a
// summary, how many more it skipped without reporting each.
type Skip struct {
	// Line is the line, cut to 200 bytes; in a summary, the last line
	// skipped.
	Line string
	// Err is nil for a line that is not a JSON-RPC message (usually a log
	// line printed to stdout). Otherwise the line was a response that
	// could not be decoded, Err says why, and the call it answers failed
	// with that reason.
	Err error
	// Suppressed is zero for one line. In a summary it counts the lines
	// skipped since the last report that were not reported one by one.
	Suppressed int
}

// How skipped lines are reported (Transport.OnSkip): the first skipBurst
// of every skipInterval one by one, then one summary at the end of the
// interval with the number of the others.
const (
	skipBurst    = 10
	skipInterval = 10 * time.Second
)

// skipLog rate-limits the reports of skipped lines: a server that prints a
// million lines to stdout makes a few log records, not a million. A nil
// *skipLog, or one without a report function, reports nothing.
type skipLog struct {
	report   func(Skip)
	interval time.Duration // skipInterval

	mu     sync.Mutex
	start  time.Time   // when the current interval began
	shown  int         // lines reported one by one in it
	hidden int         // lines not reported since the last summary
	last   Skip        // the last of those
	timer  *time.Timer // the pending summary, if any
}

func newSkipLog(report func(Skip)) *skipLog {
	return &skipLog{report: report, interval: skipInterval}
}

// add reports s now or counts it for the next summary.
func (l *skipLog) add(s Skip) {
	if l == nil || l.report == nil {
		return
	}
	now := time.Now()
	l.mu.Lock()
	if now.Sub(l.start) >= l.interval {
		l.start, l.shown = now, 0
	}
	if l.shown < skipBurst {
		l.shown++
		l.mu.Unlock()
		l.report(s)
		return
	}
	l.hidden++
	l.last = s
	if l.timer == nil {
		l.timer = time.AfterFunc(l.start.Add(l.interval).Sub(now), l.flush)
	}
	l.mu.Unlock()
}

// flush reports the lines not reported yet, in one summary.
func (l *skipLog) flush() {
	if l == nil || l.report == nil {
		return
	}
	l.mu.Lock()
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	n, last := l.hidden, l.last
	l.hidden, l.last = 0, Skip{}
	l.mu.Unlock()
	if n > 0 {
		last.Suppressed = n
		l.report(last)
	}
}
