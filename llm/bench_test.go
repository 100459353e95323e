package llm

// Benchmarks of issue 2 (docs/benchmarks.md has the numbers and the commands):
//
//	BenchmarkDecode            in-memory decoding per chunk: ours vs floor, plain Go, openai-go
//	BenchmarkClientCPU         socket → result CPU per chunk (getrusage), same four clients
//	BenchmarkStretch           256 streams with 2 ms server gaps: measured mean gap / 2 ms
//	BenchmarkAccuracy          |client stamp − mock ground truth| for TTFT and gaps, 1 and 1,000
//	                           streams, a hard and a realistic setting, three ways of stamping
//	BenchmarkIdleStreamMemory  client memory per open idle stream, 1,000 and 10,000 streams
//
// The server of ClientCPU, Stretch and IdleStreamMemory runs in a child process (this
// test binary re-executed), so getrusage(RUSAGE_SELF) and the heap count only the
// client.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// benchChunk is a realistic vLLM chat chunk (about 230 bytes on the wire).
func benchChunk(i int) string {
	words := []string{" the", " token", " stream", ",", " and", " déjà", " vu", "\\n"}
	return `data: {"id":"chatcmpl-8a2f4c1e9b7d4e3f","object":"chat.completion.chunk","created":1796020129,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"content":"` +
		words[i%len(words)] + `"},"logprobs":null,"finish_reason":null}]}` + "\n\n"
}

