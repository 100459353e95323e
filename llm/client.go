package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client sends generation requests in one dialect and measures them. It is safe for
// concurrent use; give each virtual user its own Client for k6-style per-VU connection
// reuse.
type Client struct {
	cfg   Config
	url   [2]string // [stream, non-stream]
	rt    http.RoundTripper
	fresh http.RoundTripper // for the single retry after a stale keep-alive connection
	own   []*http.Transport
}

// NewClient validates cfg and returns a Client. The error is a *ConfigError naming the
// field at fault.
func NewClient(cfg Config) (*Client, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	c := &Client{cfg: cfg}
	c.url[0] = cfg.BaseURL + path(cfg.Dialect, true)
	c.url[1] = cfg.BaseURL + path(cfg.Dialect, false)
	if cfg.Transport != nil {
		c.rt, c.fresh = cfg.Transport, cfg.Transport
		return c, nil
	}
	d := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if !cfg.NoKernelTimestamps {
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			conn, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return wrapArrival(conn), nil
		}
	}
	tr := &http.Transport{
		Proxy:             http.ProxyFromEnvironment,
		DialContext:       dial,
		ForceAttemptHTTP2: true,
		// Load tests run many streams to one host: the default of 2 idle connections
		// per host would close and reopen connections all the time.
		MaxIdleConns:        0,
		MaxIdleConnsPerHost: 1 << 16,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: cfg.ConnectTimeout,
		// Compression would buffer the stream and hide chunk timing.
		DisableCompression: true,
		DisableKeepAlives:  cfg.NoConnectionReuse,
		TLSClientConfig:    cfg.TLSClientConfig,
	}
	fresh := tr.Clone()
	fresh.DisableKeepAlives = true
	c.rt, c.fresh = tr, fresh
	c.own = []*http.Transport{tr, fresh}
	return c, nil
}

// Close closes the Client's idle connections. It is safe to call twice, and Do still
// works afterwards (on new connections).
func (c *Client) Close() {
	for _, t := range c.own {
		t.CloseIdleConnections()
	}
}

// Config returns the normalised configuration (defaults filled in).
func (c *Client) Config() Config { return c.cfg }

// reqState is the per-request scratch reused through a pool, so a request allocates
// its buffers only when a response outgrows every previous one.
type reqState struct {
	dec Decoder
	a   acc
	s   jscan
	arr *arrivalConn // the response's connection, when it carries kernel stamps
}

var statePool = sync.Pool{New: func() any { return new(reqState) }}

func putState(st *reqState) {
	st.dec.r, st.dec.arr, st.arr = nil, nil, nil
	if cap(st.dec.buf) > 64<<10 {
		st.dec.buf = nil
	}
	if cap(st.a.text) > 1<<20 || cap(st.a.reasoning) > 1<<20 || cap(st.dec.data) > 1<<20 || cap(st.a.memo) > 64<<10 {
		*st = reqState{}
	}
	statePool.Put(st)
}

// phaseTimer is one timer serving the first-token and idle phases. Chunks only store
// their arrival time (an atomic store, no timer call per chunk); when the timer fires in
// the idle phase it re-arms itself for the remainder if a chunk came in meanwhile.
type phaseTimer struct {
	start  time.Time
	idle   time.Duration
	cancel context.CancelCauseFunc
	idleOn atomic.Bool
	lastAt atomic.Int64 // ns since start of the latest read of response bytes
	t      atomic.Pointer[time.Timer]
}

// never is a timer duration that does not expire within any test.
const never = time.Duration(1 << 62)

func newPhaseTimer(start time.Time, first, idle time.Duration, cancel context.CancelCauseFunc) *phaseTimer {
	if first <= 0 && idle <= 0 {
		return nil
	}
	p := &phaseTimer{start: start, idle: idle, cancel: cancel}
	d := first
	if d <= 0 {
		d = never
	}
	p.t.Store(time.AfterFunc(d, p.fire))
	return p
}

func (p *phaseTimer) fire() {
	if !p.idleOn.Load() {
		p.cancel(&TimeoutError{Phase: PhaseFirstToken})
		return
	}
	since := time.Since(p.start) - time.Duration(p.lastAt.Load())
	if since < p.idle {
		if t := p.t.Load(); t != nil {
			t.Reset(p.idle - since)
		}
		return
	}
	p.cancel(&TimeoutError{Phase: PhaseIdle})
}

