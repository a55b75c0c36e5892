package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestLoop runs the example's agent loop against the loopback fake: the
// model calls both tools in one turn, the MCP server answers, the fake
// checked every request, and the final text is built from the results.
func TestLoop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, false, "fake-model"); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	transcript := out.String()
	for _, want := range []string{
		"assistant calls get_weather {\"city\":\"Paris\"} [fc_1]",
		"assistant calls get_population {\"city\":\"Paris\"}",
		"tool get_weather [fc_1]",
		"The weather in Paris: Sunny, 21 °C.",
		"Paris has 2.1 million inhabitants.",
		"assistant: From the tools: get_weather says \"The weather in Paris: Sunny, 21 °C.\"; get_population says \"Paris has 2.1 million inhabitants.\".",
	} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %q:\n%s", want, transcript)
		}
	}
}
