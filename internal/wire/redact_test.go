package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

func TestRedactJSON(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`{"params":{"arguments":{"token":"s3cret","q":"x"}}}`, `{"params":{"arguments":{"q":"x","token":"[REDACTED]"}}}`},
		{`{"headers":{"Authorization":"Bearer abc.def"}}`, `{"headers":{"Authorization":"[REDACTED]"}}`},
		{`{"password":{"nested":"hidden"}}`, `{"password":"[REDACTED]"}`},
		{`["Bearer abc", {"api_key": 5}]`, `["Bearer [REDACTED]",{"api_key":"[REDACTED]"}]`},
		{`{"text":"use basic dXNlcjpwYXNz now","n":12345678901234567890}`, `{"n":12345678901234567890,"text":"use basic [REDACTED] now"}`},
		{`not json`, `<not JSON>`},
	} {
		if got := RedactJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("RedactJSON(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestRedactURLSecrets(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{`Post "https://h/mcp?api_key=k3y&x=1": dial tcp: refused`, `Post "https://h/mcp?api_key=[REDACTED]&x=1": dial tcp: refused`},
		{`https://h/cb?code=abc&state=s&access_token=t0k`, `https://h/cb?code=[REDACTED]&state=s&access_token=[REDACTED]`},
		{`https://h/mcp?page=2`, `https://h/mcp?page=2`},
		{`no url at all`, `no url at all`},
	} {
		if got := RedactURLSecrets(tc.in); got != tc.want {
			t.Errorf("RedactURLSecrets(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Secrets in less common places are redacted too.
func TestRedactJSONMissed(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		// Short secret names, as whole words of the member name.
		{`{"auth":"a1","key":"k1","private_key":"p1","pwd":"w1","pass":"s1","jwt":"j1","otp":"o1"}`,
			`{"auth":"[REDACTED]","jwt":"[REDACTED]","key":"[REDACTED]","otp":"[REDACTED]","pass":"[REDACTED]","private_key":"[REDACTED]","pwd":"[REDACTED]"}`},
		{`{"X-Auth":"a","authKey":"b","userPwd":"c","OTP":123456,"JWTValue":"d","privateKey":"e","apiKeys":["f"]}`,
			`{"JWTValue":"[REDACTED]","OTP":"[REDACTED]","X-Auth":"[REDACTED]","apiKeys":"[REDACTED]","authKey":"[REDACTED]","privateKey":"[REDACTED]","userPwd":"[REDACTED]"}`},
		// ... but not inside other words.
		{`{"author":"Ann","keyboard":"qwerty","compass":"N","passage":"p","monkey":"m"}`,
			`{"author":"Ann","compass":"N","keyboard":"qwerty","monkey":"m","passage":"p"}`},
		// Objects and arrays under a secret name; null and booleans kept.
		{`{"token":{"value":"t1","expires":3},"secrets":[{"v":"s2"}],"auth":null,"otp":true}`,
			`{"auth":null,"otp":true,"secrets":"[REDACTED]","token":"[REDACTED]"}`},
		// Secret parameters inside strings.
		{`{"text":"go to https://h/cb?code=c0de&state=s then https://h/x#access_token=t0k&type=bearer"}`,
			`{"text":"go to https://h/cb?code=[REDACTED]\u0026state=s then https://h/x#access_token=[REDACTED]\u0026type=bearer"}`},
		{`{"body":"grant_type=authorization_code&code=c0de&client_secret=s3c"}`,
			`{"body":"grant_type=authorization_code\u0026code=[REDACTED]\u0026client_secret=[REDACTED]"}`},
		{`{"log":"login password=hunter2 ok"}`, `{"log":"login password=[REDACTED] ok"}`},
		{`{"msg":"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl here"}`, `{"msg":"jwt [REDACTED] here"}`},
		// A JSON document inside a string is redacted as one.
		{`{"text":"{\"api_key\":\"k1\",\"n\":1}"}`, `{"text":"{\"api_key\":\"[REDACTED]\",\"n\":1}"}`},
		{`{"body":" {\"headers\": {\"Authorization\": [\"Custom a1\"]}} "}`, `{"body":"{\"headers\":{\"Authorization\":\"[REDACTED]\"}}"}`},
		{`{"text":"[\"{\\\"password\\\": \\\"p1\\\"}\"]"}`, `{"text":"[\"{\\\"password\\\":\\\"[REDACTED]\\\"}\"]"}`},
		{`{"text":"{not json: password=p2}"}`, `{"text":"{not json: password=[REDACTED]"}`},
	} {
		if got := RedactJSON([]byte(tc.in)); got != tc.want {
			t.Errorf("RedactJSON(%s)\n = %s\nwant %s", tc.in, got, tc.want)
		}
	}
}

// TestRedactEveryScheme: the credentials of every authorization scheme
// are hidden, in a trace (JSON strings) and in error text: the schemes
// by name, and anything after "Authorization:" whatever its scheme.
func TestRedactEveryScheme(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`DPoP at-0pAqUe`, `DPoP [REDACTED]`},
		{`Bearer at-0pAqUe`, `Bearer [REDACTED]`},
		{`basic dXNlcjpwYXNz`, `basic [REDACTED]`},
		{`Authorization: Token t0k3n-v4lue`, `Authorization: Token [REDACTED]`},
		{`Authorization: Custom k=v, sig=abc`, `Authorization: Custom [REDACTED]`},
		{`proxy-authorization: Negotiate YIIB`, `proxy-authorization: Negotiate [REDACTED]`},
		{`request had authorization=0pAqUe and more`, `request had authorization=[REDACTED] and more`},
		{`map[Accept:[*/*] Authorization:[Whatever 0pAqUe]]`, `map[Accept:[*/*] Authorization:[REDACTED]`},
		{"GET / HTTP/1.1\nauthorization: Custom 0pAqUe\nhost: x", "GET / HTTP/1.1\nauthorization: Custom [REDACTED]\nhost: x"},
		{`the server refused authorization: HTTP 401 Unauthorized`, `the server refused authorization: HTTP 401 Unauthorized`},
		{"GET / HTTP/1.1\nAUTHORIZATION: Custom 0pAqUe", "GET / HTTP/1.1\nAUTHORIZATION: Custom [REDACTED]"},
		{`h: 1, "AuthoriZation": "Custom 0pAqUe"`, `h: 1, "AuthoriZation": "Custom [REDACTED]"`},
		{`PROXY-AUTHORIZATION: 0pAqUe`, `PROXY-AUTHORIZATION: [REDACTED]`},
		{`Digest username="u", response="6629fae4"`, `Digest [REDACTED]`},
		{`no credentials here`, `no credentials here`},
	} {
		if got := RedactURLSecrets(tc.in); got != tc.want {
			t.Errorf("RedactURLSecrets(%q) = %q, want %q", tc.in, got, tc.want)
		}
		doc, _ := json.Marshal(map[string]string{"text": tc.in})
		var out map[string]string
		if err := json.Unmarshal([]byte(RedactJSON(doc)), &out); err != nil || out["text"] != tc.want {
			t.Errorf("RedactJSON(%s) = %v, want text %q", doc, out, tc.want)
		}
	}
}

func TestNameWords(t *testing.T) {
	for in, want := range map[string]string{
		"privateKey": "private key", "JWTToken": "jwt token", "X-Api-Key": "x api key", "user_pwd2": "user pwd2",
		"OTP": "otp", "authorName": "author name", "": "",
	} {
		if got := strings.Join(nameWords(in), " "); got != want {
			t.Errorf("nameWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// secretNames are member names whose values must never be printed.
var secretNames = []string{"token", "auth", "key", "private_key", "pwd", "pass", "jwt", "otp", "Authorization",
	"api-key", "accessToken", "client_secret", "password", "X-Auth-Token", "sessionId", "refresh_token", "cookie"}

func FuzzRedactJSON(f *testing.F) {
	f.Add(`{"params":{"arguments":{"token":"s3cret","q":"x"}}}`, uint8(0), "abc123")
	f.Add(`{"headers":{"Authorization":"Bearer abc.def"}}`, uint8(9), "x")
	f.Add(`["Bearer abc", {"api_key": 5}]`, uint8(3), "")
	f.Add(`not json`, uint8(200), "zz")
	f.Fuzz(func(t *testing.T, s string, which uint8, secret string) {
		// Any input: no panic, and JSON in gives JSON out in which no
		// secret-named member has a value but null, a boolean or
		// "[REDACTED]".
		out := RedactJSON([]byte(s))
		if json.Valid([]byte(s)) {
			var v any
			if err := json.Unmarshal([]byte(out), &v); err != nil {
				t.Fatalf("output is not JSON: %s", out)
			}
			checkRedacted(t, v, out)
		}
		// A secret in each place it can hide never comes out.
		name := secretNames[int(which)%len(secretNames)]
		marked := "S3CR" + strings.Map(func(r rune) rune {
			if r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return -1
		}, secret)
		for _, doc := range []string{
			`{"` + name + `":"` + marked + `"}`,
			`{"a":[{"` + name + `":{"value":"` + marked + `"}}]}`,
			`{"` + name + `":["` + marked + `"]}`,
			`{"text":"https://h/cb?code=` + marked + `&state=1"}`,
			`{"text":"https://h/x?a=1&access_token=` + marked + `"}`,
			`{"text":"Bearer ` + marked + `"}`,
			`{"text":"DPoP ` + marked + `"}`,
			`{"text":"Authorization: Whatever ` + marked + `"}`,
			`{"text":"x\n` + name + `: ` + marked + `"}`,
			`{"text":"{\\"` + name + `\\": \\"` + marked + `\\"}"}`,
			`{"text":"srv --` + name + ` ` + marked + `"}`,
			`{"text":"https://u:` + marked + `@h/x"}`,
			`{"text":"id_eyJhbGciOi.eyJzdWIiOi.` + marked + `"}`,
		} {
			if got := RedactJSON([]byte(doc)); strings.Contains(got, "S3CR") {
				t.Fatalf("secret leaked: %s -> %s", doc, got)
			}
		}
	})
}

func checkRedacted(t *testing.T, v any, out string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if isSensitiveKey(k) {
				switch x {
				case nil, true, false, "[REDACTED]":
				default:
					t.Fatalf("member %q kept %v: %s", k, x, out)
				}
				continue
			}
			checkRedacted(t, x, out)
		}
	case []any:
		for _, x := range v {
			checkRedacted(t, x, out)
		}
	}
}

// The names RedactURLSecrets hides match in any case, letters (?i) folds
// (the Kelvin sign, the long s) included, and percent-encoded; text with
// no "=" or no such name is returned as it is, however long.
func TestRedactURLSecretsFoldsAndSkips(t *testing.T) {
	for in, want := range map[string]string{
		"a?paſſword=hunter2&x=1":  "a?paſſword=[REDACTED]&x=1",
		"a?\u212Aey=v":            "a?\u212Aey=[REDACTED]",
		"x ACCESS_TOKEN=v":        "x ACCESS_TOKEN=[REDACTED]",
		"no equals sign: token v": "no equals sign: token v",
		"a=b&c=d":                 "a=b&c=d",
		"a?to%6Ben=v&x=1":         "a?to%6Ben=[REDACTED]&x=1",
		"a?%E2%84%AAey=v":         "a?%E2%84%AAey=[REDACTED]",
		"a?q%20x=v&b%5Fc=w":       "a?q%20x=v&b%5Fc=w",
	} {
		if got := RedactURLSecrets(in); got != want {
			t.Errorf("RedactURLSecrets(%q) = %q, want %q", in, got, want)
		}
	}
	long := strings.Repeat("eHh4", 32<<10) + "="
	if got := RedactURLSecrets(long); got != long {
		t.Errorf("a long text without a secret name changed")
	}
}
