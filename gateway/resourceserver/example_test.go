package resourceserver_test

import (
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/mcpadapter/mcpadapter/gateway/resourceserver"
)

// A handler behind a Guard that accepts one API key: a request without it
// gets 401 and a challenge naming the protected resource metadata.
func ExampleGuard_Handler() {
	guard, err := resourceserver.New(&resourceserver.Options{
		Resource: "http://127.0.0.1:8080/mcp",
		APIKeys:  []resourceserver.APIKey{{Principal: "ci", Key: "an-api-key-of-ci-0123"}},
	})
	if err != nil {
		log.Fatal(err)
	}
	h := guard.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "hello")
	}))

	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", nil)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Println(w.Code, w.Header().Get("WWW-Authenticate"))

	r.Header.Set("Authorization", "Bearer an-api-key-of-ci-0123")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	fmt.Print(w.Code, " ", w.Body.String())
	// Output:
	// 401 Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"
	// 200 hello
}
