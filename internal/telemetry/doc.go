// Package telemetry holds the types of the server side of the root
// package's telemetry: ServerTelemetry, which observes the requests an MCP
// server built on this module (the gateway) answers, and the values it is
// given (ServerOperation, ServerSessionEnd, ServerOperationResult). The
// root re-exports each under the same name (a type alias); the otel module
// implements the interfaces and the gateway calls them. What an error's
// ErrorType is stays the root's (mcpadapter.NewServerOperationResult).
//
// It imports the standard library only: never the root, nor any package
// of this module.
package telemetry