func benchStream(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`data: {"id":"chatcmpl-8a2f4c1e9b7d4e3f","object":"chat.completion.chunk","created":1796020129,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	for i := range n {
		b.WriteString(benchChunk(i))
	}
	b.WriteString(benchTail)
	return b.Bytes()
}

const benchTail = `data: {"id":"chatcmpl-8a2f4c1e9b7d4e3f","object":"chat.completion.chunk","created":1796020129,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}]}` + "\n\n" +
	`data: {"id":"chatcmpl-8a2f4c1e9b7d4e3f","object":"chat.completion.chunk","created":1796020129,"model":"meta-llama/Llama-3.1-8B-Instruct","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":1000,"total_tokens":1012}}` + "\n\n" +
	"data: [DONE]\n\n"

// --- the compared clients, each reading one stream and returning chunk stamps ---

// floorRead only splits lines and recognises data lines: no JSON at all.
func floorRead(body io.Reader, stamps []time.Time) (int, []time.Time) {
	br := bufio.NewReaderSize(body, 4096)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 6 && string(line[:6]) == "data: " && !bytes.HasPrefix(line[6:], []byte("[DONE]")) {
			n++
			if stamps != nil {
				stamps = append(stamps, time.Now())
			}
		}
		if err != nil {
			return n, stamps
		}
	}
}

type plainChunk struct {
	ID      string `json:"id"`
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// plainRead is what a Go programmer writes first: bufio.Scanner + encoding/json.
func plainRead(body io.Reader, stamps []time.Time) (int, string, []time.Time) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var text strings.Builder
	n := 0
	for sc.Scan() {
		l := sc.Bytes()
		if !bytes.HasPrefix(l, []byte("data: ")) || bytes.Equal(l[6:], []byte("[DONE]")) {
			continue
		}
		at := time.Now()
		var c plainChunk
		if json.Unmarshal(l[6:], &c) != nil {
			break
		}
		n++
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			text.WriteString(c.Choices[0].Delta.Content)
			if stamps != nil {
				stamps = append(stamps, at)
			}
		}
	}
	return n, text.String(), stamps
}

func openaiRead(s *ssestream.Stream[openai.ChatCompletionChunk], stamps []time.Time) (int, string, []time.Time) {
	var text strings.Builder
	n := 0
	for s.Next() {
		c := s.Current()
		n++
		if len(c.Choices) > 0 && c.Choices[0].Delta.Content != "" {
			text.WriteString(c.Choices[0].Delta.Content)
			if stamps != nil {
				stamps = append(stamps, time.Now())
			}
		}
	}
	s.Close()
	return n, text.String(), stamps
}

// BenchmarkDecode decodes an in-memory 1,000-chunk chat stream.
func BenchmarkDecode(b *testing.B) {
	const chunks = 1000
	body := benchStream(chunks)
	total := chunks + 3 // role, finish, usage
	report := func(b *testing.B, run func()) {
		run()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		n := 0
		for b.Loop() {
			run()
			n++
		}
		el := time.Since(start)
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(el.Nanoseconds())/float64(n*total), "ns/chunk")
		b.ReportMetric(float64(m1.Mallocs-m0.Mallocs)/float64(n*total), "allocs/chunk")
	}
	b.Run("tokenstorm", func(b *testing.B) {
		c, _ := NewClient(Config{BaseURL: "http://127.0.0.1:1"})
		st := new(reqState)
		r := bytes.NewReader(nil)
		report(b, func() {
			st.a.reset()
			r.Reset(body)
			res := Result{}
			if err := c.readStream(st, r, &res, time.Now(), nil, chunks); err != nil || res.ContentChunks != chunks {
				b.Fatal(err, res.ContentChunks)
			}
		})
	})
	b.Run("floor", func(b *testing.B) {
		r := bytes.NewReader(nil)
		report(b, func() {
			r.Reset(body)
			if n, _ := floorRead(r, nil); n != total {
				b.Fatal(n)
			}
		})
	})
	b.Run("plain-go", func(b *testing.B) {
		r := bytes.NewReader(nil)
		report(b, func() {
			r.Reset(body)
			if n, _, _ := plainRead(r, nil); n != total {
				b.Fatal(n)
			}
		})
	})
	b.Run("openai-go", func(b *testing.B) {
		r := bytes.NewReader(nil)
		hdr := http.Header{"Content-Type": {"text/event-stream"}}
		report(b, func() {
			r.Reset(body)
			s := ssestream.NewStream[openai.ChatCompletionChunk](ssestream.NewDecoder(&http.Response{Header: hdr, Body: io.NopCloser(r)}), nil)
			if n, _, _ := openaiRead(s, nil); n != total {
				b.Fatal(n)
			}
		})
	})
}

// --- child-process server ---

const benchServerEnv = "TOKENSTORM_LLM_BENCH_SERVER"

// runBenchServer serves streams until stdin closes. Request headers choose the stream:
// X-Bench-Chunks (content chunks), X-Bench-Gap (pause between chunks, paced on an
// absolute schedule), X-Bench-Stall (send one chunk, then hold the stream open).
// GET /stalled returns how many held streams got their first chunk flushed.
func runBenchServer() {
	if spec, ok := strings.CutPrefix(os.Getenv(benchServerEnv), "mock "); ok {
		runMockChild(spec)
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	var stalled atomic.Int64
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stalled", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, stalled.Load())
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		n, _ := strconv.Atoi(r.Header.Get("X-Bench-Chunks"))
		gap, _ := time.ParseDuration(r.Header.Get("X-Bench-Gap"))
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		chunk := []byte(benchChunk(0))
		if r.Header.Get("X-Bench-Stall") != "" {
			w.Write(chunk)
			f.Flush()
			stalled.Add(1)
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		perChunk := r.Header.Get("X-Bench-Flush") != ""
		start := time.Now()
		for i := 0; i < n && r.Context().Err() == nil; i++ {
			if gap > 0 {
				if d := time.Until(start.Add(time.Duration(i) * gap)); d > 0 {
					time.Sleep(d)
				}
			}
			w.Write(chunk)
			if gap > 0 || perChunk {
				f.Flush()
			}
		}
		io.WriteString(w, benchTail)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	fmt.Println("ADDR", ln.Addr().String())
	io.Copy(io.Discard, os.Stdin) // until the parent closes stdin or exits
	close(release)
	srv.Close()
	os.Exit(0)
}

func raiseFDLimit(b *testing.B) {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		b.Fatal(err)
	}
	rl.Cur = rl.Max
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
		b.Fatal(err)
	}
}

// startBenchServer starts the child server and returns its base URL.
func startBenchServer(b *testing.B) string {
	line := startChild(b, "1", 1)[0]
	addr, ok := strings.CutPrefix(line, "ADDR ")
	if !ok {
		b.Fatalf("bench server: %q", line)
	}
	return "http://" + addr
}

// startChild re-executes this test binary with benchServerEnv=mode and returns the
// first n lines it prints. The child exits when the benchmark's cleanup closes its
// stdin.
func startChild(b *testing.B, mode string, n int) []string {
	raiseFDLimit(b) // inherited by the child
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), benchServerEnv+"="+mode)
	if mode == "1" {
		cmd.Env = append(cmd.Env, "GOMAXPROCS=1")
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { stdin.Close(); cmd.Wait() })
	br := bufio.NewReader(out)
	lines := make([]string, 0, n)
	for range n {
		line, err := br.ReadString('\n')
		if err != nil {
			b.Fatalf("child %q: %q %v", mode, line, err)
		}
		lines = append(lines, strings.TrimSpace(line))
	}
	return lines
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchClient is one of the compared clients: it performs one streamed request and
// returns the content chunks' arrival stamps (nil stamps: don't stamp).
type benchClient struct {
	name string
	do   func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error)
}

func benchClients(b *testing.B, base string) []benchClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 1 << 16, DisableCompression: true}
	b.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}
	post := func(ctx context.Context, hdr http.Header) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`))
		req.Header = hdr.Clone()
		req.Header.Set("Content-Type", "application/json")
		return hc.Do(req)
	}
	ours, err := NewClient(Config{BaseURL: base + "/v1", Model: "m"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(ours.Close)
	readTime, err := NewClient(Config{BaseURL: base + "/v1", Model: "m", NoKernelTimestamps: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(readTime.Close)
	oursDo := func(c *Client) func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error) {
		return func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error) {
			res := c.Do(ctx, &Request{Prompt: "hi", Headers: hdr})
			if stamps != nil && res.ContentChunks > 0 {
				at := res.Start.Add(res.TTFT)
				stamps = append(stamps, at)
				for _, g := range res.ITL {
					at = at.Add(g)
					stamps = append(stamps, at)
				}
			}
			return res.ContentChunks, stamps, res.Err
		}
	}
	oa := openai.NewClient(option.WithBaseURL(base+"/v1"), option.WithAPIKey("x"), option.WithMaxRetries(0), option.WithHTTPClient(hc))
	return []benchClient{
		{"tokenstorm", oursDo(ours)},
		{"tokenstorm-readtime", oursDo(readTime)},
		{"floor", func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error) {
			resp, err := post(ctx, hdr)
			if err != nil {
				return 0, nil, err
			}
			defer resp.Body.Close()
			n, stamps := floorRead(resp.Body, stamps)
			return n - 3, stamps, nil // minus finish, usage (no role chunk from this server) and... see benchTail
		}},
		{"plain-go", func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error) {
			resp, err := post(ctx, hdr)
			if err != nil {
				return 0, nil, err
			}
			defer resp.Body.Close()
			n, _, stamps := plainRead(resp.Body, stamps)
			return n - 2, stamps, nil
		}},
		{"openai-go", func(ctx context.Context, hdr http.Header, stamps []time.Time) (int, []time.Time, error) {
			opts := make([]option.RequestOption, 0, len(hdr))
			for k := range hdr {
				opts = append(opts, option.WithHeader(k, hdr.Get(k)))
			}
			s := oa.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{
				Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
			}, opts...)
			n, _, stamps := openaiRead(s, stamps)
			return n - 2, stamps, s.Err()
		}},
	}
}