// firstToken switches from the first-token to the idle phase.
func (p *phaseTimer) firstToken() {
	if p == nil {
		return
	}
	t := p.t.Load()
	if p.idle <= 0 {
		t.Stop()
		return
	}
	p.idleOn.Store(true)
	t.Reset(p.idle)
}

func (p *phaseTimer) stop() {
	if p != nil {
		p.t.Load().Stop()
	}
}

// Do sends req and measures it. It never returns nil and never panics; failures are in
// Result.Err / Result.ErrorType. ctx cancels the request at any point.
func (c *Client) Do(ctx context.Context, req *Request) (res *Result) {
	res = &Result{Dialect: c.cfg.Dialect, Model: c.cfg.Model}
	defer func() {
		if p := recover(); p != nil {
			res.Err = &StreamError{Message: "internal error while decoding the response"}
			res.ErrorType = ErrStream
		}
	}()
	if req == nil {
		req = &Request{}
	}
	if req.Model != "" {
		res.Model = req.Model
	}
	body, err := buildBody(&c.cfg, req, res.Model)
	if err != nil {
		res.Err, res.ErrorType = &NetworkError{Op: "encode", Err: errors.New("request body: " + err.Error())}, ErrNetwork
		return res
	}
	stream := !req.NoStream

	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	start := time.Now()
	res.Start = start

	if c.cfg.Timeout > 0 {
		t := time.AfterFunc(c.cfg.Timeout, func() { cancel(&TimeoutError{Phase: PhaseTotal}) })
		defer t.Stop()
	}
	var connTimer *time.Timer
	if c.cfg.ConnectTimeout > 0 {
		connTimer = time.AfterFunc(c.cfg.ConnectTimeout, func() { cancel(&TimeoutError{Phase: PhaseConnect}) })
		defer connTimer.Stop()
	}
	pt := newPhaseTimer(start, c.cfg.FirstTokenTimeout, c.cfg.IdleTimeout, cancel)
	defer pt.stop()

	resp, sent, arr, err := c.roundTrip(rctx, req, body, stream, connTimer)
	res.BytesSent = sent
	if err != nil {
		res.Duration = time.Since(start)
		res.Err, res.ErrorType, res.TimeoutPhase = classifyTransport(rctx, ctx, "request", err)
		return res
	}
	res.TTFB = arr.since(start, time.Now())
	res.Status = resp.StatusCode
	res.BytesReceived = headerBytes(resp)
	if id := resp.Header.Get("X-Request-Id"); id != "" {
		res.ID = id
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
		res.BytesReceived += int64(len(b))
		resp.Body.Close()
		res.Duration = time.Since(start)
		res.Err = &StatusError{
			StatusCode: resp.StatusCode,
			RetryAfter: parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
			Body:       redact(string(b), c.secrets(req)),
		}
		res.ErrorType = statusErrorType(resp.StatusCode)
		return res
	}

	st := statePool.Get().(*reqState)
	defer putState(st)
	st.arr = arr
	a := &st.a
	a.reset()

	var readErr error
	// A server that ignores "stream": true answers with one JSON document; read it as
	// such rather than report a truncated stream.
	if stream && c.cfg.Dialect != Ollama && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		stream = false
	}
	if stream {
		readErr = c.readStream(st, resp.Body, res, start, pt, req.MaxTokens)
	} else {
		readErr = c.readWhole(st, resp.Body, res, start)
	}
	resp.Body.Close()
	res.Duration = time.Since(start)
	res.BytesReceived += st.dec.total

	if len(a.id) > 0 {
		res.ID = string(a.id)
	}
	res.FinishReason = a.finish
	switch {
	case readErr != nil:
		var se *StreamError
		var de *DecodeError
		switch {
		case errors.As(readErr, &de):
			res.Err, res.ErrorType = redactErr(de, c.secrets(req)), ErrDecode
		case errors.As(readErr, &se):
			if se.Server {
				se.Message = redact(se.Message, c.secrets(req))
			}
			res.Err, res.ErrorType = se, ErrStream
		default:
			res.Err, res.ErrorType, res.TimeoutPhase = classifyTransport(rctx, ctx, "read", readErr)
		}
	case stream && !a.done && a.finish == "":
		res.Err, res.ErrorType = &TruncatedError{}, ErrTruncated
	}
	c.countTokens(req, res, a)
	if c.cfg.KeepText {
		res.Text = string(a.text)
		res.Reasoning = string(a.reasoning)
	}
	return res
}

