package servername

import (
	"regexp"
	"strings"
	"testing"
)

var modelNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// FuzzToolName checks that any prefix and name give a name model APIs
// take, the same each time, never the name of another tool, and a valid
// name unchanged.
func FuzzToolName(f *testing.F) {
	f.Add("weather", "get_forecast")
	f.Add("", "get-sum")
	f.Add("my.server", "tools/search")
	f.Add("", "")
	f.Add("x", strings.Repeat("é", 70))
	f.Add("", "天気")
	f.Add("", "予報")
	f.Add("srv", "get.forecast")
	f.Fuzz(func(t *testing.T, prefix, name string) {
		got := ToolName(prefix, name)
		if !modelNameRE.MatchString(got) {
			t.Fatalf("ToolName(%q, %q) = %q, outside [A-Za-z0-9_-]{1,64}", prefix, name, got)
		}
		if again := ToolName(prefix, name); again != got {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		// A name that had to be changed never takes the name of the tool
		// already called what it was changed to (天気 and 予報 both
		// sanitise to "______").
		plain := []byte(name)
		for i, c := range plain {
			if !nameByte(c) {
				plain[i] = '_'
			}
		}
		if string(plain) != name && len(plain) > 0 {
			if other := ToolName(prefix, string(plain)); other == got {
				t.Fatalf("ToolName(%q, %q) and ToolName(%q, %q) are both %q", prefix, name, prefix, plain, got)
			}
		}
		if full := prefix + "_" + name; prefix != "" && modelNameRE.MatchString(full) && got != full {
			t.Fatalf("a valid name changed: %q became %q", full, got)
		}
	})
}
