package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// refRedactBearer, refRedactURLSecrets and refRedactText are
// redactBearer, RedactURLSecrets and redactText with every regexp and
// scan run on every text: the reference the prefilters (the literal parts each
// regexp's matches hold) must not change.
func refRedactBearer(s string) string {
	s = authHeader.ReplaceAllStringFunc(s, func(m string) string {
		sub := authHeader.FindStringSubmatch(m)
		if sub[2] != "" {
			return sub[1] + sub[2] + " [REDACTED]"
		}
		return sub[1] + "[REDACTED]"
	})
	return redactSchemes(s)
}

func refRedactURLSecrets(s string) string {
	s = asciiEscape.ReplaceAllStringFunc(s, func(m string) string { return unescapeASCII(m) })
	s = redactNamedValues(refRedactBearer(s))
	s = redactEscapedNames(urlSecret.ReplaceAllString(s, "${1}${2}${4}[REDACTED]${3}${5}"))
	s = urlEncodedSecret.ReplaceAllString(s, "${1}[REDACTED]")
	s = redactFlags(userinfo.ReplaceAllString(s, "${1}[REDACTED]@"))
	s = privateKey.ReplaceAllString(s, "${1}[REDACTED]${2}")
	return jwtText.ReplaceAllString(s, "[REDACTED]")
}

func refRedactText(s string) string {
	return refRedactURLSecrets(s)
}

// prefilterSeeds are texts where a prefilter could skip what its regexp
// matches: letters (?i) folds into a secret name's (the Kelvin sign, the
// long s), letters that upper or lower case alone maps onto one (dotless
// i, dotted I, U+212B), mixed case, percent-encoding, JSON escapes of "="
// and of "eyJ", header forms and JWTs in URLs.
var prefilterSeeds = []string{
	"a?\u212Aey=v1", "a?api_\u212AEY=v2", "x?pa\u017F\u017Fword=v3", "x?PA\u017FS=v4", "x?\u017Fig=v5",
	"x?s\u0131g=v6", "x?S\u0130G=v7", "x?to\u212Aen=v8", "x?\u212Bpi_key=v9", "x ToKeN=v10", "x cRedEntiAl=v11",
	"x?access%5Ftoken=v12", "x?%74oken=v13", "x?to%6Ben=v14", "x?api_key%3Dv15", `x?token\u003dv16`,
	"x?token\u003dv17", "{\"code\":\"x\",\"c\":\"?code=v18\"}", `\u0065yJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln`,
	"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "https://h/cb#eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln",
	"https://h/cb#id_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln&state=s", "_eyJhbGciOi.eyJzdWIiOi.x",
	"authorization: Custom v19", "Authorization: Token v20", `{"Authorization": "Custom v21"}`,
	"Proxy-Authorization: Custom v22", "proxy-authorization: Custom v23", "AUTHORIZATION: Custom v24",
	"Authorisation: Custom v25", "\nauthorization:v26", "[authorization: v27]", "x, authorization : \"v28\"",
	"Bearer v29", "BEARER v30", "dpop v31", "Digest username=\"u\", response=\"v32\"", "map[Authorization:[v33]]",
	"refused authorization: HTTP 401", "\xff?token=\xfe", "?t\xffoken=v34", "=", "uthorization", "eyJ", "",
	"Cookie: sid=v35", `{\"password\":\"v36\"}`, "map[X-Api-Key:[v37]]", "https://u:v38@h", "srv --token v39",
	`Bear\u0065r v40`, "id_token_eyJhbGciOi.eyJzdWIiOi.v41", `export TOKEN="v42"`, "a:\n  secret: v43",
	"X-Api-Key:\n v44", "token: |\n  v45", "-----BEGIN EC PRIVATE KEY-----\nv46\n-----END EC PRIVATE KEY-----",
	`["TOKEN=v47"]`, `-H 'Cookie: v48'`, `PASSWORD="v49 v50"`, `{'password': 'v51'}`, "curl -u a:v52",
	"x%3Ftoken%3Dv53%26a%3Db", "Bearer\u00a0v54", "digest basic v55", "Basic usage: v56", "{token:a,{token:a,",
	`"password": \\\"\"\"`, "a;token=v57", "(key=v58)",
}

// The prefilters skip no text their regexps would change: whatever the
// text, the redaction equals the one with every regexp run (a text a
// prefilter skipped wrongly would keep its credential in a trace or a
// log). Texts are checked as they are, and as a JSON string's text
// (escapes decoded by RedactJSON).
func FuzzRedactPrefilter(f *testing.F) {
	for _, s := range prefilterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := RedactURLSecrets(s), refRedactURLSecrets(s); got != want {
			t.Fatalf("RedactURLSecrets(%q)\n = %q\nwant %q (every regexp run)", s, got, want)
		}
		if got, want := redactText(s), refRedactText(s); got != want {
			t.Fatalf("redactText(%q)\n = %q\nwant %q (every regexp run)", s, got, want)
		}
		if want := mayHoldURLSecret(s); !want && urlSecret.MatchString(s) {
			t.Fatalf("mayHoldURLSecret(%q) = false, but urlSecret matches it", s)
		}
		if !mayHoldAuthHeader(s) && authHeader.MatchString(s) {
			t.Fatalf("mayHoldAuthHeader(%q) = false, but authHeader matches it", s)
		}
		doc := `{"t":"` + s + `"}`
		var v struct{ T string }
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		text := refRedactText(v.T)
		if tt := strings.TrimSpace(v.T); tt != "" && (tt[0] == '{' || tt[0] == '[') && json.Valid([]byte(tt)) {
			text = RedactJSON([]byte(tt)) // a JSON document in the string: redacted as one
		}
		want, err := json.Marshal(map[string]string{"t": text})
		if err != nil {
			t.Fatal(err)
		}
		if got := RedactJSON([]byte(doc)); got != string(want) {
			t.Fatalf("RedactJSON(%s)\n = %s\nwant %s (every regexp run)", doc, got, want)
		}
	})
}

// TestRedactPrefilterFolds checks every letter: a letter (?i) matches in
// place of a secret name's letter passes mayHoldURLSecret, in a name
// made only of such letters.
func TestRedactPrefilterFolds(t *testing.T) {
	for _, w := range urlSecretWords {
		for i, l := range w {
			for r := unicode.SimpleFold(l); r != l; r = unicode.SimpleFold(r) {
				s := "?" + w[:i] + string(r) + w[i+1:] + "=v"
				if !urlSecret.MatchString(s) {
					t.Fatalf("urlSecret does not match %q", s)
				}
				if !mayHoldURLSecret(s) {
					t.Errorf("mayHoldURLSecret(%q) = false, but urlSecret matches it", s)
				}
				if got := RedactURLSecrets(s); strings.Contains(got, "=v") {
					t.Errorf("RedactURLSecrets(%q) = %q", s, got)
				}
			}
		}
	}
}
