package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
	"google.golang.org/genai"
)

// DefaultMaxParallel is how many function calls of one turn run at once
// unless Options.MaxParallel says otherwise.
const DefaultMaxParallel = 8

// Options configures New; nil means the defaults.
type Options struct {
	// Profile is the schema profile: schemaprofile.Gemini (the default,
	// sent as Parameters) or schemaprofile.Verbatim (sent unchanged as
	// ParametersJsonSchema).
	Profile schemaprofile.Profile
	// MaxParallel bounds the calls one Run runs at once
	// (default DefaultMaxParallel).
	MaxParallel int
}

// A Toolset is MCP tools as Gemini function declarations.
type Toolset struct {
	byName      map[string]*entry
	order       []*entry
	maxParallel int
}

type entry struct {
	tool    *mcpadapter.Tool
	profile *schemaprofile.Result
	decl    *genai.FunctionDeclaration
}

// New passes every tool's input schema through the profile. A schema the
// profile cannot read, or that does not fit genai.Schema, is an error
// naming the server, the tool and the JSON path.
func New(tools []*mcpadapter.Tool, opts *Options) (*Toolset, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Profile == "" {
		o.Profile = schemaprofile.Gemini
	}
	switch o.Profile {
	case schemaprofile.Gemini, schemaprofile.Verbatim:
	default:
		return nil, fmt.Errorf("gemini: profile %q is not for Gemini (want %q or %q)",
			o.Profile, schemaprofile.Gemini, schemaprofile.Verbatim)
	}
	if o.MaxParallel <= 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	s := &Toolset{byName: map[string]*entry{}, maxParallel: o.MaxParallel}
	for _, t := range tools {
		r, err := schemaprofile.Apply(o.Profile, t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("gemini: server %q tool %q: %w", t.Server, t.Name, err)
		}
		decl := &genai.FunctionDeclaration{Name: t.Name, Description: t.Description}
		if o.Profile == schemaprofile.Verbatim {
			decl.ParametersJsonSchema = json.RawMessage(r.Schema)
		} else {
			var more []schemaprofile.Change
			if decl.Parameters, more, err = Schema(r.Schema); err != nil {
				return nil, fmt.Errorf("gemini: server %q tool %q: %w", t.Server, t.Name, err)
			}
			r.Changes = append(r.Changes, more...)
			noArguments(decl)
		}
		if _, dup := s.byName[t.Name]; dup {
			return nil, fmt.Errorf("gemini: two tools named %q (server %q)", t.Name, t.Server)
		}
		e := &entry{tool: t, profile: r, decl: decl}
		s.byName[t.Name] = e
		s.order = append(s.order, e)
	}
	return s, nil
}

// noArguments drops the parameters of a tool without properties: Gemini
// rejects an OBJECT without properties ("should be non-empty for OBJECT
// type"), and a declaration without parameters is how it spells "no
// arguments". A root description moves to the declaration's.
func noArguments(d *genai.FunctionDeclaration) {
	p := d.Parameters
	if p == nil || p.Type != genai.TypeObject || len(p.Properties) > 0 || len(p.AnyOf) > 0 {
		return
	}
	if p.Description != "" {
		d.Description = strings.TrimSpace(d.Description + " " + p.Description)
	}
	d.Parameters = nil
}

// Profile returns what the profile did to the named tool's schema (its
// Changes are the losses), or nil for an unknown name.
func (s *Toolset) Profile(name string) *schemaprofile.Result {
	if e := s.byName[name]; e != nil {
		return e.profile
	}
	return nil
}

// FunctionDeclarations returns the tools' declarations.
func (s *Toolset) FunctionDeclarations() []*genai.FunctionDeclaration {
	out := make([]*genai.FunctionDeclaration, 0, len(s.order))
	for _, e := range s.order {
		out = append(out, e.decl)
	}
	return out
}

// Tool returns one genai.Tool holding every declaration, for
// GenerateContentConfig.Tools.
func (s *Toolset) Tool() *genai.Tool {
	return &genai.Tool{FunctionDeclarations: s.FunctionDeclarations()}
}

// A SchemaError is a Gemini-profile schema that does not fit genai.Schema.
type SchemaError struct {
	// Path is the JSON Pointer of the offending value.
	Path string
	Err  error
}

func (e *SchemaError) Error() string {
	p := e.Path
	if p == "" {
		p = "(root)"
	}
	return fmt.Sprintf("schema at %s: %v", p, e.Err)
}

func (e *SchemaError) Unwrap() error { return e.Err }

