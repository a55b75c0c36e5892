package schemaprofile_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// A server's input schema made fit for OpenAI's strict mode: the optional
// argument becomes required and nullable, and the changes are listed.
// Result.Restore turns the model's null back into an absent argument.
func Example() {
	schema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"days":{"type":"integer"}},"required":["city"]}`)
	res, err := schemaprofile.Apply(schemaprofile.OpenAIStrict, schema)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(res.Schema))
	fmt.Println("strict:", res.Strict)
	for _, c := range res.Changes {
		fmt.Printf("%s at %q\n", c.Rule, c.Path)
	}
	// Output:
	// {"type":"object","properties":{"city":{"type":"string"},"days":{"type":["integer","null"]}},"required":["city","days"],"additionalProperties":false}
	// strict: true
	// additional-properties-false at ""
	// optional-nullable at "/properties/days"
}
