#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in internal/testenv/npm/package.json) against the mcpadapter
# conformance client (conformance/client), once per requirement set.
#
#	bash conformance/run.sh [REQUIREMENT_SET...]	(default: 2025-11-25 2026-07-28)
#
# It prints one line per set, "2025-11-25: N passed, M failed", counting the
# client scenarios the set requires (not the ones it runs without scoring),
# lists each failing scenario with its failed checks, and exits non-zero if
# any required scenario failed. A required scenario passes when the suite
# marks it passed with at least one passed check (the suite marks a scenario
# that emitted no check at all as passed; this script does not).
#
# Environment:
#	CONFORMANCE_RESULTS	directory for the client binary, the suite's logs
#				and its per-scenario results (default: a new
#				temporary directory, kept and printed)
#	CONFORMANCE_TIMEOUT	seconds allowed for one requirement set (default 600)
#	CONFORMANCE_SCENARIO_TIMEOUT_MS	the suite's per-scenario timeout (default 30000)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

sets=("$@")
if [[ ${#sets[@]} -eq 0 ]]; then
	sets=(2025-11-25 2026-07-28)
fi
set_timeout="${CONFORMANCE_TIMEOUT:-600}"
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

echo "building the client: $bin"
go -C conformance build -o "$bin" ./client

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

failed_sets=0
total_pass=0
total_fail=0
summaries=()
for set in "${sets[@]}"; do
	log="$work/$set.log"
	out="$work/$set"
	rm -rf "$out"
	echo
	echo "== requirements $set (log: $log)"
	set_start=$SECONDS
	rc=0
	timeout --kill-after=10 "$set_timeout" \
		"$node" "$entry" client --command "$bin" --requirements "$set" \
		--timeout "$scenario_timeout" -o "$out" >"$log" 2>&1 || rc=$?
	elapsed=$((SECONDS - set_start))

	# The client scenarios the set requires (the suite's own list).
	mapfile -t required < <("$node" "$entry" list --client --requirements "$set" |
		awk '/^Client scenarios/ { on = 1; next } on && /^  - / { print $2; next } on && !NF { exit }')
	if [[ ${#required[@]} -eq 0 ]]; then
		echo "run.sh: the suite lists no client scenarios for $set" >&2
		exit 2
	fi

	# "✓ name: 3 passed, 0 failed" lines of the suite's summary.
	summary="$(awk '/=== SUITE SUMMARY ===/ { on = 1; next } on && /^(✓|✗) / { print }' "$log")"
	pass=0
	fail=0
	failing=()
	echo "required client scenarios (checks passed, failed):"
	for s in "${required[@]}"; do
		line="$(grep -F -- " $s: " <<<"$summary" | head -n1 || true)"
		reason=""
		if [[ -z "$line" ]]; then
			reason="not in the suite's summary"
		elif [[ "$line" != "✓ "* ]]; then
			reason="${line#* $s: }"
		elif [[ "$line" == *": 0 passed,"* ]]; then
			reason="no checks emitted"
		fi
		echo "  ${line:-✗ $s: missing}"
		if [[ -z "$reason" ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			failing+=("$s: $reason")
		fi
	done
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))

	if [[ ${#failing[@]} -gt 0 ]]; then
		echo "failing required scenarios:"
		for f in "${failing[@]}"; do
			s="${f%%: *}"
			echo "  ✗ $f"
			# The failed checks, from the scenario's checks.json.
			for checks in "$out/$s"-*/checks.json; do
				[[ -f "$checks" ]] || continue
				"$node" -e '
					for (const c of require(process.argv[1]))
						if (c.status === "FAILURE")
							console.log("      " + c.id + ": " + (c.errorMessage || c.description || ""));
				' "$checks"
				echo "      client stderr: $(dirname "$checks")/stderr.txt"
			done
		done
	fi
	# What the set runs without scoring (extensions, scenarios added after
	# its release): reported, never counted.
	sed -n '/^Not scored for /,/^$/p' "$log"
	if [[ $rc -ne 0 ]]; then
		if [[ $rc -eq 124 || $rc -eq 137 ]]; then
			echo "the suite did not finish within ${set_timeout}s (exit $rc)"
		else
			echo "the suite exited with status $rc"
		fi
	fi
	echo "requirements $set: ${elapsed}s"
	if [[ $fail -gt 0 || $rc -ne 0 ]]; then
		failed_sets=$((failed_sets + 1))
	fi
	summaries+=("$set: $pass passed, $fail failed")
done

echo
echo "wall time: $((SECONDS - start))s; results in $work"
for s in "${summaries[@]}"; do
	echo "$s"
done
if [[ $failed_sets -gt 0 ]]; then
	exit 1
fi
