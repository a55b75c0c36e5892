package order

import (
	"context"
	"strconv"
	"strings"
	"sync"
)

// Over streamable HTTP a server sends a notification related to a request
// (a log message of a tools/call) on that request's own event stream, the
// response to its POST; only the standalone stream (GET) carries
// notifications of no request. go-sdk's client reads every stream into one
// queue, and its handlers learn nothing of the stream a message came on.
// So the connection's reader (internal/wire's event-stream limit) tags a
// log message read on a request's stream with the request's Stream: a
// member of the message's params' _meta named after the connection's
// nonce, which a server cannot write, since it never sees it. The client's
// receiving middleware takes the tag out before any handler sees the
// message (Marks.Untag) and puts the Stream in the handler's context
// (WithStream): a caller that shares the connection (the gateway) gives
// the message to the request whose Streams carried that Stream.

// A Stream names the event streams of one request on one connection (the
// response to its POST, and the stream that resumes it). The zero Stream
// is none: a message of the standalone stream, or of a transport without
// a stream per request.
type Stream struct {
	m *Marks
	n int64
}

// IsZero reports whether s names no stream.
func (s Stream) IsZero() bool { return s.m == nil }

// Streams records the Stream of one request, for the caller that made
// it: the connection's reader numbers the request's streams as its POST
// is made (On), and the caller asks whether a message came on them
// (Carried). A request sent anew on another connection takes a Stream
// there. Its methods are safe to call at once, and on nil.
type Streams struct {
	mu sync.Mutex
	st Stream
}

type streamsKey struct{}

// WithStreams returns ctx carrying sp, for the connection that sends a
// request made with it to fill in.
func WithStreams(ctx context.Context, sp *Streams) context.Context {
	return context.WithValue(ctx, streamsKey{}, sp)
}

// StreamsFrom returns the Streams ctx carries, or nil.
func StreamsFrom(ctx context.Context) *Streams {
	sp, _ := ctx.Value(streamsKey{}).(*Streams)
	return sp
}

// On returns the request's Stream on m's connection, numbering it there
// on first use. A nil sp (a request no caller follows, such as a
// listing) gets a Stream of its own, which no caller carried.
func (sp *Streams) On(m *Marks) Stream {
	if m == nil {
		return Stream{}
	}
	if sp == nil {
		return Stream{m: m, n: m.streams.Add(1)}
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	if sp.st.m != m {
		sp.st = Stream{m: m, n: m.streams.Add(1)}
	}
	return sp.st
}

// Carried reports whether s, the stream a message came on, is one of the
// request's (on the connection it was last sent on).
func (sp *Streams) Carried(s Stream) bool {
	if sp == nil || s.IsZero() {
		return false
	}
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.st == s
}

// How a tag was put in a message's params (the suffix of its value), so
// that taking it out gives back what the server sent: into a _meta object
// of the server's (no suffix), as a _meta member of its own
// (TagAddedMeta), or in place of a _meta that was null (TagNullMeta).
const (
	TagAddedMeta = "+"
	TagNullMeta  = "~"
)

// TagKey returns the name of the _meta member that tags a message read
// on one of the connection's request streams.
func (m *Marks) TagKey() string { return m.tagKey }

// TagLead returns the start of a tag as AppendTag writes it: the member's
// name and the opening quote of its value. The caller must not change it.
func (m *Marks) TagLead() []byte { return m.tagLead }

// AppendTag appends the _meta member that tags a message with s, its
// value's suffix how (TagAddedMeta, TagNullMeta or "").
func (s Stream) AppendTag(b []byte, how string) []byte {
	b = append(b, s.m.tagLead...)
	b = strconv.AppendInt(b, s.n, 10)
	b = append(b, how...)
	return append(b, '"')
}

// Untag takes the tag of m's connection out of meta, a message's _meta
// as decoded, and returns the Stream it names and the _meta the server
// sent (nil when the tag made it). ok is false when meta holds no tag of
// m's, and meta is returned as it is.
func (m *Marks) Untag(meta map[string]any) (s Stream, _ map[string]any, ok bool) {
	if m == nil || meta == nil {
		return Stream{}, meta, false
	}
	key := m.TagKey()
	v, found := meta[key]
	if !found {
		return Stream{}, meta, false
	}
	delete(meta, key)
	str, _ := v.(string)
	made := strings.HasSuffix(str, TagAddedMeta) || strings.HasSuffix(str, TagNullMeta)
	str = strings.TrimRight(str, TagAddedMeta+TagNullMeta)
	if made && len(meta) == 0 {
		meta = nil
	}
	n, err := strconv.ParseInt(str, 10, 64)
	if err != nil || n <= 0 {
		return Stream{}, meta, false
	}
	return Stream{m: m, n: n}, meta, true
}

type streamKey struct{}

// WithStream returns ctx carrying s, the stream of the notification whose
// handlers get ctx.
func WithStream(ctx context.Context, s Stream) context.Context {
	return context.WithValue(ctx, streamKey{}, s)
}

// StreamFrom returns, in the handler of a notification, the request
// stream it came on (WithStream); the zero Stream when it came on none.
func StreamFrom(ctx context.Context) Stream {
	s, _ := ctx.Value(streamKey{}).(Stream)
	return s
}
