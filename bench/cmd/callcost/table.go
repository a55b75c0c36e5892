package main

import (
	"fmt"
	"io"
	"slices"
)

// median returns the median of the field f of ms.
func median(ms []measurement, f func(measurement) float64) float64 {
	v := make([]float64, len(ms))
	for i, m := range ms {
		v[i] = f(m)
	}
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// printTable prints one row per transport, era and client: medians, and
// the CPU ratio to the limit of the same transport and era.
func printTable(w io.Writer, all []measurement, instr map[string]float64, n, runs int) {
	fmt.Fprintf(w, "%d sequential echo calls per run, median of %d runs; CPU = user+system of the client process\n\n", n, runs)
	fmt.Fprintln(w, "| transport | era | client | CPU µs/call | × limit | instructions/call | bytes/call | allocs/call | new TCP conns/call |")
	fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---:|---:|---:|")
	for _, tr := range transports {
		for _, era := range eras {
			var limit float64
			for _, cl := range clients {
				var ms []measurement
				for _, m := range all {
					if m.Transport == tr && m.Era == era && m.Client == cl {
						ms = append(ms, m)
					}
				}
				cpu := median(ms, func(m measurement) float64 { return m.CPUus })
				if cl == "limit" {
					limit = cpu
				}
				ins := "—"
				if v, ok := instr[tr+"/"+era+"/"+cl]; ok {
					ins = fmt.Sprintf("%.0f k", v/1000)
				}
				conns := "—"
				if tr == "http" {
					conns = fmt.Sprintf("%.4f", median(ms, func(m measurement) float64 { return m.NewConns }))
				}
				fmt.Fprintf(w, "| %s | %s | %s | %.0f | %.2f× | %s | %.0f | %.0f | %s |\n", tr, era, cl, cpu, cpu/limit, ins,
					median(ms, func(m measurement) float64 { return m.Bytes }),
					median(ms, func(m measurement) float64 { return m.Allocs }), conns)
			}
		}
	}
}
