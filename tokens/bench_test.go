package tokens

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/tokenstorm/tokenstorm/llm"
)

// benchValues are ITL-like samples in milliseconds (log-normal around 20 ms).
func benchValues(n int) []float64 {
	r := rand.New(rand.NewPCG(41, 42))
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = math.Exp(3 + 0.8*r.NormFloat64())
	}
	return vals
}

// BenchmarkTrendAdd compares the cost per sample of the exact mode, the sketch, and the
// plain alternative (append to a []float64, sort to query). Each mode answers one
// p(99) query per 1<<16 samples, so sorting is charged to the modes that need it.
func BenchmarkTrendAdd(b *testing.B) {
	const window = 1 << 16
	vals := benchValues(window)
	b.Run("exact", func(b *testing.B) {
		s := NewTrendSink(WithExactLimit(window))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Add(vals[i])
			if i++; i == window {
				_ = s.Percentile(99)
				s.Reset()
				i = 0
			}
		}
	})
	b.Run("sketch", func(b *testing.B) {
		s := NewTrendSink(WithExactLimit(0))
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Add(vals[i])
			if i++; i == window {
				_ = s.Percentile(99)
				i = 0
			}
		}
	})
	b.Run("slice-append-sort", func(b *testing.B) {
		var s []float64
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s = append(s, vals[i])
			if i++; i == window {
				slices.Sort(s)
				_ = s[int(0.99*float64(len(s)-1))]
				s = s[:0]
				i = 0
			}
		}
	})
}

// BenchmarkPercentile measures one p(99) query: exact with the sorted cache warm, exact
// right after an add (re-sort of nearly sorted data), and the sketch over 1e6 samples.
func BenchmarkPercentile(b *testing.B) {
	vals := benchValues(1 << 16)
	b.Run("exact-cached", func(b *testing.B) {
		s := NewTrendSink()
		for _, v := range vals {
			s.Add(v)
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Percentile(99)
		}
	})
	b.Run("exact-after-add", func(b *testing.B) {
		s := NewTrendSink(WithExactLimit(math.MaxInt))
		for _, v := range vals {
			s.Add(v)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Add(vals[i%len(vals)])
			i++
			_ = s.Percentile(99)
		}
	})
	b.Run("sketch-1e6", func(b *testing.B) {
		s := NewTrendSink(WithExactLimit(0))
		for i := range 1_000_000 {
			s.Add(vals[i%len(vals)] * (1 + float64(i)/1e6))
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = s.Percentile(99)
		}
	})
}

// BenchmarkMerge measures merging one worker's trend into the total.
func BenchmarkMerge(b *testing.B) {
	vals := benchValues(1 << 16)
	for _, tc := range []struct {
		name  string
		limit int
	}{{"exact-4096", 1 << 30}, {"sketch", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			w := NewTrendSink(WithExactLimit(tc.limit))
			for _, v := range vals[:4096] {
				w.Add(v)
			}
			total := NewTrendSink(WithExactLimit(tc.limit))
			b.ReportAllocs()
			for b.Loop() {
				total.Merge(w)
				if total.Count() > 1<<20 {
					total.Reset()
				}
			}
		})
	}
}

// BenchmarkVisit is the per-result cost of walking a result's metric values (32 ITL
// gaps) and of recording them in a Recorder.
func BenchmarkVisit(b *testing.B) {
	gaps := make([]time.Duration, 32)
	for i := range gaps {
		gaps[i] = time.Duration(10+i) * time.Millisecond
	}
	r := &llm.Result{Status: 200, TTFB: 5 * time.Millisecond, TTFT: 50 * time.Millisecond, TTFO: 50 * time.Millisecond,
		ITL: gaps, E2E: time.Second, Duration: time.Second, PromptTokens: 100, CompletionTokens: 33}
	slo := SLO{TTFT: time.Second}
	b.Run("Visit", func(b *testing.B) {
		var sum float64
		b.ReportAllocs()
		for b.Loop() {
			Visit(r, slo, func(_ string, v float64) { sum += v })
		}
	})
	b.Run("Recorder.Add", func(b *testing.B) {
		rec := NewRecorder(slo, WithExactLimit(0))
		b.ReportAllocs()
		for b.Loop() {
			rec.Add(r)
		}
	})
}
