package order

import (
	"context"
	"testing"
)

// TestStreams: a request's Streams number its streams once per
// connection, and carry only that connection's stream; a request no
// caller follows gets a stream no Streams carries; Untag takes only its
// own connection's tag, and gives back the _meta the server sent.
func TestStreams(t *testing.T) {
	m, n := New(), New()
	sp := new(Streams)
	ctx := WithStreams(context.Background(), sp)
	s := StreamsFrom(ctx).On(m)
	if s.IsZero() || StreamsFrom(ctx).On(m) != s || !sp.Carried(s) {
		t.Fatalf("stream %v not kept", s)
	}
	other := StreamsFrom(context.Background()).On(m)
	if other == s || sp.Carried(other) || sp.Carried(Stream{}) {
		t.Error("a stream of no one's was carried")
	}
	if (*Streams)(nil).Carried(s) || !(*Streams)(nil).On(nil).IsZero() {
		t.Error("a nil Streams carried a stream")
	}
	sn := sp.On(n) // sent anew on another connection
	if sp.Carried(s) || !sp.Carried(sn) {
		t.Error("the stream of the connection the request left is still carried")
	}

	for _, how := range []string{"", TagAddedMeta, TagNullMeta} {
		tag := string(s.AppendTag(nil, how))
		meta := map[string]any{tag[1 : len(m.TagKey())+1]: tag[len(m.TagKey())+4 : len(tag)-1]}
		if _, _, ok := n.Untag(map[string]any{m.TagKey(): "1"}); ok {
			t.Error("another connection's tag was taken")
		}
		got, left, ok := m.Untag(meta)
		if !ok || got != s {
			t.Errorf("tag %s: %v %v, want %v", tag, got, ok, s)
		}
		if (how == "") != (left != nil) {
			t.Errorf("tag %s left %v", tag, left)
		}
	}
	if _, _, ok := m.Untag(map[string]any{m.TagKey(): "x"}); ok {
		t.Error("a bad tag was taken")
	}
	if StreamFrom(WithStream(context.Background(), s)) != s || !StreamFrom(context.Background()).IsZero() {
		t.Error("StreamFrom wrong")
	}
}
