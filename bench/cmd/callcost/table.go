package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
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

// printInstructions prints the instructions per call alone (-runs 0).
func printInstructions(w io.Writer, instr map[string]float64) {
	fmt.Fprintln(w, "| transport | era | client | instructions/call |")
	fmt.Fprintln(w, "|---|---|---|---:|")
	for _, tr := range transports {
		for _, era := range eras {
			for _, cl := range clients {
				ins := "—"
				if v, ok := instr[tr+"/"+era+"/"+cl]; ok {
					ins = fmt.Sprintf("%.0f k", v/1000)
				}
				fmt.Fprintf(w, "| %s | %s | %s | %s |\n", tr, era, cl, ins)
			}
		}
	}
}

// instrLine is the JSON line of one cell's instruction count.
type instrLine struct {
	Cell         string  `json:"instructions_cell"`
	Instructions float64 `json:"instructions"`
}

// printReport prints the table of the JSON lines in path: measurements and
// instruction counts, from one run or several.
func printReport(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var all []measurement
	instr := map[string]float64{}
	runs := map[string]int{}
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var il instrLine
		if json.Unmarshal(line, &il) == nil && il.Cell != "" {
			instr[il.Cell] = il.Instructions
			continue
		}
		var m measurement
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		all = append(all, m)
		k := m.Transport + "/" + m.Era + "/" + m.Client
		runs[k]++
		n = m.N
	}
	if err := sc.Err(); err != nil {
		return err
	}
	most := 0
	for _, r := range runs {
		most = max(most, r)
	}
	printTable(os.Stdout, all, instr, n, most)
	return nil
}