func redactErr(de *DecodeError, secrets []string) error {
	de.Excerpt = redact(de.Excerpt, secrets)
	return de
}

// secrets lists the credentials a request carries, to keep them out of errors. Only
// failed requests need it, so it is built then.
func (c *Client) secrets(req *Request) []string {
	s := appendSecrets([]string{c.cfg.APIKey}, c.cfg.Headers)
	return appendSecrets(s, req.Headers)
}

// roundTrip sends the request, retrying once on a fresh connection when a reused
// keep-alive connection turns out to have been closed by the server before any byte of
// a response came back (llama.cpp's server closes after every streamed response while
// advertising keep-alive). It returns the request's bytes on the wire (approximate:
// HTTP/1.1 head + body).
func (c *Client) roundTrip(ctx context.Context, req *Request, body []byte, stream bool, connTimer *time.Timer) (*http.Response, int64, *arrivalConn, error) {
	var sent int64
	for attempt := 0; ; attempt++ {
		var reused, gotByte atomic.Bool
		var arr atomic.Pointer[arrivalConn]
		trace := &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				reused.Store(info.Reused)
				if ac, ok := info.Conn.(*arrivalConn); ok {
					arr.Store(ac)
				}
				if connTimer != nil {
					connTimer.Stop()
				}
			},
			GotFirstResponseByte: func() { gotByte.Store(true) },
		}
		u := c.url[0]
		if !stream {
			u = c.url[1]
		}
		hr, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, u, bytes.NewReader(body))
		if err != nil {
			return nil, sent, nil, err
		}
		c.setHeaders(hr, req, stream)
		sent += requestBytes(hr, len(body))
		rt := c.rt
		if attempt > 0 {
			rt = c.fresh
		}
		resp, err := rt.RoundTrip(hr)
		if err != nil && attempt == 0 && reused.Load() && !gotByte.Load() && ctx.Err() == nil && isStaleConnError(err) {
			continue
		}
		return resp, sent, arr.Load(), err
	}
}

func (c *Client) setHeaders(hr *http.Request, req *Request, stream bool) {
	h := hr.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "tokenstorm")
	switch {
	case !stream:
		h.Set("Accept", "application/json")
	case c.cfg.Dialect == Ollama:
		h.Set("Accept", "application/x-ndjson")
	default:
		h.Set("Accept", "text/event-stream")
	}
	if c.cfg.Dialect == Anthropic {
		h.Set("anthropic-version", DefaultAnthropicVersion)
		if c.cfg.APIKey != "" {
			h.Set("x-api-key", c.cfg.APIKey)
		}
	} else if c.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	for k, vs := range c.cfg.Headers {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	for k, vs := range req.Headers {
		h[http.CanonicalHeaderKey(k)] = vs
	}
}

func requestBytes(hr *http.Request, body int) int64 {
	n := len(hr.Method) + 1 + len(hr.URL.RequestURI()) + len(" HTTP/1.1\r\n") + len("Host: \r\n") + len(hr.URL.Host)
	n += len("Content-Length: \r\n") + len(strconv.Itoa(body))
	for k, vs := range hr.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return int64(n + 2 + body)
}

func headerBytes(resp *http.Response) int64 {
	n := len(resp.Proto) + 1 + len(resp.Status) + 2
	for k, vs := range resp.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return int64(n + 2)
}

var doneMarker = []byte("[DONE]")

// parse dispatches one payload to the dialect's parser.
func (c *Client) parse(st *reqState, data []byte, stream bool) bool {
	switch c.cfg.Dialect {
	case Anthropic:
		return parseAnthropic(&st.s, &st.a, data)
	case TGI:
		return parseTGI(&st.s, &st.a, data, stream)
	case Ollama:
		return parseOllama(&st.s, &st.a, data)
	}
	return parseOpenAI(&st.s, &st.a, data)
}

