package oauthflow

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
)

// A Store keeps OAuth tokens between runs, keyed by the MCP server's URL.
// Implementations must be safe for concurrent use. Load returns nil and no
// error when it has nothing for key.
type Store interface {
	// Load returns the token kept for key, or nil.
	Load(ctx context.Context, key string) (*StoredToken, error)
	// Save keeps t for key, replacing what was there.
	Save(ctx context.Context, key string, t *StoredToken) error
}

// StoredToken is what a Store keeps for one server: the token and what is
// needed to refresh it without asking the user again. It holds secrets:
// its String and LogValue methods print none of them.
type StoredToken struct {
	// Token is the access token, with its refresh token and expiry.
	Token *oauth2.Token `json:"token"`
	// Scopes are the scopes the token was granted (or asked for).
	Scopes []string `json:"scopes,omitempty"`
	// ClientID and ClientSecret are the client the token was issued to.
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	// AuthURL, TokenURL and AuthStyle are the authorization server's.
	AuthURL   string           `json:"auth_url"`
	TokenURL  string           `json:"token_url"`
	AuthStyle oauth2.AuthStyle `json:"auth_style,omitempty"`
	// DPoPThumbprint is the JWK SHA-256 thumbprint (RFC 7638) of the DPoP
	// key the token is bound to; empty for a bearer token.
	DPoPThumbprint string `json:"dpop_jkt,omitempty"`
}

// String describes t without its secrets.
func (t *StoredToken) String() string {
	if t == nil || t.Token == nil {
		return "StoredToken(none)"
	}
	return fmt.Sprintf("StoredToken(client %s, token endpoint %s, scopes %q, expires %v, refresh token: %t)",
		t.ClientID, t.TokenURL, t.Scopes, t.Token.Expiry.Format("2006-01-02T15:04:05Z07:00"), t.Token.RefreshToken != "")
}

// LogValue describes t for log/slog without its secrets.
func (t *StoredToken) LogValue() slog.Value { return slog.StringValue(t.String()) }

// config is the oauth2 configuration that refreshes t.
func (t *StoredToken) config() *oauth2.Config {
	return &oauth2.Config{
		ClientID:     t.ClientID,
		ClientSecret: t.ClientSecret,
		Endpoint:     oauth2.Endpoint{AuthURL: t.AuthURL, TokenURL: t.TokenURL, AuthStyle: t.AuthStyle},
		Scopes:       t.Scopes,
	}
}

// token returns a copy of the token.
func (t *StoredToken) token() *oauth2.Token {
	tok := *t.Token
	return &tok
}

// storedFrom records tok with the configuration that refreshes it and,
// for a token issued bound to d's key (token_type DPoP), the key's
// thumbprint.
func storedFrom(oc *oauth2.Config, tok *oauth2.Token, d *DPoP) *StoredToken {
	scopes := oc.Scopes
	if s, ok := tok.Extra("scope").(string); ok && s != "" {
		scopes = strings.Fields(s)
	}
	// Keep only the standard fields: Extra is not serialised anyway.
	t := &oauth2.Token{AccessToken: tok.AccessToken, TokenType: tok.TokenType, RefreshToken: tok.RefreshToken, Expiry: tok.Expiry}
	st := &StoredToken{
		Token:        t,
		Scopes:       scopes,
		ClientID:     oc.ClientID,
		ClientSecret: oc.ClientSecret,
		AuthURL:      oc.Endpoint.AuthURL,
		TokenURL:     oc.Endpoint.TokenURL,
		AuthStyle:    oc.Endpoint.AuthStyle,
	}
	if d != nil && strings.EqualFold(tok.TokenType, "DPoP") {
		st.DPoPThumbprint = d.Thumbprint()
	}
	return st
}

// usable returns the token st holds as this process can send it: a token
// bound to the DPoP key d holds is recorded as bound (so it goes out as
// DPoP with a proof). A token bound to another key, or bound while this
// process has no key, cannot be sent. A confidential client (one with a
// secret) can still refresh it with its own proof, so only its refresh
// token is kept; a public client's refresh token is bound to the key too
// (RFC 9449, section 5), so there is nothing this process can use: nil.
func (st *StoredToken) usable(d *DPoP) *oauth2.Token {
	tok := st.token()
	if !strings.EqualFold(tok.TokenType, "DPoP") {
		return tok
	}
	if d != nil && st.DPoPThumbprint != "" && st.DPoPThumbprint == d.Thumbprint() {
		d.MarkBound(tok.AccessToken)
		return tok
	}
	if st.ClientSecret == "" {
		return nil
	}
	return &oauth2.Token{RefreshToken: tok.RefreshToken, Expiry: time.Unix(1, 0)}
}

// NewMemoryStore returns a Store that keeps tokens in memory.
func NewMemoryStore() Store {
	return &memoryStore{m: make(map[string]StoredToken)}
}

// memoryStore is the Store NewMemoryStore returns.
type memoryStore struct {
	mu sync.Mutex
	m  map[string]StoredToken
}

// Load returns a copy of the token kept for key, or nil.
func (s *memoryStore) Load(_ context.Context, key string) (*StoredToken, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[key]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// Save keeps a copy of t for key.
func (s *memoryStore) Save(_ context.Context, key string, t *StoredToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[key] = *t
	return nil
}
