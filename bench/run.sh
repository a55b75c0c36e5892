#!/usr/bin/env bash
# Runs mcpadapter's client benchmarks and prints a markdown table.
#
#   bash bench/run.sh            # full run: 5 runs of everything (about 8 minutes on 2 cores)
#   bash bench/run.sh --quick    # smoke check: 1 run, fewer calls
#   bash bench/run.sh --runs 7   # more runs
#   bash bench/run.sh --out results.jsonl   # also keep the raw JSON lines
#
# Three clients, same machine, same run: mcpadapter (Tool.Call), raw go-sdk
# (ClientSession.CallTool), both from bench/go, and @langchain/mcp-adapters
# (MultiServerMCPClient + tool.invoke) from bench/js on Node 22. Servers: the
# Go test server over stdio and over streamable HTTP (stateless, loopback),
# and @modelcontextprotocol/server-everything over stdio. Every combination
# of client, server and workload runs in its own process, --runs times; the
# clients' order rotates from one run to the next to spread drift. The table
# holds the medians and the ratios mcpadapter / peer (below 1: mcpadapter is
# faster or smaller). See docs/dev/benchmarks.md.
#
# Needs go and npm (npm's registry, once, for bench/js/node_modules); Node 22
# and server-everything come from internal/testenv, as for the tests.
set -euo pipefail

caller_dir=$PWD
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

runs=5
quick=0
out=""
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) quick=1; runs=1 ;;
	--runs|--out)
		[[ $# -ge 2 ]] || { echo "run.sh: $1 wants a value" >&2; exit 2; }
		if [[ $1 == --runs ]]; then runs="$2"; else out="$2"; fi
		shift ;;
	-h|--help) sed -n '2,21p' "$0"; exit 0 ;;
	*) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs < 1 || runs > 50)); then
	echo "run.sh: --runs wants 1..50" >&2
	exit 2
fi

# Workload sizes. --quick keeps every combination but makes each cheap.
echo_n=2000 slow_n=256 iters=3 warmup=100
if ((quick)); then
	echo_n=200 slow_n=64 iters=1 warmup=20
fi

log() { printf '%s\n' "$*" >&2; }

