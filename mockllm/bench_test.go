package mockllm

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkChunkRate measures the chunks per second the mock streams on one core
// (GOMAXPROCS=1, shared with the client), ITL = TTFT = 0, many concurrent streams
// read by a trivial client, against a floor: a bare net/http handler writing the same
// number of precomputed chunk lines with a flush after each.
//
//	go test -run '^$' -bench BenchmarkChunkRate -benchtime 2000x ./mockllm/
func BenchmarkChunkRate(b *testing.B) {
	const (
		tokens  = 256 // chunks per stream
		streams = 64  // concurrent streams
	)
	body := `{"model":"m","messages":[{"role":"user","content":"bench"}],"stream":true,"max_tokens":` + strconv.Itoa(tokens) + `}`

	// The floor writes a real chat chunk of the mock, precomputed.
	e := newEnc(dChat, "chatcmpl-bench-1", "m", 1, 2, false, false)
	line := e.chunk(nil, []int{1}, false, false)
	floor := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for range tokens {
			if _, err := w.Write(line); err != nil {
				return
			}
			f.Flush()
		}
		_, _ = w.Write([]byte("data: [DONE]\n\n"))
	})

	for _, bc := range []struct {
		name    string
		handler func() (http.Handler, func())
	}{
		{"mockllm", func() (http.Handler, func()) {
			s := New(Config{TTFT: -1, ITL: -1})
			return s, func() { _ = s.Close() }
		}},
		{"floor", func() (http.Handler, func()) { return floor, func() {} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			h, stop := bc.handler()
			defer stop()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(b, err)
			hs := &http.Server{Handler: h}
			served := make(chan struct{})
			go func() { defer close(served); _ = hs.Serve(ln) }()
			defer func() {
				_ = hs.Shutdown(context.Background())
				<-served
			}()
			tr := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			url := "http://" + ln.Addr().String() + "/v1/chat/completions"

			b.ReportAllocs()
			b.SetParallelism(streams) // × GOMAXPROCS (1) client goroutines
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Post(url, "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					_, err = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if err != nil {
						b.Error(err)
						return
					}
				}
			})
			elapsed := time.Since(start)
			chunks := float64(b.N) * tokens
			b.ReportMetric(chunks/elapsed.Seconds(), "chunks/s")
			b.ReportMetric(float64(elapsed.Nanoseconds())/chunks, "ns/chunk")
			b.ReportMetric(0, "ns/op") // per-request time is not the quantity here
		})
	}
}

// BenchmarkScheduleLateness measures how late the mock emits chunks against its own
// plan (actual gap − planned delay, from Truth) at 1 and 1,000 concurrent streams with
// a 2 ms ITL. Truth records the actual times, so lateness never falsifies ground
// truth; it shows how faithfully the configured latency model is delivered.
//
//	go test -run '^$' -bench BenchmarkScheduleLateness -benchtime 1x ./mockllm/
func BenchmarkScheduleLateness(b *testing.B) {
	for _, streams := range []int{1, 1000} {
		b.Run(strconv.Itoa(streams)+"_streams", func(b *testing.B) {
			const tokens = 50
			srv, _ := startServer(b, Config{TTFT: 5 * time.Millisecond, ITL: 2 * time.Millisecond, RecordTruth: true})
			tr := &http.Transport{MaxIdleConnsPerHost: streams, MaxConnsPerHost: streams}
			defer tr.CloseIdleConnections()
			c := &http.Client{Transport: tr}
			body := `{"prompt":"x","stream":true,"max_tokens":` + strconv.Itoa(tokens) + `}`
			var late []time.Duration
			for b.Loop() {
				errs := make(chan error, streams)
				for range streams {
					go func() {
						resp, err := c.Post(srv.URL()+"/v1/completions", "application/json", strings.NewReader(body))
						if err == nil {
							_, err = io.Copy(io.Discard, resp.Body)
							resp.Body.Close()
						}
						errs <- err
					}()
				}
				for range streams {
					if err := <-errs; err != nil {
						b.Fatal(err)
					}
				}
			}
			for _, t := range srv.Truths() {
				for i := 1; i < len(t.Chunks); i++ {
					late = append(late, t.Chunks[i].Sub(t.Chunks[i-1])-t.Delays[i])
				}
			}
			slices.Sort(late)
			if len(late) == 0 {
				b.Fatal("no gaps recorded")
			}
			q := func(p float64) float64 { return float64(late[int(p*float64(len(late)-1))].Microseconds()) }
			b.ReportMetric(q(0.5), "p50_late_µs")
			b.ReportMetric(q(0.99), "p99_late_µs")
			b.ReportMetric(0, "ns/op")
		})
	}
}