// readStream is the hot path: one iteration per chunk, no allocation once the buffers
// have grown (ITL's backing array grows amortised).
func (c *Client) readStream(st *reqState, body io.Reader, res *Result, start time.Time, pt *phaseTimer, maxTokens int) error {
	dec := &st.dec
	dec.reset(body, c.cfg.Dialect == Ollama)
	dec.arr = st.arr
	dec.maxLine = c.cfg.MaxLineBytes
	dec.maxTotal = int64(c.cfg.MaxResponseBytes)
	if pt != nil {
		dec.progress, dec.base = &pt.lastAt, start
	}
	a := &st.a
	var last time.Duration
	for dec.Next() {
		ev := &dec.ev
		// Kernel stamps are converted from wall-clock time per read; the guard keeps
		// nanosecond conversion noise from ordering a chunk before the headers or
		// the previous chunk.
		t := max(ev.At.Sub(start), res.TTFB, last)
		if c.cfg.Dialect != Ollama && bytes.Equal(ev.Data, doneMarker) {
			a.done = true
			continue
		}
		res.Chunks++
		nText, nReason := len(a.text), len(a.reasoning)
		if !c.parse(st, ev.Data, true) {
			// Keep only what whole chunks said.
			a.text, a.reasoning = a.text[:nText], a.reasoning[:nReason]
			return &DecodeError{Excerpt: excerpt(ev.Data, 128)}
		}
		if a.hasErr {
			return &StreamError{Message: string(a.errMsg), Server: true}
		}
		if len(a.text) == nText && len(a.reasoning) == nReason {
			continue
		}
		res.ContentChunks++
		if res.ContentChunks == 1 {
			res.TTFT = t
			pt.firstToken()
			if res.ITL == nil && maxTokens > 1 {
				res.ITL = make([]time.Duration, 0, min(maxTokens, 4096))
			}
		} else {
			res.ITL = append(res.ITL, t-last)
		}
		if res.TTFO == 0 && len(a.text) > nText {
			res.TTFO = t
		}
		last = t
		res.E2E = t
	}
	return dec.Err()
}

// readWhole reads a non-streaming response: one JSON document, bounded by
// MaxResponseBytes, timed when its last byte is read.
func (c *Client) readWhole(st *reqState, body io.Reader, res *Result, start time.Time) error {
	dec := &st.dec
	dec.reset(body, false)
	buf := dec.data[:0]
	limit := int64(c.cfg.MaxResponseBytes)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		dec.total += int64(n)
		if dec.total > limit {
			dec.data = buf
			return &StreamError{Message: "response exceeds MaxResponseBytes (" + strconv.FormatInt(limit, 10) + ")"}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			dec.data = buf
			return err
		}
	}
	dec.data = buf
	// Not before the headers: the two stamps are converted from wall-clock time apart.
	t := max(st.arr.since(start, time.Now()), res.TTFB)
	a := &st.a
	res.Chunks = 1
	if !c.parse(st, buf, false) {
		return &DecodeError{Excerpt: excerpt(buf, 128)}
	}
	if a.hasErr {
		return &StreamError{Message: string(a.errMsg), Server: true}
	}
	if len(a.text) > 0 || len(a.reasoning) > 0 {
		res.ContentChunks = 1
		res.TTFT, res.E2E = t, t
		if len(a.text) > 0 {
			res.TTFO = t
		}
	}
	return nil
}

// countTokens fills the token fields from usage, else (or also, with CompareTokenizer)
// from the tokenizer, and TPOT from them.
func (c *Client) countTokens(req *Request, res *Result, a *acc) {
	enc := c.cfg.Encoding
	if a.hasCompletion {
		res.CompletionTokens = a.completion
		res.UsageCompletionTokens = a.completion
		res.ReasoningTokens = a.reasoningTok
		res.TokenSource = SourceUsage
	}
	if !a.hasCompletion || c.cfg.CompareTokenizer {
		nt := countTokens(enc, a.text)
		nr := countTokens(enc, a.reasoning)
		if nt >= 0 && nr >= 0 {
			res.TokenizerCompletionTokens = nt + nr
			if !a.hasCompletion {
				res.CompletionTokens = nt + nr
				res.ReasoningTokens = nr
				res.TokenSource = SourceTokenizer
			}
		}
	}
	if a.hasPrompt {
		res.PromptTokens = a.prompt
	} else if n := CountTokens(enc, req.promptText(c.cfg.Dialect)); n >= 0 {
		res.PromptTokens = n
		if res.TokenSource == "" {
			res.TokenSource = SourceTokenizer
		}
	}
	if res.CompletionTokens > 1 && res.E2E > res.TTFT {
		res.TPOT = (res.E2E - res.TTFT) / time.Duration(res.CompletionTokens-1)
	}
}