// BenchmarkClientCPU measures the client's CPU per chunk, socket to result, against a
// child-process server writing 1,000 chunks as fast as it can: "bulk" lets net/http
// buffer the chunks (about 17 per read), "flush" flushes each chunk as a token-by-token
// server does (one read, one wake-up per chunk, which dominates every client's cost).
func BenchmarkClientCPU(b *testing.B) {
	const chunks = 1000
	base := startBenchServer(b)
	clients := benchClients(b, base)
	for _, mode := range []string{"bulk", "flush"} {
		hdr := http.Header{"X-Bench-Chunks": {strconv.Itoa(chunks)}}
		if mode == "flush" {
			hdr.Set("X-Bench-Flush", "1")
		}
		for _, bc := range clients {
			b.Run(mode+"/"+bc.name, func(b *testing.B) {
				ctx := context.Background()
				if _, _, err := bc.do(ctx, hdr, nil); err != nil { // warm the connection
					b.Fatal(err)
				}
				runtime.GC()
				cpu0, n := cpuTime(), 0
				for b.Loop() {
					if _, _, err := bc.do(ctx, hdr, nil); err != nil {
						b.Fatal(err)
					}
					n++
				}
				b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(n*(chunks+2)), "cpu-ns/chunk")
			})
		}
	}
}

