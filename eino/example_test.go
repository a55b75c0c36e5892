package eino_test

import (
	"encoding/json"
	"fmt"

	"github.com/cloudwego/eino/schema"

	"github.com/mcpadapter/mcpadapter/eino"
)

func ExampleToolParams() {
	// A draft-07 input schema, as a pydantic v1 server sends it.
	raw := json.RawMessage(`{
		"type": "object",
		"properties": {
			"city": {"$ref": "#/definitions/City", "x-order": 0},
			"days": {"type": "integer", "minimum": 0, "exclusiveMinimum": true}
		},
		"definitions": {"City": {"type": "string", "enum": ["Paris", "Oslo"]}}
	}`)
	params, err := eino.ToolParams(raw)
	if err != nil {
		panic(err)
	}
	info := &schema.ToolInfo{Name: "forecast", Desc: "Weather forecast", ParamsOneOf: params}

	js, _ := info.ToJSONSchema()
	b, _ := json.Marshal(js)
	fmt.Println(string(b))
	// Output:
	// {"$defs":{"City":{"enum":["Paris","Oslo"],"type":"string"}},"properties":{"city":{"$ref":"#/$defs/City","x-order":0},"days":{"exclusiveMinimum":0,"type":"integer"}},"type":"object"}
}
