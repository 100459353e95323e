package executor

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkConstantArrivalRate measures how closely constant-arrival-rate keeps its
// schedule on the real clock with a trivial VU: achieved rate, and the lag behind
// schedule (p50, p99, max) that Hooks.Lag reports. One op is one 1s run.
func BenchmarkConstantArrivalRate(b *testing.B) {
	for _, rate := range []int64{1000, 10000, 50000} {
		b.Run(strconv.FormatInt(rate, 10)+"_per_s", func(b *testing.B) {
			var mu sync.Mutex
			var lags []time.Duration
			var started, dropped int64
			var took time.Duration
			for b.Loop() {
				sc := scenario("car", ConstantArrivalRate)
				sc.Rate, sc.Duration, sc.PreAllocatedVUs, sc.MaxVUs = rate, time.Second, 50, 200
				r, err := NewRun([]Scenario{sc}, &fakePool{}, Hooks{Lag: func(_ *Scenario, d time.Duration) {
					mu.Lock()
					lags = append(lags, d)
					mu.Unlock()
				}})
				if err != nil {
					b.Fatal(err)
				}
				begin := time.Now()
				if err := r.Start(context.Background()); err != nil {
					b.Fatal(err)
				}
				took += time.Since(begin)
				p := r.Progress().Scenarios[0]
				started += p.Started
				dropped += p.Dropped
			}
			slices.Sort(lags)
			n := float64(b.N)
			b.ReportMetric(float64(started)/n/float64(rate)*100, "%_of_target")
			b.ReportMetric(float64(dropped)/n, "dropped/run")
			if len(lags) > 0 {
				b.ReportMetric(float64(lags[len(lags)/2].Microseconds()), "lag_p50_µs")
				b.ReportMetric(float64(lags[len(lags)*99/100].Microseconds()), "lag_p99_µs")
				b.ReportMetric(float64(lags[len(lags)-1].Microseconds()), "lag_max_µs")
			}
		})
	}
}

// BenchmarkSharedIterations is the executor's own cost per iteration with a trivial VU.
func BenchmarkSharedIterations(b *testing.B) {
	for _, vus := range []int64{1, 8} {
		b.Run(map[int64]string{1: "1vu", 8: "8vus"}[vus], func(b *testing.B) {
			b.ReportAllocs()
			sc := scenario("s", SharedIterations)
			sc.VUs, sc.Iterations = vus, max(int64(b.N), vus)
			r, err := NewRun([]Scenario{sc}, &fakePool{}, Hooks{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			if err := r.Start(context.Background()); err != nil {
				b.Fatal(err)
			}
		})
	}
}

func BenchmarkPlans(b *testing.B) {
	b.Run("constant", func(b *testing.B) {
		c := constantArrivals{rate: 7, unit: time.Second, duration: time.Hour}
		var k int64
		for b.Loop() {
			k++
			c.at(k)
		}
	})
	b.Run("ramping", func(b *testing.B) {
		r := newRampingArrivals(0, time.Second, []Stage{{time.Minute, 100}, {time.Minute, 10}, {time.Minute, 500}})
		var k int64
		for b.Loop() {
			k = (k + 1) % 20000
			r.at(k)
		}
	})
}