// BenchmarkStretch runs 256 concurrent streams of 50 chunks with 2 ms server gaps and
// reports measured mean gap / 2 ms per client (1.00 = not stretched).
func BenchmarkStretch(b *testing.B) {
	const streams, chunks, gap = 256, 50, 2 * time.Millisecond
	base := startBenchServer(b)
	hdr := http.Header{"X-Bench-Chunks": {strconv.Itoa(chunks)}, "X-Bench-Gap": {gap.String()}}
	for _, bc := range benchClients(b, base) {
		b.Run(bc.name, func(b *testing.B) {
			var ratio float64
			n := 0
			for b.Loop() {
				var mu sync.Mutex
				var sum time.Duration
				var gaps int
				var wg sync.WaitGroup
				for range streams {
					wg.Go(func() {
						_, st, err := bc.do(context.Background(), hdr, make([]time.Time, 0, chunks+4))
						if err != nil || len(st) < 2 {
							return
						}
						mu.Lock()
						sum += st[len(st)-1].Sub(st[0])
						gaps += len(st) - 1
						mu.Unlock()
					})
				}
				wg.Wait()
				if gaps == 0 {
					b.Fatal("no gaps measured")
				}
				ratio += float64(sum) / float64(gaps) / float64(gap)
				n++
			}
			b.ReportMetric(ratio/float64(n), "gap-ratio")
		})
	}
}

func pct(v []float64, p float64) float64 {
	if len(v) == 0 {
		return 0
	}
	slices.Sort(v)
	pos := p * float64(len(v)-1)
	i := int(pos)
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (pos-float64(i))*(v[i+1]-v[i])
}

