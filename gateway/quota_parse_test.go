package gateway

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// FuzzParseLimitRule: ParseLimitRule never panics; a rule it reads reads
// the same when written back, and New's check of it does not panic.
func FuzzParseLimitRule(f *testing.F) {
	for _, s := range []string{
		"name=per-user,per=principal,rate=600/1m,burst=50,concurrent=8",
		"tool=search_*,per=principal+tool,rate=10/1s",
		"concurrent=1",
		"rate=1",
		"rate=x/1m",
		"rate=1/0s",
		"rate=3/1ns",
		"per=principal,,",
		"per=nobody",
		"name==",
		"tool=[",
		"server=a,b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseLimitRule(s)
		if err != nil {
			return
		}
		_, _ = checkRule(r)
		var parts []string
		for _, kv := range [][2]string{{"name", r.Name}, {"principal", r.Principal}, {"server", r.Server}, {"tool", r.Tool}, {"per", strings.ReplaceAll(r.Per, ",", "+")}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+"="+kv[1])
			}
		}
		if r.Rate != 0 || r.Period != 0 {
			parts = append(parts, fmt.Sprintf("rate=%d/%s", r.Rate, r.Period))
		}
		if r.Burst != 0 {
			parts = append(parts, fmt.Sprintf("burst=%d", r.Burst))
		}
		if r.Concurrent != 0 {
			parts = append(parts, fmt.Sprintf("concurrent=%d", r.Concurrent))
		}
		if len(parts) == 0 {
			return
		}
		again, err := ParseLimitRule(strings.Join(parts, ","))
		if err != nil || again != r {
			t.Fatalf("%q read as %+v; written back as %q it reads %+v, %v", s, r, strings.Join(parts, ","), again, err)
		}
	})
}

// TestLimitRuleChecks: New refuses rules that cannot work, naming each.
func TestLimitRuleChecks(t *testing.T) {
	for _, tc := range []struct {
		rule LimitRule
		want string
	}{
		{LimitRule{Per: "principal"}, "neither Rate nor Concurrent"},
		{LimitRule{Rate: 5}, "needs a Period"},
		{LimitRule{Rate: 5, Period: time.Nanosecond}, "microsecond"},
		{LimitRule{Concurrent: -1}, "negative"},
		{LimitRule{Concurrent: 1, Per: "session"}, `per "session"`},
		{LimitRule{Concurrent: 1, Tool: "["}, "pattern"},
	} {
		_, err := newQuota(&Limits{Rules: []LimitRule{tc.rule}}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.rule, err, tc.want)
		}
	}
	_, err := newQuota(&Limits{Rules: []LimitRule{{Name: "a", Concurrent: 1}, {Name: "a", Rate: 1, Period: time.Second}}}, nil)
	if err == nil || !strings.Contains(err.Error(), `another rule is named "a"`) {
		t.Errorf("two rules named a: %v", err)
	}
}
