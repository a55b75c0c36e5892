#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in internal/testenv/npm/package.json) against the mcpadapter
# conformance client (conformance/client): every client scenario the suite
# lists, at every spec version it lists the scenario for, and each
# extension scenario once.
#
#	bash conformance/run.sh [SET...]	(default: every spec version the
#						suite lists, and "extensions")
#
# A SET is a spec version (2025-11-25, ...) or "extensions". Each run is
# one scenario at one version, in a suite process of its own, a few at a
# time (CONFORMANCE_JOBS): the suite's own parallel mode starts every
# scenario at once, and on a loaded machine its mock servers then answer
# too late. The script prints one line per run, lists each failing run
# with its failed checks, and ends with "N of M runs passed"; it exits
# non-zero if any run failed. A run passes when the suite exits 0 (no
# failed check, no warning, and the client exited 0 unless the scenario
# allows an error) and at least one check passed (the suite passes a
# scenario that emitted no check, or only skipped ones; this script does
# not).
#
# Environment:
#	CONFORMANCE_RESULTS	directory for the client binary, the suite's logs
#				and its per-scenario results (default: a new
#				temporary directory, kept and printed)
#	CONFORMANCE_TIMEOUT	seconds allowed for one run (default 120)
#	CONFORMANCE_JOBS	runs at a time (default 4)
#	CONFORMANCE_SCENARIO_TIMEOUT_MS	the suite's per-scenario timeout (default 30000)
#	CONFORMANCE_SCENARIOS	an extended regular expression: only the
#				scenarios whose names match it (default: all)
#	CONFORMANCE_BUILD_TAGS	build tags for the client, e.g.
#				mcpadapter_nofastpath (every call on go-sdk's
#				path; .ci/run runs the suite with and without it)
#	CONFORMANCE_TRACE	0: the client keeps no protocol trace (a trace
#				keeps the HTTP fast path off)
#	CONFORMANCE_FAST_PATH	on: fail unless some of the client's tools/call
#				POSTs went on the fast path; off: fail if any
#				did (the client's record, conformance/client/record.go)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

run_timeout="${CONFORMANCE_TIMEOUT:-120}"
scenario_timeout="${CONFORMANCE_SCENARIO_TIMEOUT_MS:-30000}"

start=$SECONDS
work="${CONFORMANCE_RESULTS:-$(mktemp -d "${TMPDIR:-/tmp}/mcpadapter-conformance.XXXXXX")}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
bin="$work/conformance-client"
if [[ "$bin" == *" "* ]]; then
	# The suite splits --command on spaces.
	echo "run.sh: the results directory must not contain spaces: $work" >&2
	exit 2
fi

tags="${CONFORMANCE_BUILD_TAGS:-}"
echo "building the client: $bin${tags:+ (-tags $tags)}"
go -C conformance build -tags "$tags" -o "$bin" ./client

# Node 22 and the pinned npm packages, installed (or found) exactly as the
# tests do.
setup="$(go run ./internal/testenv/cmd/npmsetup </dev/null)"
node="$(sed -n 's/^node=//p' <<<"$setup")"
npmdir="$(sed -n 's/^npmdir=//p' <<<"$setup")"
if [[ -z "$node" || -z "$npmdir" ]]; then
	printf 'run.sh: npmsetup printed no node or npmdir:\n%s\n' "$setup" >&2
	exit 2
fi
pkg="$npmdir/node_modules/@modelcontextprotocol/conformance"
entry="$pkg/$("$node" -p 'require(process.argv[1]).bin.conformance' "$pkg/package.json")"
echo "node $("$node" --version): $node"
echo "conformance $("$node" "$entry" --version): $entry"
echo "results: $work"

