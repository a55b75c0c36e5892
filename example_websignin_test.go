package mcpadapter_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"os"

	"github.com/mcpadapter/mcpadapter"
)

// ExampleWebSignIn signs in each user of a web service to an MCP server
// that wants a token of their own, with one Client for all of them: a
// user with no token gets the URL of their sign-in at once, and the
// service's callback completes it for the user it has authenticated.
func ExampleWebSignIn() {
	signIn, err := mcpadapter.NewWebSignIn(&mcpadapter.WebSignInOptions{
		Issuer:       "https://auth.example.com",
		ClientID:     "my-app",
		ClientSecret: os.Getenv("MCP_CLIENT_SECRET"),
		RedirectURL:  "https://app.example.com/oauth/callback",
		StateKey:     []byte(os.Getenv("MCP_STATE_KEY")), // 32 bytes, the same on every replica
		Store:        mcpadapter.NewMemoryTokenStore(),   // redisstore or pgstore for replicas
	})
	if err != nil {
		log.Fatal(err)
	}
	defer signIn.Close()
	c, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &mcpadapter.ClientOptions{Auth: signIn})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	// The service's own authentication of the browser.
	user := func(r *http.Request) string { return r.Header.Get("X-Authenticated-User") }
	http.HandleFunc("/oauth/callback", func(w http.ResponseWriter, r *http.Request) {
		if err := signIn.Complete(r.Context(), user(r), r.URL.Query()); err != nil {
			http.Error(w, "that sign-in did not work; please start again", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})

	// A request of alice's:
	ctx := mcpadapter.WithCallIdentity(context.Background(), &mcpadapter.CallIdentity{Principal: "alice"})
	_, err = c.Tools(ctx)
	var need *mcpadapter.SignInRequiredError
	if errors.As(err, &need) {
		log.Printf("send %s to %s, then ask again", need.Principal, need.URL)
	}
}
