package mcpadapter_test

import "testing"

// traceForms are texts a tool call carries, each with one secret (S3CR
// and a number) in a form the redaction must see through: letters (?i)
// folds (the Kelvin sign, the long s), mixed and upper case, percent-
// encoded names, JSON escapes (\u003d for "=", \u0065yJ for "eyJ"),
// Authorization headers as a dump and as JSON text writes them, JWTs in
// URL fragments, and JSON documents inside a string. They are JSON string contents, as the request holds
// them.
var traceForms = []string{
	`https://h/x?\u212Aey=S3CR-01&a=1`,
	`https://h/x?pa\u017F\u017Fword=S3CR-02`,
	`login ACCESS_TOKEN=S3CR-03 ok`,
	`https://h/x?Client_Secret=S3CR-04`,
	`https://h/x?api_key\u003dS3CR-05`,
	`https://h/x?to%6Ben=S3CR-06`,
	`https://h/x?%61ccess_token=S3CR-07`,
	`\u0065yJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-08`,
	`https://h/cb#eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-09`,
	`https://h/cb#id_token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.S3CR-10&state=s`,
	`GET / HTTP/1.1\nauthorization: Custom S3CR-11\nhost: h`,
	`{\"Authorization\": \"Custom S3CR-12\"}`,
	`Proxy-Authorization: Custom S3CR-13`,
	`GET / HTTP/1.1\nAUTHORIZATION: Custom S3CR-14`,
	`GET / HTTP/1.1\nAuthoriZation: Custom S3CR-15`,
	`Bearer S3CR-16`,
	`BEARER S3CR-17`,
	`https://h/x?a=1\u0026code=S3CR-18`,
	`{\"api_key\": \"S3CR-19\", \"n\": 1}`,
	`{\"headers\":{\"Authorization\":[\"Custom S3CR-20\"]}}`,
	`[\"{\\\"password\\\":\\\"S3CR-21\\\"}\"]`,
}

// A traced call carrying a secret in each of traceForms, echoed back by
// the server (so it is traced both ways), shows none of them.
func TestHostileTraceRedactionForms(t *testing.T) {
	testTracedEchoes(t, []string{"stdio", "in-process"}, traceForms, []string{"mcp recv"}, len(traceForms))
}
