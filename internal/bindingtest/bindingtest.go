// Package bindingtest holds what the tests of the binding modules (openai,
// anthropic, gemini, langchaingo, genkit) share: an adapter's tools,
// listed from a target, closed when the test ends.
package bindingtest

import (
	"context"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// Tools returns the tools of an adapter for target (opts may be nil),
// listed within 30 seconds; the adapter is closed when t ends. Any error
// fails t.
func Tools(t testing.TB, target any, opts *mcpadapter.Options) []*mcpadapter.Tool {
	t.Helper()
	a, err := mcpadapter.New(target, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tools, err := a.Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}