work="$(mktemp -d "${TMPDIR:-/tmp}/mcpadapter-bench.XXXXXX")"
http_pid=""
cleanup() {
	if [[ -n $http_pid ]]; then
		kill "$http_pid" 2>/dev/null || true
		wait "$http_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

start_time=$SECONDS

log "== build"
go -C bench build -o "$work/bench" ./go
go build -o "$work/mcptestserver" ./internal/testserver/cmd/mcptestserver

log "== Node 22 and server-everything (internal/testenv)"
setup_out="$(go run ./internal/testenv/cmd/npmsetup </dev/null)"
node="$(printf '%s\n' "$setup_out" | sed -n 's/^node=//p')"
npmdir="$(printf '%s\n' "$setup_out" | sed -n 's/^npmdir=//p')"
everything="$npmdir/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[[ -x $node && -f $everything ]] || { log "npmsetup gave node=$node npmdir=$npmdir"; exit 1; }
"$node" --version >&2

log "== @langchain/mcp-adapters (npm ci into bench/js, with Node 22)"
stamp="$root/bench/js/node_modules/.bench-lock-sha256"
want="$(sha256sum "$root/bench/js/package-lock.json" | cut -d' ' -f1)"
if [[ ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
	(cd "$root/bench/js" && PATH="$(dirname "$node"):$PATH" timeout 600 npm ci --no-audit --no-fund --loglevel=error </dev/null >&2)
	printf '%s\n' "$want" >"$stamp"
fi
"$node" -e 'const p=require(process.argv[1]);console.error("@langchain/mcp-adapters", p.version)' \
	"$root/bench/js/node_modules/@langchain/mcp-adapters/package.json"

log "== streamable HTTP test server"
"$work/mcptestserver" -transport http -addr 127.0.0.1:0 -stateless 2>"$work/http.err" &
http_pid=$!
url=""
for _ in $(seq 100); do
	url="$(head -n1 "$work/http.err" | sed -n 's/^listening on //p')"
	[[ -n $url ]] && break
	sleep 0.05
done
[[ -n $url ]] || { log "the HTTP test server printed no URL:"; cat "$work/http.err" >&2; exit 1; }
log "$url"

results="$work/results.jsonl"
: >"$results"

# bench CLIENT SERVER WORKLOAD: one process, one JSON line appended.
bench() {
	local client=$1 server=$2 workload=$3 n=""
	case $workload in
	echo) n=$echo_n ;;
	slow64|slow1) n=$slow_n ;;
	esac
	local -a cmd
	if [[ $client == langchain ]]; then
		cmd=("$node" "$root/bench/js/bench.mjs" --workload "$workload" --server "$server"
			--testserver "$work/mcptestserver" --node "$node" --everything "$everything" --url "$url"
			--iters "$iters" --warmup "$warmup")
		[[ -n $n ]] && cmd+=(--n "$n")
	else
		cmd=("$work/bench" -client "$client" -workload "$workload" -server "$server"
			-testserver "$work/mcptestserver" -node "$node" -everything "$everything" -url "$url"
			-iters "$iters" -warmup "$warmup")
		[[ -n $n ]] && cmd+=(-n "$n")
	fi
	local line
	# Servers' and clients' stderr (server-everything's banner, Node's
	# warnings) goes to a log; timeout bounds a stuck run.
	if ! line="$(cd "$work" && timeout 300 "${cmd[@]}" 2>>"$work/stderr.log" </dev/null)"; then
		log "FAILED: $client $server $workload; last stderr:"
		tail -n 20 "$work/stderr.log" >&2
		exit 1
	fi
	printf '%s\n' "$line" >>"$results"
}

combos=(
	"connect go-stdio" "connect everything" "connect go-http"
	"echo go-stdio" "echo everything" "echo go-http"
	"slow64 go-stdio" "slow64 go-http"
	"slow1 go-stdio" "slow1 go-http"
	"discover8 go-stdio"
	"rss8 go-stdio"
)
all_clients=(mcpadapter sdk langchain)
loads=()

for ((r = 0; r < runs; r++)); do
	loads+=("$(cut -d' ' -f1 /proc/loadavg)")
	log "== run $((r + 1))/$runs ($((SECONDS - start_time)) s, load average $(cut -d' ' -f1 /proc/loadavg))"
	# Rotate the clients' order each run.
	order=()
	for ((i = 0; i < ${#all_clients[@]}; i++)); do
		order+=("${all_clients[(i + r) % ${#all_clients[@]}]}")
	done
	for combo in "${combos[@]}"; do
		read -r workload server <<<"$combo"
		for client in "${order[@]}"; do
			bench "$client" "$server" "$workload"
		done
	done
done
loads+=("$(cut -d' ' -f1 /proc/loadavg)")

if [[ -n $out ]]; then
	[[ $out == /* ]] || out="$caller_dir/$out"
	cp "$results" "$out"
fi

leaks="$(grep -c MaxListenersExceededWarning "$work/stderr.log" || true)"
elapsed=$((SECONDS - start_time))

echo "## mcpadapter benchmarks"
echo
echo "\`bash bench/run.sh$( ((quick)) && echo ' --quick')$( ((runs != 5 && !quick)) && echo " --runs $runs")\`, $(date -u +%Y-%m-%d), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(go env GOVERSION), Node $("$node" --version), @langchain/mcp-adapters $("$node" -p 'require(process.argv[1]).version' "$root/bench/js/node_modules/@langchain/mcp-adapters/package.json"), wall time ${elapsed} s"
echo
echo "1-minute load average of the machine at the start of each run and at the end: ${loads[*]} ($(nproc) cores; above that, other processes competed for the CPU)."
echo
"$work/bench" -report "$results"
if [[ $leaks != 0 ]]; then
	echo
	echo "Node printed $leaks MaxListenersExceededWarning lines (abort listeners piling up on one AbortSignal)."
fi
