package mockllm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"time"
)

// plan is the shape of one response, fixed before the first token.
type plan struct {
	tokens     int // output length, reasoning included
	reasoning  int
	perChunk   int
	chunks     int
	finish     string // "length" or "stop"
	fault      Fault
	faultAfter int // content chunks let through before a mid-stream fault

	prefill time.Duration // nominal prefill (base + per prompt token, or X-Mock-TTFT)
	itl     time.Duration // nominal decode time per token (or X-Mock-ITL)
	perRun  time.Duration // added per running sequence (0 with X-Mock-ITL)
}

// chunkTokens returns how many tokens chunk i carries and whether they are reasoning.
// Reasoning and answer never share a chunk.
func (p *plan) chunkTokens(i int) (n int, reasoning bool) {
	rc := (p.reasoning + p.perChunk - 1) / p.perChunk
	if i < rc {
		return min(p.perChunk, p.reasoning-i*p.perChunk), true
	}
	j := i - rc
	return min(p.perChunk, p.tokens-p.reasoning-j*p.perChunk), false
}

func idPrefix(d dialect) string {
	switch d {
	case dChat:
		return "chatcmpl-"
	case dCompletions:
		return "cmpl-"
	case dAnthropic:
		return "msg_"
	case dTGI:
		return "tgi-"
	}
	return "ollama-"
}

// generate serves one generation request of dialect d. One goroutine (the
// handler's) per request; every wait is a timer or a channel, never a spin, and
// every wait also ends on client disconnect and on Close.
func (s *Server) generate(w http.ResponseWriter, r *http.Request, d dialect, streamRoute bool) {
	received := time.Now()
	n := s.reqs.Add(1)
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), n))
	id := idPrefix(d) + "mock" + s.nonce + "-" + strconv.FormatUint(n, 10)
	w.Header().Set(HeaderRequestID, id)

	tr := Truth{ID: id, Dialect: d.String(), Received: received}
	track := s.truth != nil || s.cfg.OnDone != nil
	if track {
		defer func() {
			tr.Done = time.Now()
			if s.truth != nil {
				s.truth.add(tr)
			}
			if s.cfg.OnDone != nil {
				s.cfg.OnDone(tr)
			}
		}()
	}
	// abort records a response that ended early (client gone, server closing, or a
	// fault that leaves it unfinished), as vLLM's finished_reason="abort".
	abort := func() {
		tr.Aborted = true
		s.metrics.finishedAbort.Add(1)
	}
	fail := func(status int, msg string) {
		tr.Status = status
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(errorBody(d, status, msg))
	}

	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			fail(http.StatusRequestEntityTooLarge, "request body too large")
			return
		}
		tr.Aborted = true
		return
	}
	g, err := parseRequest(d, body, streamRoute)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	if g.model == "" {
		g.model = s.cfg.Model
	}
	tr.Model, tr.Stream, tr.PromptTokens = g.model, g.stream, g.promptTokens

	p, err := s.plan(r, g, d, rng)
	if err != nil {
		fail(http.StatusBadRequest, err.Error())
		return
	}
	tr.Fault = p.fault
	if p.fault != FaultNone {
		w.Header().Set(HeaderFault, string(p.fault))
	}
	if st := p.fault.Status(); st != 0 {
		if st == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		fail(st, "mock: injected fault "+string(p.fault))
		return
	}

	rc := http.NewResponseController(w)
	e := newEnc(d, id, g.model, received.Unix(), g.promptTokens, g.includeUsage, !g.stream)
	e.received = received
	e.finish = p.finish // TGI puts it on the last token event
	buf := make([]byte, 0, 512)

	ticket := s.sched.enter()
	if g.stream {
		// Headers and the prelude go out before any queueing, as vLLM's API server
		// answers at once while its engine queues: the wait shows in TTFT, not TTFB.
		w.Header().Set("Content-Type", e.contentType())
		w.Header().Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		tr.Status = http.StatusOK
		buf = e.prelude(buf[:0])
		if len(buf) > 0 {
			_, err = w.Write(buf)
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			s.sched.abandon(ticket)
			abort()
			return
		}
	}
	ctx := r.Context()
	if err := s.sched.wait(ctx, s.closing, ticket); err != nil {
		abort()
		return
	}
	admitted := time.Now()
	tr.Admitted = admitted
	kv := int64(g.promptTokens)
	s.sched.kvTokens.Add(kv)
	s.metrics.promptTokens.Add(int64(g.promptTokens))
	defer func() {
		s.sched.kvTokens.Add(-kv)
		s.sched.release()
	}()

	sl := sleeper{done: ctx.Done(), closing: s.closing}
	defer sl.stop()

	if p.fault == FaultStallFirst {
		s.stall(ctx)
		abort()
		return
	}

	if track {
		tr.Delays = make([]time.Duration, 0, p.chunks)
		if g.stream {
			tr.Chunks = make([]time.Time, 0, p.chunks)
		}
	}
	toks := make([]int, 0, p.perChunk)
	var prev time.Time
	for i := range p.chunks {
		if i == p.faultAfter && p.fault != FaultNone {
			switch p.fault {
			case FaultStallMid:
				s.stall(ctx)
				abort()
				return
			case FaultCut, FaultReset, FaultErrorEvent:
				if g.stream {
					s.streamFault(w, rc, e, buf, p.fault, &tr)
					s.metrics.finishedAbort.Add(1)
					return
				}
			case FaultMalformed, FaultOversized:
				if g.stream {
					if p.fault == FaultMalformed {
						buf = e.malformed(buf[:0])
					} else {
						buf = e.oversized(buf[:0], OversizedLineBytes)
					}
					if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
						abort()
						return
					}
					if cap(buf) > 64<<10 {
						buf = make([]byte, 0, 512) // let the 2 MiB line go
					}
				}
			}
		}

		k, reasoning := p.chunkTokens(i)
		delay := s.delay(&p, i, k, rng)
		if tr.Delays != nil {
			tr.Delays = append(tr.Delays, delay)
		}
		if err := sl.sleep(delay); err != nil {
			abort()
			return
		}
		toks = toks[:0]
		for range k {
			toks = append(toks, rng.IntN(len(vocab)))
		}
		buf = e.chunk(buf[:0], toks, reasoning, i == p.chunks-1)
		if g.stream {
			if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
				abort()
				return
			}
		}
		now := time.Now()
		if i == 0 {
			e.firstAt = now
			s.metrics.ttft.observe(now.Sub(received))
		} else {
			s.metrics.itl.observe(now.Sub(prev))
		}
		prev = now
		s.metrics.generationTokens.Add(int64(k))
		s.sched.kvTokens.Add(int64(k))
		kv += int64(k)
		tr.CompletionTokens += k
		if reasoning {
			tr.ReasoningTokens += k
			if g.stream {
				tr.ReasoningChunks++
			}
		}
		if tr.Chunks != nil {
			tr.Chunks = append(tr.Chunks, now)
		}
	}

	now := time.Now()
	if g.stream {
		buf = e.end(buf[:0], now)
		if len(buf) > 0 {
			if _, err := w.Write(buf); err != nil || rc.Flush() != nil {
				abort()
				return
			}
		}
	} else if !s.writeBody(w, e, p.fault, now, &tr) {
		s.metrics.finishedAbort.Add(1)
		return
	}
	tr.FinishReason = p.finish
	s.metrics.e2e.observe(time.Since(received))
	if p.finish == "length" {
		s.metrics.finishedLength.Add(1)
	} else {
		s.metrics.finishedStop.Add(1)
	}
}

