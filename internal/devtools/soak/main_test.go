package main

import (
	"testing"
	"time"
)

func TestIDSetKeepsEveryIDOnce(t *testing.T) {
	var s idSet
	ids := []int64{0, 1, 63, 64, 1000, 1, 64}
	for _, id := range ids {
		s.add(id)
	}
	var got []int64
	s.each(func(id int64) { got = append(got, id) })
	want := []int64{0, 1, 63, 64, 1000}
	if s.n != len(want) || len(got) != len(want) {
		t.Fatalf("n %d, ids %v, want %v", s.n, got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("ids %v, want %v", got, want)
		}
	}
}

func TestHistogramPercentilesBoundTheDurations(t *testing.T) {
	var h histogram
	for i := 1; i <= 100; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration // the true value; the bucket's bound is at most 12% above it
	}{{0.5, 50 * time.Millisecond}, {0.99, 99 * time.Millisecond}, {1, 100 * time.Millisecond}} {
		got := h.percentile(tc.p)
		if got < tc.want || float64(got) > float64(tc.want)*1.13 {
			t.Errorf("p%v = %v, want within 12%% above %v", tc.p*100, got, tc.want)
		}
	}
}
