module github.com/mcpadapter/mcpadapter/gateway

go 1.26.0

require (
	github.com/mcpadapter/mcpadapter v0.1.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/yosida95/uritemplate/v3 v3.0.2
)

require golang.org/x/tools v0.48.0 // indirect

require (
	github.com/go-jose/go-jose/v4 v4.1.9
	github.com/google/jsonschema-go v0.4.3 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/segmentio/encoding v0.5.4
	golang.org/x/oauth2 v0.35.0
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/sys v0.48.0 // indirect
	golang.org/x/time v0.15.0 // indirect
)
