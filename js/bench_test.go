//go:build unix

package js_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js"
	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

// benchMock starts a mock with the given first-token and per-token latency.
func benchMock(b *testing.B, ttft, itl time.Duration) string {
	b.Helper()
	srv, err := mockllm.Start(context.Background(), "", mockllm.Config{TTFT: ttft, ITL: itl, Seed: 1})
	require.NoError(b, err)
	b.Cleanup(func() { _ = srv.Close() })
	return srv.URL() + "/v1"
}

// benchIterations is how many requests each side of a comparison makes, whatever b.N
// is (make bench runs with -benchtime 1x): enough for a stable per-iteration mean.
func benchIterations(b *testing.B) int64 { return max(int64(b.N), 2000) }

// BenchmarkIteration compares one iteration that makes one mock request through the
// whole runner (executor, VU, JS, module, client, metrics) with the same request made
// by llm.Client from plain Go, in the same run against the same mock. ns/iter is wall
// time per iteration (for the runner: the iterations' own iteration_duration), cpu-ns/iter
// the process CPU per iteration, compile and init of the run included.
func BenchmarkIteration(b *testing.B) {
	url := benchMock(b, 50*time.Microsecond, 10*time.Microsecond)
	b.Run("runner", func(b *testing.B) {
		n := benchIterations(b)
		b.ReportAllocs()
		for b.Loop() {
			cpu0 := cpuTime()
			rep, err := js.Run(context.Background(), "testdata/mock_request.js", js.Options{
				Iterations: &n, Env: map[string]string{"MOCK_URL": url},
				Stdout: io.Discard, Stderr: io.Discard, Quiet: true,
			})
			require.NoError(b, err)
			require.Equal(b, js.ExitOK, rep.ExitCode, "%v", rep.Err)
			// The iterations' own wall time, excluding compile and init, which a run pays once.
			it := rep.Summary.Trend("iteration_duration")
			b.ReportMetric(it.Avg()*1e6, "ns/iter")
			b.ReportMetric(float64(n)/rep.Duration.Seconds(), "iter/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/iter")
		}
	})
	b.Run("go", func(b *testing.B) {
		n := benchIterations(b)
		c, err := llm.NewClient(llm.Config{BaseURL: url, Model: "mock-model"})
		require.NoError(b, err)
		defer c.Close()
		req := &llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 8}
		b.ReportAllocs()
		for b.Loop() {
			start, cpu0 := time.Now(), cpuTime()
			for range n {
				if r := c.Do(context.Background(), req); !r.OK() {
					b.Fatalf("request failed: %v", r.Err)
				}
			}
			el := time.Since(start)
			b.ReportMetric(float64(el.Nanoseconds())/float64(n), "ns/iter")
			b.ReportMetric(float64(n)/el.Seconds(), "iter/s")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n), "cpu-ns/iter")
		}
	})
}

// cpuTime is the process's user+system CPU time: on a shared machine the CPU an
// iteration costs is a steadier measure of overhead than wall time. The mock runs in the
// same process, so both sides of a comparison include it.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapProbe measures the live heap when the script logs MEASURE-HEAP.
type heapProbe struct {
	heap uint64
}

func (h *heapProbe) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("MEASURE-HEAP")) {
		h.heap = liveHeap()
	}
	return len(p), nil
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkVUMemory reports the live heap per initialised VU (script with the
// tokenstorm module and one client per VU), read in setup() when all planned VUs exist.
// k6 documents roughly 1-5 MB per VU.
func BenchmarkVUMemory(b *testing.B) {
	url := benchMock(b, time.Millisecond, time.Millisecond)
	for _, vus := range []int{100, 1000} {
		b.Run(fmt.Sprintf("vus=%d", vus), func(b *testing.B) {
			for b.Loop() {
				before := liveHeap()
				probe := &heapProbe{}
				rep, err := js.Run(context.Background(), "testdata/bench_memory.js", js.Options{
					Env:    map[string]string{"MOCK_URL": url, "VUS": strconv.Itoa(vus)},
					Stdout: io.Discard, Stderr: probe, Quiet: true,
				})
				require.NoError(b, err)
				require.Equal(b, js.ExitOK, rep.ExitCode, "%v", rep.Err)
				require.NotZero(b, probe.heap, "setup() did not log")
				per := float64(probe.heap-min(before, probe.heap)) / float64(vus)
				b.ReportMetric(per, "B/VU")
			}
		})
	}
}

// BenchmarkArrivalRate drives constant-arrival-rate against a mock at 1 ms TTFT and
// reports the rate sustained, the schedule lag p99 and the dropped iterations.
// BENCH_RATE (default 1000/s) and BENCH_DURATION (default 3s) can be set in the
// environment.
func BenchmarkArrivalRate(b *testing.B) {
	url := benchMock(b, time.Millisecond, 100*time.Microsecond)
	rate := envOr("BENCH_RATE", "1000")
	env := map[string]string{
		"MOCK_URL": url, "RATE": rate, "DURATION": envOr("BENCH_DURATION", "3s"),
		"VUS": "100", "MAX_VUS": "1000",
	}
	for b.Loop() {
		rep, err := js.Run(context.Background(), "testdata/bench_arrival.js", js.Options{
			Env: env, Stdout: io.Discard, Stderr: io.Discard, Quiet: true,
		})
		require.NoError(b, err)
		require.Equal(b, js.ExitOK, rep.ExitCode, "%v", rep.Err)
		s := rep.Summary
		d, _ := time.ParseDuration(env["DURATION"])
		target, _ := strconv.ParseFloat(rate, 64)
		started := s.Counter("iterations")
		b.ReportMetric(started/d.Seconds(), "iter/s")
		b.ReportMetric(started/(target*d.Seconds())*100, "%target")
		b.ReportMetric(s.Counter("dropped_iterations"), "dropped")
		if lag := s.Trend(js.ScheduleLagMetric); lag != nil {
			b.ReportMetric(lag.P(99), "lag-p99-ms")
			b.ReportMetric(lag.Max(), "lag-max-ms")
		}
		if ttft := s.Trend("llm_ttft"); ttft != nil {
			b.ReportMetric(ttft.P(99), "ttft-p99-ms")
		}
	}
}

func envOr(k, def string) string {
	if v, ok := os.LookupEnv(k); ok {
		return v
	}
	return def
}
