package sealed

import (
	"bytes"
	"errors"
	"testing"
)

func TestSealOpen(t *testing.T) {
	key := bytes.Repeat([]byte{7}, 32)
	b, err := New(key, false)
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte(`{"token":{"access_token":"at-secret"}}`)
	s := b.Seal("https://a/mcp", secret)
	if bytes.Contains(s, []byte("at-secret")) {
		t.Fatal("sealed value holds the secret in clear")
	}
	if got, err := b.Open("https://a/mcp", s); err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open: %q %v", got, err)
	}
	if _, err := b.Open("https://b/mcp", s); err == nil {
		t.Error("a value moved to another name opened")
	}
	other, _ := New(bytes.Repeat([]byte{8}, 32), false)
	if _, err := other.Open("https://a/mcp", s); err == nil {
		t.Error("another key opened the value")
	}
	plain, _ := New(nil, true)
	if _, err := plain.Open("https://a/mcp", s); err == nil {
		t.Error("a plaintext box opened a sealed value")
	}
	if _, err := b.Open("https://a/mcp", plain.Seal("https://a/mcp", secret)); err == nil {
		t.Error("a keyed box took a plaintext value")
	}
	if _, err := New(nil, false); !errors.Is(err, ErrNoKey) {
		t.Errorf("no key: %v", err)
	}
	if _, err := New([]byte("short"), false); err == nil {
		t.Error("a 5-byte key was taken")
	}
}

func FuzzOpen(f *testing.F) {
	b, _ := New(bytes.Repeat([]byte{1}, 16), false)
	f.Add([]byte{1, 2, 3})
	f.Add(b.Seal("k", []byte("v")))
	f.Fuzz(func(t *testing.T, stored []byte) {
		_, _ = b.Open("k", stored)
	})
}