// BenchmarkAccuracy compares client stamps with the mock's ground truth (the time
// right after each chunk's Write and Flush returned) at 1 and 1,000 concurrent streams,
// on long-lived stream goroutines (as virtual users), each with one unmeasured warm-up
// request. Error = |client stamp − truth| for the first chunk (TTFT) and
// |client gap − truth gap| per gap. Clients: tokenstorm (kernel receive stamps, the
// default), tokenstorm-readtime (Config.NoKernelTimestamps: stamped when the read
// returns) and floor (bufio line reader stamping each data line when ReadSlice
// returns: what any user-space client can do). Settings:
//
//   - hard: the mock in this process, TTFT = ITL = 50 ms, no jitter, all streams
//     started at once: every 50 ms the mock writes 1,000 chunks in the same instant
//     and client and mock must absorb that burst on the same 2 cores, with default GC.
//   - realistic: the mock in a child process (its GC and scheduler apart), delays
//     drawn in 50–100 ms (ITL 75 ms ± 33%), starts ramped over 500 ms, the client's
//     GC at GOGC=400 (debug.SetGCPercent), as a load-test runner sets it.
func BenchmarkAccuracy(b *testing.B) {
	for _, tc := range []struct {
		setting string
		streams int
		client  string
	}{
		{"hard", 1, "tokenstorm"},
		{"hard", 1000, "tokenstorm"},
		{"hard", 1000, "tokenstorm-readtime"},
		{"hard", 1000, "floor"},
		{"realistic", 1, "tokenstorm"},
		{"realistic", 1000, "tokenstorm"},
		{"realistic", 1000, "tokenstorm-readtime"},
		{"realistic", 1000, "floor"},
		// The same at Go's default GOGC=100: what the runner's GC setting is worth.
		{"realistic-gogc100", 1000, "tokenstorm"},
		{"realistic-gogc100", 1000, "tokenstorm-readtime"},
	} {
		b.Run(fmt.Sprintf("%s/streams=%d/%s", tc.setting, tc.streams, tc.client), func(b *testing.B) {
			benchAccuracy(b, tc.setting, tc.streams, tc.client)
		})
	}
}

// accTruth gives the ground-truth chunk times of a request id, in monoNS.
type accTruth func(id string) ([]int64, bool)