# The suite's client scenarios, one "NAME VERSION" line per run it lists
# ("NAME extension" for an extension): "  - name [2025-11-25,2026-07-28]".
mapfile -t runs < <("$node" "$entry" list --client |
	awk '/^Client scenarios/ { on = 1; next }
		on && /^  - / {
			v = $3; gsub(/[][]/, "", v); n = split(v, vs, ",")
			for (i = 1; i <= n; i++) print $2, vs[i]
			next
		}
		on && !NF { exit }')
if [[ ${#runs[@]} -eq 0 ]]; then
	echo "run.sh: the suite lists no client scenarios" >&2
	exit 2
fi

sets=("$@")
if [[ ${#sets[@]} -eq 0 ]]; then
	mapfile -t sets < <(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | sort -u)
fi

# one_run NAME VERSION: one scenario at one version (or "extension"), in a
# directory of its own; it writes "✓ name @ version: P passed, F failed"
# (or ✗) to that directory's verdict file. A run passes when the suite
# exits 0 (no failed check, no warning, and the client exited 0 unless the
# scenario allows an error) with at least one passed check.
one_run() {
	local name="$1" version="$2"
	local dir="$work/runs/$version/${name//\//_}"
	rm -rf "$dir"
	mkdir -p "$dir"
	local args=(--scenario "$name")
	[[ "$version" == extension ]] || args+=(--spec-version "$version")
	local rc=0
	timeout --kill-after=10 "$run_timeout" \
		"$node" "$entry" client --command "$bin" "${args[@]}" \
		--timeout "$scenario_timeout" -o "$dir" >"$dir/suite.log" 2>&1 || rc=$?
	local checks
	checks="$(find "$dir" -name checks.json | head -n1)"
	"$node" -e '
		const [file, name, version, rc] = process.argv.slice(1);
		let cs = [];
		try { cs = require(file); } catch {}
		const n = (st) => cs.filter((c) => c.status === st).length;
		const ok = rc === "0" && n("SUCCESS") > 0;
		let why = "";
		if (!file) why = ", no checks (suite exit " + rc + ")";
		else if (rc !== "0" && n("FAILURE") === 0 && n("WARNING") === 0) why = ", suite exit " + rc;
		console.log((ok ? "✓ " : "✗ ") + name + " @ " + version + ": " + n("SUCCESS") + " passed, " +
			n("FAILURE") + " failed" + (n("WARNING") ? ", " + n("WARNING") + " warnings" : "") +
			(n("SKIPPED") ? ", " + n("SKIPPED") + " skipped" : "") + why);
		for (const c of cs)
			if (!ok && (c.status === "FAILURE" || c.status === "WARNING" || c.status === "SKIPPED"))
				console.log("      " + c.status + " " + c.id + ": " + (c.errorMessage || c.description || ""));
	' "$checks" "$name" "$version" "$rc" >"$dir/verdict"
	if [[ -n "$checks" && ! "$(head -n1 "$dir/verdict")" == "✓ "* ]]; then
		echo "      client stderr: $(dirname "$checks")/stderr.txt" >>"$dir/verdict"
	fi
}

jobs_max="${CONFORMANCE_JOBS:-4}"
filter="${CONFORMANCE_SCENARIOS:-}"
selected=()
for r in "${runs[@]}"; do
	if [[ -n "$filter" && ! "${r% *}" =~ $filter ]]; then
		continue
	fi
	for set in "${sets[@]}"; do
		if [[ "${r#* }" == "$set" || ( "$set" == extensions && "${r#* }" == extension ) ]]; then
			selected+=("$r")
		fi
	done
done
if [[ ${#selected[@]} -eq 0 ]]; then
	echo "run.sh: no scenario runs for: ${sets[*]}${filter:+ matching $filter}" >&2
	exit 2
fi
echo "running ${#selected[@]} scenario runs, $jobs_max at a time"
for r in "${selected[@]}"; do
	while [[ $(jobs -rp | wc -l) -ge $jobs_max ]]; do
		wait -n || true
	done
	one_run "${r% *}" "${r#* }" &
done
wait || true

total_pass=0
total_fail=0
failing=()
for r in "${selected[@]}"; do
	name="${r% *}" version="${r#* }"
	verdict="$work/runs/$version/${name//\//_}/verdict"
	if [[ ! -s "$verdict" ]]; then
		echo "✗ $name @ $version: no verdict" >"$verdict"
	fi
	head -n1 "$verdict"
	if [[ "$(head -n1 "$verdict")" == "✓ "* ]]; then
		total_pass=$((total_pass + 1))
	else
		total_fail=$((total_fail + 1))
		failing+=("$verdict")
	fi
done

echo
echo "wall time: $((SECONDS - start))s; results in $work"
if [[ ${#failing[@]} -gt 0 ]]; then
	echo "failing runs:"
	for f in "${failing[@]}"; do
		sed 's/^/  /' "$f"
	done
fi
echo "$total_pass of $((total_pass + total_fail)) runs passed${tags:+ (client built with -tags $tags)}"

# The client's record of its tools/call POSTs, one line per run in its
# stderr: how many, and how many the fast path sent.
calls=0
fast=0
while read -r a f; do
	calls=$((calls + a))
	fast=$((fast + f))
done < <(find "$work/runs" -name stderr.txt -exec sed -n 's/.*tools\/call POSTs: \([0-9]*\), on the fast path: \([0-9]*\).*/\1 \2/p' {} +)
echo "tools/call POSTs: $calls, on the fast path: $fast"
case "${CONFORMANCE_FAST_PATH:-}" in
on)
	if [[ $fast -eq 0 ]]; then
		echo "run.sh: CONFORMANCE_FAST_PATH=on, but no tools/call went on the fast path" >&2
		exit 1
	fi
	;;
off)
	if [[ $fast -ne 0 || $calls -eq 0 ]]; then
		echo "run.sh: CONFORMANCE_FAST_PATH=off, but $fast of $calls tools/call went on the fast path" >&2
		exit 1
	fi
	;;
esac
if [[ $total_fail -gt 0 ]]; then
	exit 1
fi
