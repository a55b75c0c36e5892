package oauthflow

import (
	"sync"

	"golang.org/x/oauth2"
)

// savingTokenSource passes tokens through and saves each new one.
type savingTokenSource struct {
	src  oauth2.TokenSource
	save func(*oauth2.Token)

	mu   sync.Mutex
	last string // the access token saved last
}

// Token returns the source's token, saving it first if it is new.
func (s *savingTokenSource) Token() (*oauth2.Token, error) {
	tok, err := s.src.Token()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	changed := tok.AccessToken != s.last
	s.last = tok.AccessToken
	s.mu.Unlock()
	if changed {
		s.save(tok)
	}
	return tok, nil
}
