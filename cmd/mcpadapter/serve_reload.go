package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/cmdline"
	"github.com/mcpadapter/mcpadapter/gateway"
	"github.com/mcpadapter/mcpadapter/gateway/policy"
)

// watchInterval is how often --watch-config looks at the config file.
const watchInterval = time.Second

// hangups returns the channel SIGHUP arrives on from now on (a SIGHUP
// no longer ends the process), and the function that stops it.
func hangups() (<-chan os.Signal, func()) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	return hup, func() { signal.Stop(hup) }
}

// reloadFiles are the files serve reads again: the config and, if set,
// the policy.
type reloadFiles struct{ config, policy string }

// sum is the files' SHA-256 sums, one after the other.
func (f reloadFiles) sum() []byte {
	s := fileSum(f.config)
	if f.policy != "" {
		s = append(s, fileSum(f.policy)...)
	}
	return s
}

// reloadOnChange reloads the gateway's servers from the config (and its
// policy from the policy file) on a signal from hup and, with watch, when
// a file's content changes, until ctx ends; the returned function stops
// it and waits for it. A config or policy that cannot be read, is not
// trusted, or is refused by the gateway leaves the servers and the policy
// as they were, and every problem is printed.
func reloadOnChange(ctx context.Context, a *cmdline.App, gw *gateway.Gateway, files reloadFiles, watch bool, hup <-chan os.Signal, out io.Writer, mu *sync.Mutex) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	path := files.config
	seen := files.sum()
	done := make(chan struct{})
	go func() {
		defer close(done)
		var tick <-chan time.Time
		if watch {
			t := time.NewTicker(watchInterval)
			defer t.Stop()
			tick = t.C
		}
		for {
			why := ""
			select {
			case <-ctx.Done():
				return
			case <-hup:
				why = "SIGHUP"
			case <-tick:
				sum := files.sum()
				if bytes.Equal(sum, seen) {
					continue
				}
				seen, why = sum, "the file changed"
			}
			err := reload(ctx, a, gw, files)
			if err != nil && ctx.Err() != nil {
				return // serve is ending: the reload was cut short, not refused
			}
			mu.Lock()
			if err != nil {
				fmt.Fprintf(out, "mcpadapter serve: reloading %s (%s): refused, the servers and the policy stay as they were:\n", path, why)
				for _, line := range strings.Split(strings.TrimSpace(err.Error()), "\n") {
					fmt.Fprintf(out, "  %s\n", strings.TrimPrefix(line, "mcpadapter: "))
				}
			} else {
				fmt.Fprintf(out, "mcpadapter serve: reloaded %s (%s)\n", path, why)
				printServers(out, path, gw.Servers())
			}
			mu.Unlock()
		}
	}()
	return func() { cancel(); <-done }
}

// reload reads the config again (checking its trust as at the start,
// without asking) and the policy file, and hands them to the gateway:
// the new policy only when the servers were taken.
func reload(ctx context.Context, a *cmdline.App, gw *gateway.Gateway, files reloadFiles) error {
	var pol *policy.Policy
	if files.policy != "" {
		p, err := policy.Load(files.policy)
		if err != nil {
			return fmt.Errorf("--policy %s: %w", files.policy, err)
		}
		pol = p
	}
	cfg, err := a.ReloadConfig(files.config)
	if err != nil {
		return err
	}
	servers := gateway.FromConfig(cfg)
	if len(servers) == 0 {
		return errors.New("the config has no servers (or all are disabled)")
	}
	if pol == nil {
		return gw.Reload(ctx, servers)
	}
	// While the servers change, what is allowed is what both policies
	// allow: a server the new config adds and the new policy refuses is
	// never callable under the old one, nor one it keeps under the new.
	old := gw.Policy()
	gw.SetPolicy(bothPolicies{old, pol})
	err = gw.Reload(ctx, servers)
	if errors.Is(err, gateway.ErrReloadRefused) {
		gw.SetPolicy(old)
		return err
	}
	// Taken (also when ctx ended while a new server was coming up).
	gw.SetPolicy(pol)
	return err
}

// bothPolicies allows what each of its policies allows (a nil one allows
// everything).
type bothPolicies [2]gateway.Policy

func (b bothPolicies) Allow(ctx context.Context, principal, server, kind, name string) bool {
	for _, p := range b {
		if p != nil && !p.Allow(ctx, principal, server, kind, name) {
			return false
		}
	}
	return true
}

// fileSum is the SHA-256 of the file at path, or nil if it is not a
// regular file or cannot be read; it reads at most maxWatchedBytes (a
// config replaced by a link to a device is not read until memory ends).
func fileSum(path string) []byte {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, maxWatchedBytes)); err != nil {
		return nil
	}
	return h.Sum(nil)
}

// maxWatchedBytes bounds what fileSum reads: more than a config holds
// (LoadConfig refuses a bigger one).
const maxWatchedBytes = 8 << 20
