#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned in internal/testenv/npm/package.json) against the mcpadapter
# conformance client (conformance/client): every client scenario the suite
# lists, at every spec version it lists the scenario for, and each
# extension scenario once.
#
#	bash conformance/run.sh [SET...]	(default: every spec version the
#						suite lists, then "extensions")
#
# A SET is a spec version (2025-11-25, ...) or "extensions". Each set is one
# run of the suite (its scenarios in parallel). The script prints one line
# per scenario run, lists each failing run with its failed checks, and ends
# with "N of M runs passed"; it exits non-zero if any run failed. A run
# passes when the suite marks it passed with at least one passed check (the
# suite marks a scenario that emitted no check at all, or only skipped
# ones, as passed; this script does not).
#
# Environment:
#	CONFORMANCE_RESULTS	directory for the client binary, the suite's logs
#				and its per-scenario results (default: a new
#				temporary directory, kept and printed)
#	CONFORMANCE_TIMEOUT	seconds allowed for one set (default 600)
#	CONFORMANCE_SCENARIO_TIMEOUT_MS	the suite's per-scenario timeout (default 30000)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

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
	mapfile -t sets < <(printf '%s\n' "${runs[@]}" | awk '$2 != "extension" { print $2 }' | sort -u)
	sets+=(extensions)
fi

total_pass=0
total_fail=0
failed_sets=0
failing=()
for set in "${sets[@]}"; do
	log="$work/$set.log"
	out="$work/$set"
	rm -rf "$out"
	if [[ "$set" == extensions ]]; then
		args=(--suite extensions)
		version=extension
	else
		args=(--suite all --spec-version "$set")
		version="$set"
	fi
	mapfile -t expected < <(printf '%s\n' "${runs[@]}" | awk -v v="$version" '$2 == v { print $1 }')
	echo
	echo "== $set: ${#expected[@]} scenarios (log: $log)"
	if [[ ${#expected[@]} -eq 0 ]]; then
		echo "run.sh: the suite lists no client scenario for $set" >&2
		exit 2
	fi
	set_start=$SECONDS
	rc=0
	timeout --kill-after=10 "$set_timeout" \
		"$node" "$entry" client --command "$bin" "${args[@]}" \
		--timeout "$scenario_timeout" -o "$out" >"$log" 2>&1 || rc=$?
	elapsed=$((SECONDS - set_start))

	# "✓ name: 3 passed, 0 failed" lines of the suite's summary.
	summary="$(awk '/=== SUITE SUMMARY ===/ { on = 1; next } on && /^(✓|✗|-) / { print }' "$log")"
	if [[ "$set" == extensions ]]; then
		# Extensions outside the suite's "extensions" group (the skills
		# extension) run one by one, in parallel, judged the same way
		# from their checks.json.
		pids=()
		for s in "${expected[@]}"; do
			grep -qF -- " $s: " <<<"$summary" && continue
			timeout --kill-after=10 "$set_timeout" \
				"$node" "$entry" client --command "$bin" --scenario "$s" \
				--timeout "$scenario_timeout" -o "$out" >"$log.${s//\//-}" 2>&1 &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || true; done
		for s in "${expected[@]}"; do
			grep -qF -- " $s: " <<<"$summary" && continue
			for checks in "$out/$s"-2*/checks.json; do
				[[ -f "$checks" ]] || continue
				summary+=$'\n'"$("$node" -e '
					const cs = require(process.argv[1]);
					const n = (st) => cs.filter((c) => c.status === st).length;
					const ok = n("FAILURE") === 0 && n("WARNING") === 0;
					console.log((ok ? "✓ " : "✗ ") + process.argv[2] + ": " + n("SUCCESS") + " passed, " + n("FAILURE") + " failed" + (n("SKIPPED") ? ", " + n("SKIPPED") + " skipped" : ""));
				' "$checks" "$s")"
			done
		done
	fi
	for s in "${expected[@]}"; do
		line="$(grep -F -- " $s: " <<<"$summary" | head -n1 || true)"
		reason=""
		if [[ -z "$line" ]]; then
			reason="not in the suite's summary"
		elif [[ "$line" != "✓ "* ]]; then
			reason="${line#* $s: }"
		elif [[ "$line" == *": 0 passed,"* ]]; then
			reason="no passed check"
		fi
		echo "  ${line:-✗ $s: missing}"
		if [[ -z "$reason" ]]; then
			total_pass=$((total_pass + 1))
			continue
		fi
		total_fail=$((total_fail + 1))
		failing+=("$set $s: $reason")
		# The failed (or skipped) checks, from the scenario's checks.json.
		for checks in "$out/$s"-2*/checks.json; do
			[[ -f "$checks" ]] || continue
			"$node" -e '
				for (const c of require(process.argv[1]))
					if (c.status === "FAILURE" || c.status === "SKIPPED" || c.status === "WARNING")
						console.log("      " + c.status + " " + c.id + ": " + (c.errorMessage || c.description || ""));
			' "$checks"
			echo "      client stderr: $(dirname "$checks")/stderr.txt"
		done
	done
	if [[ $rc -eq 124 || $rc -eq 137 ]]; then
		echo "the suite did not finish within ${set_timeout}s (exit $rc)"
		failed_sets=$((failed_sets + 1))
	fi
	echo "$set: ${elapsed}s"
done

echo
echo "wall time: $((SECONDS - start))s; results in $work"
if [[ ${#failing[@]} -gt 0 ]]; then
	echo "failing runs:"
	printf '  ✗ %s\n' "${failing[@]}"
fi
echo "$total_pass of $((total_pass + total_fail)) runs passed"
if [[ $total_fail -gt 0 || $failed_sets -gt 0 ]]; then
	exit 1
fi
