package testdb

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// RedisCluster starts a Redis Cluster of masters servers (no replicas) on
// 127.0.0.1, the 16384 slots split between them, and waits until every
// node says the cluster is ok.
func RedisCluster(t testing.TB, masters int) []*Server {
	t.Helper()
	nodes := make([]*Server, masters)
	for i := range nodes {
		nodes[i] = startRedis(t, "--cluster-enabled", "yes", "--cluster-node-timeout", "2000")
	}
	const slots = 16384
	for i, n := range nodes {
		lo, hi := i*slots/masters, (i+1)*slots/masters-1
		if _, err := RedisCommand(n.Addr, "CLUSTER", "ADDSLOTSRANGE", strconv.Itoa(lo), strconv.Itoa(hi)); err != nil {
			t.Fatal(err)
		}
	}
	host, port, _ := net.SplitHostPort(nodes[0].Addr)
	for _, n := range nodes[1:] {
		if _, err := RedisCommand(n.Addr, "CLUSTER", "MEET", host, port); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(startTimeout)
	for _, n := range nodes {
		for {
			info, err := RedisCommand(n.Addr, "CLUSTER", "INFO")
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", masters)) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the cluster on %s is not ok after %v: %q %v", n.Addr, startTimeout, info, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nodes
}

// RedisCommand sends one command to the Redis server at addr and returns
// its reply (a status, an integer or a bulk string, as text), or the
// server's error.
func RedisCommand(addr string, args ...string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := c.Write([]byte(b.String())); err != nil {
		return "", err
	}
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("%s: empty reply", addr)
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%s: %s", addr, line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil || n < 0 {
			return "", err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", err
		}
		return string(buf[:n]), nil
	}
	return "", fmt.Errorf("%s: reply %q not understood", addr, line)
}
