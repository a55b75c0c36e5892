package main

import (
	"math"
	"testing"
)

// TestSlope: the least-squares slope of RSS over sessions open is the
// bytes each session adds, however much the first point holds, and
// a step that grew a heap ahead of its sessions moves it by its share.
func TestSlope(t *testing.T) {
	for _, tc := range []struct {
		xs, ys []float64
		want   float64
	}{
		{[]float64{200, 400, 600, 800, 1000}, []float64{1e6 + 200*70, 1e6 + 400*70, 1e6 + 600*70, 1e6 + 800*70, 1e6 + 1000*70}, 70},
		{[]float64{1, 2, 3}, []float64{0, 10, 20}, 10},
		{[]float64{1, 2, 3, 4}, []float64{0, 0, 30, 30}, 12},
		{[]float64{5, 5}, []float64{1, 2}, 0}, // no spread: no slope
	} {
		if got := slope(tc.xs, tc.ys); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("slope(%v, %v) = %v, want %v", tc.xs, tc.ys, got, tc.want)
		}
	}
}
