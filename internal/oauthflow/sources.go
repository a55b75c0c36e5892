package oauthflow

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// AssertionFile returns an assertion source that reads a JWT from path
// each time (surrounding white space removed), for tokens a platform
// writes and rotates.
func AssertionFile(path string) func(context.Context) (string, error) {
	return func(context.Context) (string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return "", fmt.Errorf("reading the assertion file: %w", err)
		}
		s := strings.TrimSpace(string(b))
		if s == "" {
			return "", fmt.Errorf("the assertion file %s is empty", path)
		}
		return s, nil
	}
}

// tokenCommandTimeout bounds one run of a TokenCommand.
const tokenCommandTimeout = 30 * time.Second

// TokenCommand returns a source that runs argv (at most 30 seconds) and
// returns its output, trimmed. Its errors name the program, never its
// output.
func TokenCommand(argv []string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, tokenCommandTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return "", fmt.Errorf("idTokenCommand %s: %s", argv[0], ee.ProcessState)
			}
			return "", fmt.Errorf("idTokenCommand %s: %w", argv[0], err)
		}
		tok := strings.TrimSpace(string(out))
		if tok == "" {
			return "", fmt.Errorf("idTokenCommand %s printed nothing", argv[0])
		}
		return tok, nil
	}
}

// ReadKeyFile reads the PEM private key at path ("" is none); what names
// the config member in errors, which never quote the key.
func ReadKeyFile(what, path string) (crypto.Signer, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	key, err := ParsePrivateKeyPEM(b)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", what, path, err)
	}
	return key, nil
}
