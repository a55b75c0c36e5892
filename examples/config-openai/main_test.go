package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary be the config's servers too: the config
// runs this program's own executable with "serve NAME".
func TestMain(m *testing.M) {
	if len(os.Args) == 3 && os.Args[1] == "serve" {
		if err := serve(os.Args[2]); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestTurn loads the config, lists both servers' tools, and runs the turn
// against the loopback fake: one call to each server, in one turn, and an
// answer built from both results.
func TestTurn(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, &out, "", false, "fake-model", question); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		"tool people_get_population (server people): How many people live in a city.",
		"tool weather_get_forecast (server weather): Tomorrow's weather in a city.",
		`tool weather_get_forecast {"city":"Paris"}: Tomorrow in Paris: sunny, 21 °C.`,
		`tool people_get_population {"city":"Paris"}: Paris has 2.1 million inhabitants.`,
		"assistant: From the tools:",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