func benchAccuracy(b *testing.B, setting string, streams int, client string) {
	const tokens = 12
	perVU := 2
	if streams == 1 {
		perVU = 10 // enough samples for a p99 that is not just the maximum of two
	}
	raiseFDLimit(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		base    string
		truth   func() accTruth
		stagger time.Duration
	)
	if setting == "hard" {
		srv, err := mockllm.Start(ctx, "", mockllm.Config{TTFT: 50 * time.Millisecond, ITL: 50 * time.Millisecond,
			RecordTruth: true, TruthLimit: streams * (perVU + 1) * 2})
		if err != nil {
			b.Fatal(err)
		}
		defer srv.Close()
		base = srv.URL()
		truth = func() accTruth {
			return func(id string) ([]int64, bool) {
				tr, ok := srv.Truth(id)
				if !ok {
					return nil, false
				}
				out := make([]int64, len(tr.Chunks))
				for i, t := range tr.Chunks {
					out[i] = monoNS(t)
				}
				return out, true
			}
		}
	} else {
		var truthURL string
		base, truthURL = startMockChild(b, "ttft=75ms itl=75ms jitter=0.333")
		truth = func() accTruth { return fetchTruth(b, truthURL) }
		stagger = 500 * time.Millisecond
		if setting == "realistic" {
			defer debug.SetGCPercent(debug.SetGCPercent(400))
		}
	}

	// do runs one request and returns its id and content-chunk stamps.
	var do func(maxTokens int, stamps []time.Time) (string, []time.Time, bool)
	switch client {
	case "tokenstorm", "tokenstorm-readtime":
		c, err := NewClient(Config{BaseURL: base + "/v1", Timeout: time.Minute, NoKernelTimestamps: client != "tokenstorm"})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		do = func(maxTokens int, stamps []time.Time) (string, []time.Time, bool) {
			r := c.Do(ctx, &Request{Prompt: "hi", MaxTokens: maxTokens})
			if !r.OK() || r.ContentChunks == 0 {
				return "", stamps, false
			}
			at := r.Start.Add(r.TTFT)
			stamps = append(stamps, at)
			for _, g := range r.ITL {
				at = at.Add(g)
				stamps = append(stamps, at)
			}
			return r.ID, stamps, true
		}
	case "floor":
		tr := &http.Transport{MaxIdleConnsPerHost: 1 << 16, DisableCompression: true}
		defer tr.CloseIdleConnections()
		hc := &http.Client{Transport: tr, Timeout: time.Minute}
		do = func(maxTokens int, stamps []time.Time) (string, []time.Time, bool) {
			req, _ := http.NewRequestWithContext(ctx, "POST", base+"/v1/chat/completions", strings.NewReader(
				`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"max_tokens":`+strconv.Itoa(maxTokens)+`}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				return "", stamps, false
			}
			defer resp.Body.Close()
			stamps = floorContentStamps(resp.Body, stamps)
			return resp.Header.Get(mockllm.HeaderRequestID), stamps, resp.StatusCode == 200
		}
	}

	var ttftErr, gapErr []float64
	failed := 0
	for b.Loop() {
		type rec struct {
			id     string
			stamps []time.Time
		}
		results := make([][]rec, streams)
		begin := time.Now()
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				if stagger > 0 {
					// Load shaping, not synchronisation: VU i starts at its place on
					// the ramp, as an arrival schedule would start it.
					time.Sleep(time.Until(begin.Add(stagger * time.Duration(i) / time.Duration(streams))))
				}
				do(4, nil) // warm-up: connection, stack growth
				for range perVU {
					id, st, ok := do(tokens, make([]time.Time, 0, tokens))
					if !ok {
						id = ""
					}
					results[i] = append(results[i], rec{id, st})
				}
			})
		}
		wg.Wait()
		tf := truth()
		for _, rs := range results {
			for _, r := range rs {
				tr, ok := tf(r.id)
				if r.id == "" || !ok || len(tr) != len(r.stamps) {
					failed++
					continue
				}
				ttftErr = append(ttftErr, absUS(time.Duration(monoNS(r.stamps[0])-tr[0])))
				for i := 1; i < len(tr); i++ {
					g := r.stamps[i].Sub(r.stamps[i-1])
					gapErr = append(gapErr, absUS(g-time.Duration(tr[i]-tr[i-1])))
				}
			}
		}
	}
	if failed > 0 {
		b.Errorf("%d requests failed or could not be matched", failed)
	}
	b.ReportMetric(pct(ttftErr, 0.5), "ttft-err-p50-us")
	b.ReportMetric(pct(ttftErr, 0.99), "ttft-err-p99-us")
	b.ReportMetric(pct(gapErr, 0.5), "gap-err-p50-us")
	b.ReportMetric(pct(gapErr, 0.99), "gap-err-p99-us")
}

// floorContentStamps reads SSE lines with bufio.Reader.ReadSlice and stamps each line
// that carries generated text when ReadSlice returns it.
func floorContentStamps(body io.Reader, stamps []time.Time) []time.Time {
	br := bufio.NewReaderSize(body, 4096)
	for {
		line, err := br.ReadSlice('\n')
		now := time.Now()
		if i := bytes.Index(line, []byte(`"content":"`)); i >= 0 && i+11 < len(line) && line[i+11] != '"' {
			stamps = append(stamps, now)
		}
		if err != nil {
			return stamps
		}
	}
}

// monoNS places t on CLOCK_MONOTONIC, which every process on the machine shares, so
// the child mock's truth and the parent client's stamps can be compared. Go's
// monotonic readings are offsets from process start; one paired reading of both
// clocks (the tightest of a few) converts them.
func monoNS(t time.Time) int64 {
	monoOnce.Do(func() {
		best := time.Duration(1 << 62)
		for range 20 {
			t0 := time.Now()
			raw := sharedClockNS()
			t1 := time.Now()
			if d := t1.Sub(t0); d < best {
				best = d
				monoRefT, monoRefNS = t0.Add(d/2), raw
			}
		}
	})
	return monoRefNS + int64(t.Sub(monoRefT))
}

var (
	monoOnce  sync.Once
	monoRefT  time.Time
	monoRefNS int64
)

// runMockChild serves mockllm in this re-executed test binary; spec is
// "ttft=D itl=D jitter=F". It prints the mock's address and that of a second server
// whose GET /truth lists every finished request as "id t0 t1 …" (chunk times in
// monoNS), then serves until stdin closes.
func runMockChild(spec string) {
	cfg := mockllm.Config{}
	for _, f := range strings.Fields(spec) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "ttft":
			cfg.TTFT, _ = time.ParseDuration(v)
		case "itl":
			cfg.ITL, _ = time.ParseDuration(v)
		case "jitter":
			cfg.Jitter, _ = strconv.ParseFloat(v, 64)
		}
	}
	var mu sync.Mutex
	var lines []byte
	cfg.OnDone = func(tr mockllm.Truth) {
		mu.Lock()
		defer mu.Unlock()
		lines = append(lines, tr.ID...)
		for _, t := range tr.Chunks {
			lines = append(lines, ' ')
			lines = strconv.AppendInt(lines, monoNS(t), 10)
		}
		lines = append(lines, '\n')
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := mockllm.Start(ctx, "", cfg)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	ts := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		w.Write(lines)
	})}
	go ts.Serve(ln)
	fmt.Println("ADDR", strings.TrimPrefix(srv.URL(), "http://"))
	fmt.Println("TRUTH", ln.Addr().String())
	io.Copy(io.Discard, os.Stdin)
	ts.Close()
	cancel()
	srv.Close()
	os.Exit(0)
}