// Schema converts a schema written by the Gemini profile into a
// genai.Schema: type names upper-cased ("string" → STRING), every other
// keyword into its field. A number genai.Schema cannot hold (a bound
// beyond float64, a length that is no int64) goes into the description,
// and the returned changes say so (rule keyword-to-description, path in
// the profile's output). A keyword genai.Schema has no field for is a
// *SchemaError naming its path (the profile never writes one).
func Schema(profiled json.RawMessage) (*genai.Schema, []schemaprofile.Change, error) {
	d := json.NewDecoder(bytes.NewReader(profiled))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, nil, &SchemaError{Err: fmt.Errorf("not JSON: %w", err)}
	}
	w := &walker{}
	if err := w.walk(v, "", 0); err != nil {
		return nil, nil, err
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, nil, &SchemaError{Err: err}
	}
	var out genai.Schema
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&out); err != nil {
		return nil, nil, &SchemaError{Err: fmt.Errorf("does not fit genai.Schema: %w", err)}
	}
	return &out, w.changes, nil
}

// maxDepth bounds the walk (the profile already bounds nesting at 256).
const maxDepth = 512

type walker struct{ changes []schemaprofile.Change }

// walk visits the schema and its subschemas (properties, items, anyOf):
// it upper-cases each "type" and moves numbers that do not fit their
// genai.Schema field into the description.
func (w *walker) walk(v any, path string, depth int) error {
	if depth > maxDepth {
		return &SchemaError{Path: path, Err: fmt.Errorf("nested deeper than %d", maxDepth)}
	}
	o, ok := v.(map[string]any)
	if !ok {
		return &SchemaError{Path: path, Err: fmt.Errorf("a schema must be a JSON object, not %T", v)}
	}
	if t, has := o["type"]; has {
		ts, ok := t.(string)
		gt, known := geminiTypes[ts]
		if !ok || !known {
			return &SchemaError{Path: path + "/type", Err: fmt.Errorf("type %v is not a Gemini type", t)}
		}
		o["type"] = gt
	}
	w.numbers(o, path)
	if props, has := o["properties"]; has {
		m, ok := props.(map[string]any)
		if !ok {
			return &SchemaError{Path: path + "/properties", Err: fmt.Errorf("properties must be an object")}
		}
		for k, sub := range m {
			if err := w.walk(sub, path+"/properties/"+escape(k), depth+1); err != nil {
				return err
			}
		}
	}
	if items, has := o["items"]; has {
		if err := w.walk(items, path+"/items", depth+1); err != nil {
			return err
		}
	}
	if alts, has := o["anyOf"]; has {
		list, ok := alts.([]any)
		if !ok {
			return &SchemaError{Path: path + "/anyOf", Err: fmt.Errorf("anyOf must be an array")}
		}
		for i, sub := range list {
			if err := w.walk(sub, fmt.Sprintf("%s/anyOf/%d", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// numberKeys are genai.Schema's numeric fields: true for the int64
// ones, false for the float64 ones.
var numberKeys = map[string]bool{
	"minimum": false, "maximum": false,
	"minItems": true, "maxItems": true, "minLength": true, "maxLength": true,
	"minProperties": true, "maxProperties": true,
}

func (w *walker) numbers(o map[string]any, path string) {
	for _, k := range sortedKeys(o) {
		isInt, ok := numberKeys[k]
		if !ok {
			continue
		}
		if fits(o[k], isInt) {
			continue
		}
		text := fmt.Sprintf("%s: %v.", k, o[k])
		if desc, ok := o["description"].(string); ok && desc != "" {
			text = desc + " " + text
		}
		o["description"] = text
		w.changes = append(w.changes, schemaprofile.Change{
			Rule: schemaprofile.RuleToDescription, Path: path + "/" + k,
			Detail: fmt.Sprintf("%s %v does not fit genai.Schema; written into the description (path in the gemini profile's output)", k, o[k]),
		})
		delete(o, k)
	}
}

func fits(v any, isInt bool) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	if isInt {
		i, err := strconv.ParseInt(string(n), 10, 64)
		return err == nil && i >= 0
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return err == nil && !math.IsInf(f, 0)
}

func sortedKeys(o map[string]any) []string {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

var geminiTypes = map[string]genai.Type{
	"string": genai.TypeString, "number": genai.TypeNumber, "integer": genai.TypeInteger,
	"boolean": genai.TypeBoolean, "array": genai.TypeArray, "object": genai.TypeObject, "null": genai.TypeNULL,
}

// escape writes a property name as a JSON Pointer token.
func escape(s string) string {
	var b []byte
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '~':
			b = append(b, "~0"...)
		case '/':
			b = append(b, "~1"...)
		default:
			b = append(b, s[i])
		}
	}
	return string(b)
}