// plan draws the response's shape from the config, the request and its headers.
func (s *Server) plan(r *http.Request, g genRequest, d dialect, rng *rand.Rand) (plan, error) {
	p := plan{perChunk: s.cfg.TokensPerChunk, itl: s.cfg.ITL, perRun: s.cfg.ITLPerRunning}
	p.prefill = s.cfg.TTFT + time.Duration(g.promptTokens)*s.cfg.PrefillPerToken

	switch h := r.Header.Get(HeaderFault); h {
	case "":
		if s.cfg.FaultRate > 0 && rng.Float64() < s.cfg.FaultRate {
			p.fault = s.cfg.Faults[rng.IntN(len(s.cfg.Faults))]
		}
	case "none":
	default:
		p.fault = Fault(h)
		if !p.fault.Valid() {
			return p, fmt.Errorf("unknown %s %q", HeaderFault, h)
		}
	}
	if h := r.Header.Get(HeaderTTFT); h != "" {
		v, err := time.ParseDuration(h)
		if err != nil || v < 0 {
			return p, fmt.Errorf("invalid %s %q", HeaderTTFT, h)
		}
		p.prefill = v
	}
	if h := r.Header.Get(HeaderITL); h != "" {
		v, err := time.ParseDuration(h)
		if err != nil || v < 0 {
			return p, fmt.Errorf("invalid %s %q", HeaderITL, h)
		}
		p.itl, p.perRun = v, 0
	}

	maxTok := g.maxTokens
	if maxTok == 0 {
		maxTok = s.cfg.MaxTokens
	}
	p.tokens = maxTok
	if s.cfg.OutputLen != nil && !g.ignoreEOS {
		p.tokens = min(max(s.cfg.OutputLen(rng, maxTok), 1), maxTok)
	}
	p.finish = "stop"
	if p.tokens == maxTok {
		p.finish = "length"
	}
	if d == dChat || d == dAnthropic || d == dOllama {
		p.reasoning = min(s.cfg.Reasoning, p.tokens)
	}
	k := p.perChunk
	p.chunks = (p.reasoning+k-1)/k + (p.tokens-p.reasoning+k-1)/k
	p.faultAfter = min(DefaultFaultAfterChunks, max(p.chunks-1, 0))
	return p, nil
}

