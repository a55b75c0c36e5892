// Package sealed encrypts the values the store modules keep for tokens:
// AES-GCM with a key the application gives, bound to the name the value
// is kept under (so a value copied to another name does not open), or,
// when the application says so explicitly, plain JSON marked as such.
package sealed

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"
)

// The first byte of a stored value says how it was stored.
const (
	plainV1 byte = 0
	aesV1   byte = 1
)

// ErrNoKey is returned by New with no key and without plaintext.
var ErrNoKey = errors.New("no encryption key: give a 16, 24 or 32-byte key (AES-128/192/256-GCM), or allow plaintext explicitly")

// ErrUnreadable matches (errors.Is) every error of Open: the value is not
// one this Box can open (sealed with another key, under another name,
// altered, or stored in clear by a store without a key, or the reverse),
// as after a change of the store's key.
var ErrUnreadable = errors.New("a value this store's key cannot open")

// openError is an error of Open.
type openError string

func (e openError) Error() string { return string(e) }

// Is makes an openError match ErrUnreadable.
func (e openError) Is(target error) bool { return target == ErrUnreadable }

// Box seals and opens values with one key, or stores them in clear.
type Box struct {
	aead cipher.AEAD // nil: plaintext
}

// New returns a Box for key (16, 24 or 32 bytes). With no key, it stores
// values in clear if plaintext is set, and fails otherwise.
func New(key []byte, plaintext bool) (*Box, error) {
	if len(key) == 0 {
		if !plaintext {
			return nil, ErrNoKey
		}
		return &Box{}, nil
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("encryption key: %w (want 16, 24 or 32 bytes)", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Box{aead: aead}, nil
}

// Seal returns the stored form of value, kept under name.
func (b *Box) Seal(name string, value []byte) []byte {
	if b.aead == nil {
		return append([]byte{plainV1}, value...)
	}
	out := make([]byte, 1+b.aead.NonceSize(), 1+b.aead.NonceSize()+len(value)+b.aead.Overhead())
	out[0] = aesV1
	_, _ = rand.Read(out[1:]) // crypto/rand.Read never fails
	return b.aead.Seal(out, out[1:], value, []byte(name))
}

// Open returns the value stored as stored under name. A value sealed with
// another key, under another name, or altered, is an error; so is a value
// in clear when the Box has a key (or the reverse); each such error
// matches ErrUnreadable.
func (b *Box) Open(name string, stored []byte) ([]byte, error) {
	if len(stored) == 0 {
		return nil, openError("empty value")
	}
	switch {
	case stored[0] == plainV1 && b.aead == nil:
		return stored[1:], nil
	case stored[0] == aesV1 && b.aead != nil:
		n := b.aead.NonceSize()
		if len(stored) < 1+n {
			return nil, openError("encrypted value too short")
		}
		v, err := b.aead.Open(nil, stored[1:1+n], stored[1+n:], []byte(name))
		if err != nil {
			return nil, openError("cannot decrypt the value: another key, or the value was altered")
		}
		return v, nil
	case stored[0] == plainV1:
		return nil, openError("the value is stored in clear but the store has an encryption key")
	case stored[0] == aesV1:
		return nil, openError("the value is encrypted but the store has no key")
	default:
		return nil, openError(fmt.Sprintf("unknown value format %d", stored[0]))
	}
}
