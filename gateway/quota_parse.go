package gateway

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseLimitRule reads a LimitRule written as serve's --limit flag takes
// it: comma-separated key=value pairs of name, principal, server, tool,
// per (principal, server and tool joined with "+"), rate (N/DURATION, as
// "100/1m"), burst and concurrent. It checks the syntax only; New checks
// the rule.
func ParseLimitRule(s string) (LimitRule, error) {
	var r LimitRule
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return r, fmt.Errorf("%q is not k=v", kv)
		}
		var err error
		switch k {
		case "name":
			r.Name = v
		case "principal":
			r.Principal = v
		case "server":
			r.Server = v
		case "tool":
			r.Tool = v
		case "per":
			r.Per = strings.ReplaceAll(v, "+", ",")
		case "rate":
			n, d, ok := strings.Cut(v, "/")
			if !ok {
				return r, fmt.Errorf("rate %q: want N/DURATION, e.g. 100/1m", v)
			}
			if r.Rate, err = strconv.Atoi(n); err == nil {
				r.Period, err = time.ParseDuration(d)
			}
		case "burst":
			r.Burst, err = strconv.Atoi(v)
		case "concurrent":
			r.Concurrent, err = strconv.Atoi(v)
		default:
			return r, fmt.Errorf("unknown key %q (want name, principal, server, tool, per, rate, burst, concurrent)", k)
		}
		if err != nil {
			return r, fmt.Errorf("%s: %v", k, err)
		}
	}
	return r, nil
}
