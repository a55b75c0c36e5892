package policy_test

import (
	"context"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter/gateway/policy"
)

func ExampleParse() {
	p, err := policy.Parse([]byte(`{"rules": [
		{"principals": ["alice"], "allow": ["files/*"], "deny": ["tool:files/delete_*"]}
	]}`))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	fmt.Println(p.Allow(ctx, "alice", "files", "tool", "read_file"))
	fmt.Println(p.Allow(ctx, "alice", "files", "tool", "delete_file"))
	fmt.Println(p.Allow(ctx, "bob", "files", "tool", "read_file"))
	// Output:
	// true
	// false
	// false
}
