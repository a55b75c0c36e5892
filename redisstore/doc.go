// Package redisstore keeps mcpadapter's shared state in Redis, so that
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
// # Keys
//
// Every key starts with Options.Prefix ("mcpadapter:" by default):
//
//	PREFIX checkpoint:ID       a checkpoint (string; expires Options.CheckpointTTL,
//	                           7 days by default, after its last write)
//	PREFIX cache:KEY           a cached result: 8 bytes of expiry (Unix ms,
//	                           big-endian) then the JSON; Redis expires the key
//	                           (a relative PX)
//	PREFIX token:{KEY}         a token, AES-GCM sealed under the key's name
//	PREFIX token:{KEY}:lock    held while one process refreshes KEY's token
//	                           (one Redis Cluster hash tag for both)
//	PREFIX limit:KIND:NAME     the gateway's rate limits, concurrency leases
//	                           and once-only ids (DPoP proofs)
//	PREFIX session:ID          a gateway session's record (the gateway's JSON;
//	                           expires with the session)
//	PREFIX claim:ID:REQUEST    a claim of a request of session ID in flight on
//	                           a replica, holding its owner's token (SET NX;
//	                           a lease its replica extends while the request
//	                           runs; deleted by its owner once the request is
//	                           over, else it expires within the lease)
//	PREFIX task:KEY            a gateway task's record, a principal's index of
//	                           tasks, or a replica's liveness record (the
//	                           gateway's JSON; expires with what it records)
//
// One Pub/Sub channel carries the notices of changed gateway sessions
// (SessionStore.NotifySession, SessionStore.SubscribeSessions), each the
// session's id and nothing else:
//
//	PREFIX sessions            the ids of the sessions whose records changed
//
// KEY is the key mcpadapter passes: for cache entries it names the server,
// the method and, for private entries, the caller; for tokens it is the
// MCP server's URL. To keep tokens per user, give each user's TokenStore
// its own Prefix.
//
// Every operation has a timeout of its own (Options.Timeout,
// Options.CacheTimeout). The README in this directory describes the
// refresh protocol and what the stores guarantee under failover, eviction
// and clock skew.
package redisstore
