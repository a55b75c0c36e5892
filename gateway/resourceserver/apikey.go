package resourceserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"slices"
)

// apiKeys are the static keys, kept as SHA-256 digests and compared in
// constant time: every key is compared, whichever matches.
type apiKeys struct {
	digests [][32]byte
	grants  []*grant
}

func newAPIKeys(keys []APIKey, scopes []string) *apiKeys {
	a := &apiKeys{}
	for _, k := range keys {
		s := k.Scopes
		if len(s) == 0 {
			s = scopes
		}
		a.digests = append(a.digests, sha256.Sum256([]byte(k.Key)))
		a.grants = append(a.grants, &grant{
			subject:   k.Principal,
			principal: k.Principal,
			scopes:    slices.Clone(s),
			claims:    map[string]any{"api_key": k.Principal},
		})
	}
	return a
}

// match returns the grant of the key whose SHA-256 is d, or nil.
func (a *apiKeys) match(d [32]byte) *grant {
	if len(a.digests) == 0 {
		return nil
	}
	found := -1
	for i := range a.digests {
		if subtle.ConstantTimeCompare(d[:], a.digests[i][:]) == 1 {
			found = i
		}
	}
	if found < 0 {
		return nil
	}
	return a.grants[found]
}
