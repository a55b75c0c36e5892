package mcpadapter_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/testauth"
)

// ExampleOAuth signs in to a server protected by OAuth. Here the "browser"
// follows the authorization URL itself; an application would print it or
// open a browser, and keep tokens with NewFileTokenStore.
func ExampleOAuth() {
	as, err := testauth.New(testauth.Options{MCP: weatherServer()})
	if err != nil {
		log.Fatal(err)
	}
	defer as.Close()

	browser := func(ctx context.Context, authURL string) error {
		resp, err := http.Get(authURL) // the user consents; the server redirects back
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	c, err := mcpadapter.NewClient(as.MCPURL, &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{OpenURL: browser, Store: mcpadapter.NewMemoryTokenStore()},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tools, err := c.ListTools(context.Background())
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tools[0].Name)
	// Output: get_forecast
}
