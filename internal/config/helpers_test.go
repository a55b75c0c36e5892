package config

import (
	"encoding/json"
	"errors"
)

// testEnv is the environment of the tests.
var testEnv = map[string]string{
	"TOKEN": "t0k3n",
	"HOST":  "example.com",
	"EMPTY": "",
	"BIN":   "/usr/local/bin/server",
}

func lookupTestEnv(name string) (string, bool) {
	v, ok := testEnv[name]
	return v, ok
}

// parse parses doc with lookupTestEnv and returns its problems, if any,
// as one error.
func parse(doc []byte) (*Document, error) {
	d, problems := Parse(doc, Options{Lookup: lookupTestEnv})
	var errs []error
	for _, p := range problems {
		errs = append(errs, errors.New(p.String()))
	}
	return d, errors.Join(errs...)
}

func dump(v any) string {
	b, _ := json.MarshalIndent(v, "", "  ")
	return string(b)
}
