package sealed

import (
	"bytes"
	"encoding/hex"
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

// FuzzOpen: no value but the one sealed opens under a key (a changed
// byte anywhere is refused), and a plaintext box opens exactly the values
// marked plain, as stored.
func FuzzOpen(f *testing.F) {
	b, _ := New(bytes.Repeat([]byte{1}, 16), false)
	plain, _ := New(nil, true)
	// "v" sealed under "k" with b's key, once: Seal draws a new nonce
	// each time, and the fuzzing workers must agree on the value.
	sealed, _ := hex.DecodeString("0183a4e207f121831350f653fc7cf2c5c8d58bb387c4bfb8417c27149d71")
	if v, err := b.Open("k", sealed); err != nil || string(v) != "v" {
		f.Fatalf("the sealed seed does not open: %q %v", v, err)
	}
	f.Add([]byte{1, 2, 3})
	f.Add(sealed)
	f.Add(plain.Seal("k", []byte("v")))
	f.Fuzz(func(t *testing.T, stored []byte) {
		v, err := b.Open("k", stored)
		if err == nil && (!bytes.Equal(stored, sealed) || string(v) != "v") {
			t.Fatalf("%x opened as %q: only the sealed value may open", stored, v)
		}
		v, err = plain.Open("k", stored)
		if wantOK := len(stored) > 0 && stored[0] == plainV1; (err == nil) != wantOK || (wantOK && !bytes.Equal(v, stored[1:])) {
			t.Fatalf("plaintext box: %x opened as %q, %v", stored, v, err)
		}
	})
}

// FuzzSealOpen: whatever the name and value, Seal then Open under the
// same name gives the value back; under another name, or with any one
// byte of the sealed form changed, Open refuses it.
func FuzzSealOpen(f *testing.F) {
	b, _ := New(bytes.Repeat([]byte{3}, 32), false)
	f.Add("https://a/mcp", []byte(`{"token":{"access_token":"at"}}`), uint(0), byte(1))
	f.Add("", []byte{}, uint(40), byte(0x80))
	f.Fuzz(func(t *testing.T, name string, value []byte, at uint, flip byte) {
		s := b.Seal(name, value)
		got, err := b.Open(name, s)
		if err != nil || !bytes.Equal(got, value) {
			t.Fatalf("round trip of %q under %q: %q, %v", value, name, got, err)
		}
		if _, err := b.Open(name+"x", s); err == nil {
			t.Fatalf("opened under another name")
		}
		if flip == 0 {
			flip = 1
		}
		changed := bytes.Clone(s)
		changed[at%uint(len(changed))] ^= flip
		if _, err := b.Open(name, changed); err == nil {
			t.Fatalf("opened with byte %d changed", at%uint(len(changed)))
		}
	})
}
