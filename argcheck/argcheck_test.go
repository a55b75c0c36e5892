package argcheck_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/argcheck"
)

const weatherSchema = `{"type":"object","properties":{
	"city":{"type":"string","minLength":2},
	"days":{"type":"integer","minimum":1,"maximum":14},
	"units":{"enum":["metric","imperial"]},
	"stops":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},
	"required":["city"],"additionalProperties":false}`

func TestValidateNamesEachArgument(t *testing.T) {
	s, err := argcheck.Compile(json.RawMessage(weatherSchema))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(json.RawMessage(`{"city":"Paris","days":3,"units":"metric","stops":[{"name":"a"}]}`)); err != nil {
		t.Fatalf("valid arguments refused: %v", err)
	}
	err = s.Validate(json.RawMessage(`{"days":30,"units":"kelvin","stops":[{"name":"a"},{}],"colour":"red"}`))
	var e *argcheck.Error
	if !errors.As(err, &e) {
		t.Fatalf("want *argcheck.Error, got %v", err)
	}
	var got []string
	for _, p := range e.Problems {
		got = append(got, p.String())
	}
	want := []string{
		"$.city: required, missing",
		"$.days: expected a number <= 14, got 30",
		`$.units: expected one of ["metric", "imperial"], got a string ("kelvin")`,
		"$.stops[1].name: required, missing",
		"$.colour: unexpected property; the allowed properties are city, days, units, stops",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateAnyOfNamesTheNearBranch(t *testing.T) {
	s, err := argcheck.Compile(json.RawMessage(`{"type":"object","properties":{"when":{"anyOf":[
		{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},{"type":"null"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(json.RawMessage(`{"when":"tomorrow"}`))
	if err == nil || !strings.Contains(err.Error(), `$.when: expected a string matching the pattern ^[0-9]{4}-[0-9]{2}-[0-9]{2}$, got a string ("tomorrow")`) {
		t.Fatalf("got %v", err)
	}
	err = s.Validate(json.RawMessage(`{"when":5}`))
	if err == nil || !strings.Contains(err.Error(), `$.when: expected a string or null, got an integer (5)`) {
		t.Fatalf("got %v", err)
	}
}

// TestUnknownKeywordsAccept: what the checker cannot apply never refuses.
func TestUnknownKeywordsAccept(t *testing.T) {
	for _, schema := range []string{
		`{"type":"string","pattern":"^(?!admin).*$"}`,
		`{"not":{"type":"string","pattern":"(?=x)"}}`,
		`{"$ref":"https://example.com/other.json"}`,
		`{"type":"object","unevaluatedProperties":false}`,
		`{"type":"string","format":"email"}`,
	} {
		s, err := argcheck.Compile(json.RawMessage(schema))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Validate(json.RawMessage(`"admin"`)); err != nil && !strings.Contains(schema, `"type":"object"`) {
			t.Errorf("%s refused \"admin\": %v", schema, err)
		}
		if strings.Contains(schema, "format") {
			continue
		}
		if len(s.Ignored()) == 0 {
			t.Errorf("%s: nothing listed as ignored", schema)
		}
	}
}

func TestArgPaths(t *testing.T) {
	for ptr, want := range map[string]string{"": "$", "/a/0/b c": `$.a[0]["b c"]`, "/x~1y": `$["x/y"]`, "/snake_case/kebab-case": "$.snake_case.kebab-case"} {
		if got := (argcheck.Problem{Path: ptr}).Arg(); got != want {
			t.Errorf("Arg(%q) = %s, want %s", ptr, got, want)
		}
	}
}

func ExampleSchema_Validate() {
	s, _ := argcheck.Compile(json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`))
	fmt.Println(s.Validate(json.RawMessage(`{"city":12}`)))
	// Output: argcheck: invalid arguments: $.city: expected a string, got an integer (12)
}
