package mcpadapter_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter"
)

// ExampleOAuth signs in to a server protected by OAuth, as a command-line
// program does: the user opens the printed URL, signs in, and the
// authorization server sends the browser back to a loopback address the
// client serves for the moment. Tokens are kept in a file, so the next run
// signs in without the user (refreshing them when they expire).
func ExampleOAuth() {
	path, err := mcpadapter.DefaultTokenFile() // ~/.config/mcpadapter/tokens.json
	if err != nil {
		log.Fatal(err)
	}
	c, err := mcpadapter.NewClient("https://mcp.example.com/mcp", &mcpadapter.ClientOptions{
		Auth: &mcpadapter.OAuth{
			OpenURL: func(_ context.Context, authURL string) error {
				fmt.Println("Sign in:", authURL)
				return nil
			},
			Store: mcpadapter.NewFileTokenStore(path),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	tools, err := c.Tools(context.Background()) // the first request signs in
	if err != nil {
		log.Fatal(err) // an *AuthorizationError names the server and the reason
	}
	for _, t := range tools {
		fmt.Println(t.Name)
	}
}
