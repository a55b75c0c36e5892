// Command client is an MCP conformance client built on mcpadapter.
//
// The official conformance suite (@modelcontextprotocol/conformance) runs it
// once per client scenario as
//
//	client <server-url>
//
// with the scenario's name in $MCP_CONFORMANCE_SCENARIO, scenario data (for
// instance pre-registered OAuth credentials, or the tool calls to make) as a
// JSON object in $MCP_CONFORMANCE_CONTEXT, and the protocol version the
// suite runs at in $MCP_CONFORMANCE_PROTOCOL_VERSION. The suite watches the
// wire; the client only has to do what the scenario expects and exit 0, or
// exit 1 with the reason on stderr.
//
// It is a port of go-sdk's own conformance/everything-client, with every
// request made through mcpadapter: mcpadapter.NewClient with ClientOptions
// handlers, Client.Tools and Tool.Call, Client.ListResources and friends,
// the ElicitInterrupt mode (Tool.Call returning an *InputRequiredError and
// Tool.Resume) for the multi-round-trip scenario, and the adapter's own
// OAuth flow (mcpadapter.OAuth) for the authorization-code auth/*
// scenarios (with OAuth.DPoPKey for the DPoP ones), ClientCredentials,
// JWTBearer and EnterpriseAuth for the other auth extensions (go-sdk's
// extauth handler through ClientOptions.OAuthHandler for
// auth/client-credentials-basic), and Client.Skills and Client.Skill for
// the skills scenarios.
//
// See ../README.md for how to run the suite against it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"
)

// scenarioTimeout bounds one scenario; the suite kills the client after 30
// seconds by default.
const scenarioTimeout = 25 * time.Second

// A scenario drives one conformance scenario against the server at url.
// sc holds $MCP_CONFORMANCE_CONTEXT (nil when unset).
type scenario func(ctx context.Context, url string, sc scenarioContext) error

// scenarios maps the suite's scenario names to their drivers.
var scenarios = map[string]scenario{
	"initialize":                            runInitialize,
	"tools_call":                            runToolsCall,
	"request-metadata":                      runRequestMetadata,
	"elicitation-sep1034-client-defaults":   runElicitationDefaults,
	"sse-retry":                             runSSERetry,
	"json-schema-ref-no-deref":              runJSONSchemaRefNoDeref,
	"json-schema-2020-12-preservation":      runJSONSchemaPreservation,
	"sep-2322-client-request-state":         runRequestState,
	"http-standard-headers":                 runHTTPStandardHeaders,
	"http-custom-headers":                   runHTTPCustomHeaders,
	"http-invalid-tool-headers":             runHTTPInvalidToolHeaders,
	"auth/client-credentials-basic":         runClientCredentials,
	"auth/client-credentials-jwt":           runClientCredentialsJWT,
	"auth/wif-jwt-bearer":                   runWorkloadIdentity,
	"auth/enterprise-managed-authorization": runEnterprise,
	"auth/dpop":                             runDPoP,
	"auth/dpop-nonce":                       runDPoP,
	"sep-2640-client-no-prefetch":           runSkillsList,
	"sep-2640-client-verify-digest":         runSkillsLoad,
	"sep-2640-client-verify-size":           runSkillsLoad,
	"sep-2640-client-verify-frontmatter":    runSkillsLoad,
}

func init() {
	// Every auth/* scenario is the same client: authorize with the
	// authorization-code flow when the server asks, then list tools and
	// call "test-tool". The suite's mock authorization server decides what
	// is being tested.
	for _, name := range authScenarios {
		scenarios[name] = runAuth
	}
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("conformance-client: ")
	// The adapter's own logs (reconnects, probe fallbacks) go to stderr,
	// which the suite saves next to its checks.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))

	if len(os.Args) != 2 {
		usage("usage: %s <server-url>", os.Args[0])
	}
	url := os.Args[1]
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	if name == "" {
		usage("MCP_CONFORMANCE_SCENARIO is not set")
	}
	run, ok := scenarios[name]
	if !ok {
		usage("unknown scenario %q", name)
	}
	sc, err := readContext()
	if err != nil {
		log.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), scenarioTimeout)
	defer cancel()
	log.Printf("scenario %q, server %s, protocol version %q", name, url, os.Getenv("MCP_CONFORMANCE_PROTOCOL_VERSION"))
	err = run(ctx, url, sc)
	calls.report()
	if err != nil {
		cancel()
		log.Fatalf("scenario %q failed: %v", name, err)
	}
}

func usage(format string, args ...any) {
	names := make([]string, 0, len(scenarios))
	for n := range scenarios {
		names = append(names, n)
	}
	sort.Strings(names)
	log.Fatalf("%s\nscenarios:\n  %s", fmt.Sprintf(format, args...), strings.Join(names, "\n  "))
}

// scenarioContext is $MCP_CONFORMANCE_CONTEXT.
type scenarioContext struct {
	// ClientID and ClientSecret are pre-registered OAuth credentials
	// (auth/pre-registration).
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// Issuer is the authorization server the credentials are registered
	// with, when the suite names it.
	Issuer string `json:"issuer"`
	// PrivateKeyPEM signs the client assertion
	// (auth/client-credentials-jwt).
	PrivateKeyPEM string `json:"private_key_pem"`
	// ValidJWT is the workload's identity token (auth/wif-jwt-bearer).
	ValidJWT string `json:"valid_jwt"`
	// The enterprise identity provider, the client there, and the user's
	// ID token (auth/enterprise-managed-authorization).
	IdPClientID      string `json:"idp_client_id"`
	IdPIDToken       string `json:"idp_id_token"`
	IdPIssuer        string `json:"idp_issuer"`
	IdPTokenEndpoint string `json:"idp_token_endpoint"`
	// ToolCalls are the calls to make (http-custom-headers).
	ToolCalls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"toolCalls"`
}

func readContext() (scenarioContext, error) {
	var sc scenarioContext
	raw := os.Getenv("MCP_CONFORMANCE_CONTEXT")
	if raw == "" {
		return sc, nil
	}
	if err := json.Unmarshal([]byte(raw), &sc); err != nil {
		return sc, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
	}
	return sc, nil
}
