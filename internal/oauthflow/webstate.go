package oauthflow

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// stateName binds a sealed state to its use: a value the same key sealed
// for something else does not open as a state.
const stateName = "mcpadapter oauth sign-in state v1"

// stateBinding is what a state is sealed under (Web.stateAD): stateName,
// the issuer, the client ID and the redirect URL, so that a state one Web
// sealed opens in no Web of another authorization server or client that
// shares the key. Another Web's callback would otherwise send its code
// and PKCE verifier to this Web's token endpoint (a mix-up).
func stateBinding(c WebConfig) string {
	return stateName + "\x00" + strings.TrimSuffix(c.Issuer, "/") + "\x00" + c.ClientID + "\x00" + c.RedirectURL
}

// webState is what the state of one sign-in carries, sealed: nothing of it
// is readable or changeable without WebConfig.StateKey.
type webState struct {
	// Principal is the user the sign-in is for. It is sealed as
	// RawPrincipal, its bytes: JSON would replace those of a principal
	// that is not valid UTF-8, making it another principal's.
	Principal    string `json:"-"`
	RawPrincipal []byte `json:"p"`
	// Resource is the MCP server's URL as the client has it: the token's
	// key (TokenKey).
	Resource string `json:"r"`
	// Audience is the resource parameter of the authorization and token
	// requests (the protected resource metadata's resource).
	Audience string `json:"a"`
	// Verifier is the PKCE code verifier.
	Verifier string `json:"v"`
	// Nonce makes the state single-use (Web.consume).
	Nonce string `json:"n"`
	// Expires is when the sign-in ends, in Unix milliseconds.
	Expires int64 `json:"e"`
	// Scopes are the scopes asked for.
	Scopes []string `json:"s,omitempty"`
}

// sealState returns st as the state parameter: base64url (no padding) of
// st's JSON sealed with the state key.
func (w *Web) sealState(st *webState) string {
	wire := *st
	wire.RawPrincipal = []byte(st.Principal)
	b, _ := json.Marshal(&wire) // strings, bytes and numbers only: no error
	return base64.RawURLEncoding.EncodeToString(w.box.Seal(w.stateAD, b))
}

// openState returns the state raw carries, or an error for a state this
// service did not seal with its key: altered, too long, sealed with another
// key or for another issuer, client or redirect URL, or incomplete.
func (w *Web) openState(raw string) (*webState, error) {
	bad := errors.New("the state is not one this service made (altered, sealed with another key or for another authorization server or client, or not a sign-in's)")
	if len(raw) > maxStateLen {
		return nil, fmt.Errorf("the state is too long (%d bytes)", len(raw))
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, bad
	}
	plain, err := w.box.Open(w.stateAD, b)
	if err != nil {
		return nil, bad
	}
	var st webState
	if err := json.Unmarshal(plain, &st); err != nil {
		return nil, bad
	}
	st.Principal, st.RawPrincipal = string(st.RawPrincipal), nil
	if st.Resource == "" || st.Verifier == "" || st.Nonce == "" || st.Expires == 0 {
		return nil, bad
	}
	return &st, nil
}
