package oauthflow

import (
	"crypto"
	"errors"
	"fmt"
)

// The checks of the public auth settings, made before anything is sent.
// what names the public type (ClientCredentials, OAuth) in errors, which
// name its fields as a user sets them.

// CheckGrantIssuer checks a grant's Issuer.
func CheckGrantIssuer(what, issuer string) error {
	if issuer == "" {
		return fmt.Errorf("%s.Issuer is empty: set it to the authorization server the credentials are for (in a config, the auth object's \"issuer\"); they are sent to no other", what)
	}
	if err := CheckIssuer(issuer); err != nil {
		return fmt.Errorf("%s.Issuer: %w", what, err)
	}
	return nil
}

// CheckDPoPKey checks a DPoPKey (nil is none).
func CheckDPoPKey(what string, key crypto.Signer) error {
	if key == nil {
		return nil
	}
	if _, err := NewDPoP(key); err != nil {
		return fmt.Errorf("%s.DPoPKey: %w", what, err)
	}
	return nil
}

// CheckClientCredentials checks the settings of the client credentials
// grant: an issuer, a client ID, a secret or a key of a kind it can sign
// with.
func CheckClientCredentials(issuer string, ca ClientAuth, dpop crypto.Signer) error {
	if err := CheckGrantIssuer("ClientCredentials", issuer); err != nil {
		return err
	}
	if ca.ClientID == "" {
		return errors.New("ClientCredentials.ClientID is empty")
	}
	if ca.ClientSecret == "" && ca.Key == nil {
		return errors.New("ClientCredentials needs ClientSecret or PrivateKey")
	}
	if ca.Key != nil {
		if _, err := Alg(ca.Key); err != nil {
			return fmt.Errorf("ClientCredentials.PrivateKey: %w", err)
		}
	}
	return CheckDPoPKey("ClientCredentials", dpop)
}

// CheckJWTBearer checks the settings of the JWT bearer grant.
func CheckJWTBearer(issuer string, assertion AssertionSource, dpop crypto.Signer) error {
	if err := CheckGrantIssuer("JWTBearer", issuer); err != nil {
		return err
	}
	if assertion == nil {
		return errors.New("JWTBearer.Assertion is nil")
	}
	return CheckDPoPKey("JWTBearer", dpop)
}

// CheckEnterprise checks the settings of enterprise-managed authorization.
func CheckEnterprise(issuer string, e Enterprise, dpop crypto.Signer) error {
	if err := CheckGrantIssuer("EnterpriseAuth", issuer); err != nil {
		return err
	}
	for name, u := range map[string]string{"IdPTokenURL": e.IdPTokenURL, "IdPIssuer": e.IdPIssuer} {
		if u == "" {
			continue
		}
		if err := CheckIssuer(u); err != nil {
			return fmt.Errorf("EnterpriseAuth.%s: %w", name, err)
		}
	}
	switch {
	case e.IDToken == nil:
		return errors.New("EnterpriseAuth.IDToken is nil")
	case e.IdPTokenURL == "" && e.IdPIssuer == "":
		return errors.New("EnterpriseAuth needs IdPTokenURL or IdPIssuer")
	case e.Client.ClientID == "":
		return errors.New("EnterpriseAuth.ClientID is empty")
	}
	return CheckDPoPKey("EnterpriseAuth", dpop)
}

// CheckOAuth checks the settings of the sign-in: a secret only with an
// issuer, an issuer and a redirect URL that can work, no negative
// timeout, a key it can sign proofs with.
func CheckOAuth(c Config, dpop crypto.Signer) error {
	if (c.ClientSecret != "" || c.Issuer != "") && c.ClientID == "" {
		return errors.New("OAuth.ClientSecret and OAuth.Issuer need OAuth.ClientID")
	}
	if c.ClientSecret != "" && c.Issuer == "" {
		return errors.New(`OAuth.ClientSecret needs OAuth.Issuer (in a config, the auth object's "issuer"): the authorization server the client is registered with, the only one the secret is sent to`)
	}
	if c.Issuer != "" {
		if err := CheckIssuer(c.Issuer); err != nil {
			return fmt.Errorf("OAuth.Issuer: %w", err)
		}
	}
	if c.RedirectURL != "" {
		if err := CheckRedirectURL(c.RedirectURL); err != nil {
			return err
		}
	}
	if c.Timeout < 0 {
		return fmt.Errorf("OAuth.Timeout %v is negative", c.Timeout)
	}
	return CheckDPoPKey("OAuth", dpop)
}
