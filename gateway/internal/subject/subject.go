// Package subject carries the access token a client presented to the
// gateway, verified by its resource server, from the resource server to
// the gateway's token exchanges, on a context and nowhere else: the key is
// unexported, the value is never logged, and no package outside the
// gateway's module can read it.
package subject

import "context"

type key struct{}

// token is the verified access token; its String keeps it out of any
// text a context is printed into.
type token struct{ raw string }

func (token) String() string { return "[access token]" }

// With returns ctx carrying raw, the access token a request presented
// and the resource server accepted ("" carries none).
func With(ctx context.Context, raw string) context.Context {
	if raw == "" {
		return ctx
	}
	return context.WithValue(ctx, key{}, token{raw})
}

// From returns the access token With put on ctx, or "".
func From(ctx context.Context) string {
	t, _ := ctx.Value(key{}).(token)
	return t.raw
}