// delay returns the planned wait before chunk i of k tokens: the prefill (then k-1
// decode steps) for the first chunk, k decode steps for the others; each decode step
// costs ITL + ITLPerRunning × running sequences, and the whole is jittered.
func (s *Server) delay(p *plan, i, k int, rng *rand.Rand) time.Duration {
	step := p.itl + p.perRun*time.Duration(s.sched.nRunning.Load())
	d := time.Duration(k) * step
	if i == 0 {
		d = p.prefill + time.Duration(k-1)*step
	}
	if s.cfg.Jitter > 0 && d > 0 {
		f := 1 + s.cfg.Jitter*(2*rng.Float64()-1)
		d = time.Duration(float64(d) * f)
	}
	return d
}

// stall blocks until the client goes away or the server closes.
func (s *Server) stall(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-s.closing:
	}
}

// streamFault ends a stream the way fault f says.
func (s *Server) streamFault(w http.ResponseWriter, rc *http.ResponseController, e *enc, buf []byte, f Fault, tr *Truth) {
	tr.Aborted = f != FaultErrorEvent
	switch f {
	case FaultCut:
		// Returning ends the chunked body cleanly: no finish, no end marker.
	case FaultErrorEvent:
		buf = e.errorEvent(buf[:0], "mock: injected stream error")
		if _, err := w.Write(buf); err == nil {
			_ = rc.Flush()
		}
	case FaultReset:
		resetConn(rc)
	}
}

// writeBody writes a non-streamed response, applying the body faults. It reports
// whether a complete, valid body went out.
func (s *Server) writeBody(w http.ResponseWriter, e *enc, f Fault, now time.Time, tr *Truth) bool {
	var rc *http.ResponseController
	switch f {
	case FaultReset:
		tr.Aborted = true
		rc = http.NewResponseController(w)
		resetConn(rc)
		return false
	case FaultErrorEvent:
		tr.Status = http.StatusInternalServerError
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(tr.Status)
		_, _ = w.Write(errorBody(e.d, tr.Status, "mock: injected generation error"))
		return false
	}
	b := e.body(nil, now)
	switch f {
	case FaultMalformed:
		b = b[:len(b)/2]
	case FaultOversized:
		// Valid JSON, padded past the size a client should accept.
		b = append(b[:len(b)-1], `,"padding":"`...)
		b = appendPadding(b, OversizedLineBytes)
		b = append(b, `"}`...)
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	tr.Status = http.StatusOK
	w.WriteHeader(http.StatusOK)
	if f == FaultCut {
		// Promise the whole body, send half: net/http then closes the connection.
		_, _ = w.Write(b[:len(b)/2])
		tr.Aborted = true
		return false
	}
	_, err := w.Write(b)
	if err != nil {
		tr.Aborted = true
		return false
	}
	return f == FaultNone
}

// resetConn aborts the connection with a TCP RST (SO_LINGER 0). Where the connection
// cannot be hijacked (HTTP/2), ErrAbortHandler resets the stream instead.
func resetConn(rc *http.ResponseController) {
	// No flush: streams flushed every chunk already, and a body fault must reset
	// before any status line goes out.
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// sleeper waits on one reusable timer, also ending on disconnect or Close.
type sleeper struct {
	t       *time.Timer
	done    <-chan struct{}
	closing <-chan struct{}
}

func (sl *sleeper) sleep(d time.Duration) error {
	if d <= 0 {
		select {
		case <-sl.done:
			return context.Canceled
		case <-sl.closing:
			return errClosed
		default:
			return nil
		}
	}
	if sl.t == nil {
		sl.t = time.NewTimer(d)
	} else {
		sl.t.Reset(d)
	}
	select {
	case <-sl.t.C:
		return nil
	case <-sl.done:
		return context.Canceled
	case <-sl.closing:
		return errClosed
	}
}

func (sl *sleeper) stop() {
	if sl.t != nil {
		sl.t.Stop()
	}
}
