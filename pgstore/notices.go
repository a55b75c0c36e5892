package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// maxChannel is the longest channel name PostgreSQL takes whole
// (NAMEDATALEN - 1 bytes): pg_notify refuses a longer one, and LISTEN
// cuts it.
const maxChannel = 63

// noticeChannel is the name of the channel of the notices about the
// table name: the table's name as Options.TablePrefix makes it, its
// schema's too ("agents.mcp_sessions"), or, when that is longer than
// maxChannel, "mcpadapter_" and a SHA-256 of it.
func noticeChannel(opts *Options, name string) string {
	c := opts.prefix() + name
	if len(c) <= maxChannel {
		return c
	}
	sum := sha256.Sum256([]byte(c))
	return "mcpadapter_" + hex.EncodeToString(sum[:])[:maxChannel-len("mcpadapter_")]
}

// notices sends and gets PostgreSQL notifications on one channel, each
// carrying a key (a session id).
type notices struct {
	pool    *pgxpool.Pool
	channel string // as pg_notify takes it
	listen  string // LISTEN and the channel's name, quoted
	timeout time.Duration
	where   string
	log     *slog.Logger
}

func newNotices(pool *pgxpool.Pool, opts *Options, name string) *notices {
	c := noticeChannel(opts, name)
	return &notices{pool: pool, channel: c, listen: "LISTEN " + pgx.Identifier{c}.Sanitize(), timeout: opts.timeout(), where: where(pool), log: opts.logger()}
}

// notify sends key on the channel (pg_notify, outside any transaction:
// delivered at once).
func (n *notices) notify(ctx context.Context, key string) error {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	if _, err := n.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, n.channel, key); err != nil {
		return fmt.Errorf("pgstore: sending a notice on %s at %s: %w", n.channel, n.where, err)
	}
	return nil
}

// noticeCheck is how long a subscription waits for a notice before it
// checks its connection (a query); one that gets no answer within the
// store's timeout ends.
const noticeCheck = 15 * time.Second

// subscribe takes a connection out of the pool for itself, listens on the
// channel with it and returns the keys of the notices it gets, until ctx
// ends or the connection fails; the connection is then closed (never
// given back to the pool) and the channel with it.
func (n *notices) subscribe(ctx context.Context) (<-chan string, error) {
	actx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	pc, err := n.pool.Acquire(actx)
	if err != nil {
		return nil, fmt.Errorf("pgstore: a connection to listen on %s at %s: %w", n.channel, n.where, err)
	}
	conn := pc.Hijack()
	if _, err := conn.Exec(actx, n.listen); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("pgstore: listening on %s at %s: %w", n.channel, n.where, err)
	}
	out := make(chan string, 64)
	go func() {
		defer close(out)
		defer closeConn(conn)
		if err := n.receive(ctx, conn, out); err != nil && ctx.Err() == nil {
			n.log.Warn("pgstore: the subscription to notices ended", "channel", n.channel, "where", n.where, "err", err)
		}
	}()
	return out, nil
}

// receive passes the payloads of the notices conn gets to out until ctx
// ends or conn fails.
func (n *notices) receive(ctx context.Context, conn *pgx.Conn, out chan<- string) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, noticeCheck)
		note, err := conn.WaitForNotification(wctx)
		cancel()
		switch {
		case err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) && !conn.IsClosed():
			pctx, cancel := context.WithTimeout(ctx, n.timeout)
			err = conn.Ping(pctx)
			cancel()
			if err != nil {
				return err
			}
			continue
		case err != nil:
			return err
		case note.Channel != n.channel:
			continue
		}
		select {
		case out <- note.Payload:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// closeConn closes a connection taken out of the pool, within a second.
func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}
