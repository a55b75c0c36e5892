#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios
# (@modelcontextprotocol/conformance, pinned in internal/testenv/npm)
# against `mcpadapter serve` in front of go-sdk v1.8.0's own
# conformance/everything-server, and against that server directly, in one
# run:
#
#	backend A: everything-server with sessions (it speaks 2025-11-25)
#	backend B: everything-server stateless (2026-07-28)
#
#	direct runs (the baseline): A at 2025-11-25, B at 2026-07-28, B at 2025-11-25
#	through the gateway:        A at 2025-11-25, B at 2026-07-28 (same version)
#	                            A at 2026-07-28, B at 2025-11-25 (across versions)
#
# A scenario is required through the gateway when the backend passes it
# directly: at the suite's version, or, for A at 2026-07-28 (which A does not
# speak), at A's own version when the 2026-07-28 suite lists it. The script
# prints each run's summary, every required scenario that failed, and exits
# non-zero if any did.
#
#	bash gateway/conformance.sh
#
# Environment: CONFORMANCE_RESULTS (a directory for binaries and results,
# default a new temporary one, kept and printed), CONFORMANCE_TIMEOUT
# (seconds for one suite run, default 600).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
work="${CONFORMANCE_RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/mcpadapter-gateway-conformance.XXXXXX")}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
run_timeout="${CONFORMANCE_TIMEOUT:-600}"
start=$SECONDS

echo "building everything-server (go-sdk v1.8.0) and mcpadapter into $work"
go -C gateway build -o "$work/everything-server" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
go -C cmd/mcpadapter build -o "$work/mcpadapter" .

setup="$(go run ./internal/testenv/cmd/npmsetup </dev/null)"
node="$(sed -n 's/^node=//p' <<<"$setup")"
npmdir="$(sed -n 's/^npmdir=//p' <<<"$setup")"
if [[ -z "$node" || -z "$npmdir" ]]; then
	printf 'conformance.sh: npmsetup printed no node or npmdir:\n%s\n' "$setup" >&2
	exit 2
fi
pkg="$npmdir/node_modules/@modelcontextprotocol/conformance"
entry="$pkg/$("$node" -p 'require(process.argv[1]).bin.conformance' "$pkg/package.json")"
echo "conformance $("$node" "$entry" --version), node $("$node" --version)"

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

# free_port prints a free TCP port on 127.0.0.1.
free_port() {
	"$node" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_port PORT: until something listens on 127.0.0.1:PORT (30 s).
wait_port() {
	for _ in $(seq 300); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "nothing listens on 127.0.0.1:$1" >&2
	return 1
}

pa="$(free_port)"; pb="$(free_port)"
"$work/everything-server" -http "127.0.0.1:$pa" -stateless=false >"$work/backend-a.log" 2>&1 & pids+=($!)
"$work/everything-server" -http "127.0.0.1:$pb" >"$work/backend-b.log" 2>&1 & pids+=($!)
wait_port "$pa"; wait_port "$pb"
printf '{"mcpServers": {"everything": {"url": "http://127.0.0.1:%s/"}}}\n' "$pa" >"$work/a.json"
printf '{"mcpServers": {"everything": {"url": "http://127.0.0.1:%s/"}}}\n' "$pb" >"$work/b.json"
ga="$(free_port)"; gb="$(free_port)"
"$work/mcpadapter" serve --trust-config --config "$work/a.json" --listen "127.0.0.1:$ga" --prefix never >"$work/gateway-a.log" 2>&1 & pids+=($!)
"$work/mcpadapter" serve --trust-config --config "$work/b.json" --listen "127.0.0.1:$gb" --prefix never >"$work/gateway-b.log" 2>&1 & pids+=($!)
wait_port "$ga"; wait_port "$gb"
cat "$work/gateway-a.log" "$work/gateway-b.log"

# suite NAME URL VERSION: one suite run; its summary in $work/NAME.txt.
suite() {
	local rc=0
	timeout --kill-after=10 "$run_timeout" "$node" "$entry" server --url "$2" --spec-version "$3" \
		-o "$work/out-$1" >"$work/$1.txt" 2>&1 || rc=$?
	echo "$1 ($3, $2): $(grep '^Total' "$work/$1.txt" || echo "no summary, exit $rc")"
}

# passed NAME: the scenarios a run passed; listed NAME: all it ran.
passed() { sed -n 's/^✓ \([^:]*\):.*/\1/p' "$work/$1.txt" | sort -u; }
listed() { sed -n 's/^[✓✗] \([^:]*\):.*/\1/p' "$work/$1.txt" | sort -u; }

suite direct-a-1125 "http://127.0.0.1:$pa/" 2025-11-25 &
suite direct-b-0728 "http://127.0.0.1:$pb/" 2026-07-28 &
suite direct-b-1125 "http://127.0.0.1:$pb/" 2025-11-25 &
# wait_jobs: until the suite runs end (the servers and gateways run on).
wait_jobs() { while [[ $(jobs -rp | grep -cvxF -f <(printf '%s\n' "${pids[@]}")) -gt 0 ]]; do sleep 1; done; }
wait_jobs
suite gateway-a-1125 "http://127.0.0.1:$ga/mcp" 2025-11-25 &
suite gateway-b-0728 "http://127.0.0.1:$gb/mcp" 2026-07-28 &
wait_jobs
suite gateway-a-0728 "http://127.0.0.1:$ga/mcp" 2026-07-28 &
suite gateway-b-1125 "http://127.0.0.1:$gb/mcp" 2025-11-25 &
wait_jobs

failed=0
# check RUN BASELINE...: every scenario the baselines passed (and RUN
# lists) passes in RUN.
check() {
	local run="$1"; shift
	local required
	required="$(comm -12 <(for b in "$@"; do passed "$b"; done | sort -u) <(listed "$run"))"
	local n missing
	n="$(grep -c . <<<"$required" || true)"
	missing="$(comm -23 <(printf '%s\n' "$required") <(passed "$run"))"
	if [[ -n "$missing" ]]; then
		echo "✗ $run: required scenarios that failed (the backend passes them directly):"
		sed 's/^/    /' <<<"$missing"
		for s in $missing; do grep -A3 "^✗ $s:" "$work/$run.txt" | sed 's/^/      /' || true; done
		failed=1
	else
		echo "✓ $run: all $n required scenarios pass ($(passed "$run" | grep -c .) of $(listed "$run" | grep -c .) in all)"
	fi
}
echo
check gateway-a-1125 direct-a-1125
check gateway-b-0728 direct-b-0728
check gateway-a-0728 direct-a-1125
check gateway-b-1125 direct-b-1125
echo "wall time: $((SECONDS - start))s; results in $work"
exit "$failed"
