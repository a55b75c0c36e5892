#!/usr/bin/env python3
"""Reads `go test -bench` output on stdin and prints, per benchmark pair
NAME/adapter vs NAME/go-sdk, the median ns/op of each and their ratio."""
import re, statistics, sys
runs = {}
for line in sys.stdin:
    m = re.match(r'^(Benchmark\S+?)(-\d+)?\s+\d+\s+([\d.]+) ns/op', line)
    if m:
        runs.setdefault(m.group(1), []).append(float(m.group(3)))
print("| benchmark | adapter (median ns/op) | go-sdk (median ns/op) | ratio |")
print("|---|---:|---:|---:|")
for name in sorted(runs):
    if not name.endswith("/adapter"):
        continue
    peer = name[: -len("adapter")] + "go-sdk"
    if peer not in runs:
        continue
    a, g = statistics.median(runs[name]), statistics.median(runs[peer])
    print(f"| {name[:-len('/adapter')]} | {a:,.0f} | {g:,.0f} | {a/g:.2f} |")
