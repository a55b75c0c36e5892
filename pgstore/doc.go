// Package pgstore keeps mcpadapter's shared state in PostgreSQL, so that
// several replicas of an agent service share it: eino checkpoints
// (CheckpointStore, an adk.CheckPointStore by its method set, without this
// module importing eino), the response cache (CacheStore, an
// mcpadapter.CacheStore) and OAuth tokens (TokenStore, an
// mcpadapter.TokenUpdater); and, for the gateway's replicas, the limits
// they share (LimitStore, a gateway.LimitStore and a
// resourceserver.ReplayStore), their clients' sessions (SessionStore, a
// gateway.SessionStore) and their tasks (TaskStore, a gateway.TaskStore).
//
// Pending tool calls travel in the eino checkpoint: a call waiting on a
// 2026-07-28 server (multi-round-trip) is plain data there and resumes on
// any replica. A call parked on a handshake-era connection stays in the
// process that holds the connection; resumed on another replica, its tool
// answers with the error the adapter gives after a restart.
//
// # Tables
//
// Migrate creates the tables, as a deployment step run by their owner;
// the stores then need only SELECT, INSERT, UPDATE and DELETE on them.
// Each constructor checks that its tables are there and runs no DDL when
// they are (it creates a missing one, if its role may). Their names start
// with Options.TablePrefix ("mcpadapter_" by default):
//
//	mcpadapter_checkpoints  id text primary key, data bytea, updated_at
//	                        (indexed; a checkpoint lives Options.CheckpointTTL,
//	                        7 days by default, after its last write)
//	mcpadapter_cache        key bytea primary key (the cache's keys hold NUL
//	                        bytes, which text cannot), value bytea,
//	                        expires_at timestamptz (indexed); rows past
//	                        expires_at are never returned, and a sweeper
//	                        deletes them
//	mcpadapter_tokens       key text primary key, data bytea (AES-GCM sealed),
//	                        version bigint (one more at every save), updated_at
//	mcpadapter_token_locks  key text primary key, owner text, expires_at: the
//	                        lease a refresh holds
//	mcpadapter_limit_rates, mcpadapter_limit_leases, mcpadapter_limit_once
//	                        the gateway's rate limits, concurrency leases and
//	                        once-only ids (DPoP proofs)
//	mcpadapter_sessions     id text primary key (a gateway session id), data
//	                        bytea (the gateway's JSON record of the session),
//	                        expires_at (microseconds, by the database's clock)
//	mcpadapter_session_claims
//	                        id text primary key (a session id and a request's
//	                        key: a request of the session in flight on one
//	                        replica), data bytea (its owner's token),
//	                        expires_at as above (a lease its replica extends
//	                        while the request runs); a row is deleted by its
//	                        owner once its request is over, an expired one
//	                        is taken as absent
//	mcpadapter_tasks        id text primary key (a gateway task's, a principal's
//	                        task index's or a replica's liveness record's key),
//	                        data bytea (the gateway's JSON), expires_at as above
//
// The notices of changed gateway sessions (SessionStore.NotifySession,
// SessionStore.SubscribeSessions) are PostgreSQL notifications (NOTIFY,
// LISTEN) on the channel named as the sessions' table
// ("mcpadapter_sessions", its schema too when TablePrefix names one; a
// name over 63 bytes is replaced by "mcpadapter_" and a hash of it),
// each carrying the session's id and nothing else.
//
// Keys are those mcpadapter passes: for cache entries they name the
// server, the method and, for private entries, the caller; for tokens the
// MCP server's URL. To keep tokens per user, give each user's TokenStore
// its own TablePrefix or KeyPrefix. Keys longer than 1 KiB are stored as
// their first 1000 bytes and a SHA-256 of the whole key.
//
// Every write states READ COMMITTED, and every operation has a timeout of
// its own (Options.Timeout, Options.CacheTimeout). The README in this
// directory describes the refresh protocol and what the stores guarantee
// under failover and clock skew.
package pgstore