// startMockChild starts runMockChild and returns the mock's base URL and the truth URL.
func startMockChild(b *testing.B, spec string) (string, string) {
	lines := startChild(b, "mock "+spec, 2)
	addr, ok1 := strings.CutPrefix(lines[0], "ADDR ")
	tr, ok2 := strings.CutPrefix(lines[1], "TRUTH ")
	if !ok1 || !ok2 {
		b.Fatalf("mock child: %q", lines)
	}
	return "http://" + addr, "http://" + tr + "/truth"
}

func fetchTruth(b *testing.B, url string) accTruth {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	m := map[string][]int64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		ts := make([]int64, 0, len(f)-1)
		for _, x := range f[1:] {
			n, _ := strconv.ParseInt(x, 10, 64)
			ts = append(ts, n)
		}
		m[f[0]] = ts
	}
	return func(id string) ([]int64, bool) { t, ok := m[id]; return t, ok }
}

func absUS(d time.Duration) float64 {
	if d < 0 {
		d = -d
	}
	return float64(d) / 1e3
}

// BenchmarkIdleStreamMemory holds N streams open after their first chunk and reports
// the client's heap and stack growth per stream.
func BenchmarkIdleStreamMemory(b *testing.B) {
	for _, streams := range []int{1000, 10000} {
		b.Run(fmt.Sprint("streams=", streams), func(b *testing.B) {
			base := startBenchServer(b)
			c, err := NewClient(Config{BaseURL: base + "/v1"})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			hdr := http.Header{"X-Bench-Stall": {"1"}}
			var perStream float64
			n := 0
			for b.Loop() {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				var failed atomic.Int64
				for range streams {
					wg.Go(func() {
						if r := c.Do(ctx, &Request{Prompt: "hi", Headers: hdr}); r.ContentChunks != 1 {
							failed.Add(1)
						}
					})
				}
				waitStalled(b, base, streams, n)
				runtime.GC()
				runtime.ReadMemStats(&m1)
				cancel()
				wg.Wait()
				c.Close()
				if f := failed.Load(); f > 0 {
					b.Fatalf("%d streams did not get their first chunk", f)
				}
				used := float64(m1.HeapInuse+m1.StackInuse) - float64(m0.HeapInuse+m0.StackInuse)
				perStream += used / float64(streams)
				n++
			}
			b.ReportMetric(perStream/float64(n)/1024, "KiB/stream")
		})
	}
}

// waitStalled polls the child server until all streams of round n are held open.
func waitStalled(b *testing.B, base string, streams, round int) {
	want := int64(streams * (round + 1))
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/stalled")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if got, _ := strconv.ParseInt(string(body), 10, 64); got >= want {
				return
			}
		}
		time.Sleep(20 * time.Millisecond) // polling another process; there is no event to wait on
	}
	b.Fatal("streams never all opened")
}
