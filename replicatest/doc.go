// Package replicatest holds the acceptance tests and benchmarks of the
// store modules (redisstore, pgstore) with several processes: two
// replicas of an agent share one Redis, and again one PostgreSQL, and an
// eino run interrupted in one resumes in the other; and the benchmarks of
// `mcpadapter serve` replicas on them (requests per second, a client's
// wait when its replica is killed). It is a module of its
// own so that the store modules need not depend on eino. It has no API.
package replicatest
