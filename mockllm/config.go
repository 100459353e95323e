package mockllm

import (
	"math/rand/v2"
	"time"
)

// Defaults applied by New to zero fields of Config.
const (
	DefaultModel          = "mock-model"
	DefaultTTFT           = 20 * time.Millisecond
	DefaultITL            = 5 * time.Millisecond
	DefaultTokensPerChunk = 1
	// DefaultMaxTokens is the output length of a request that names no max_tokens
	// (max_completion_tokens, max_new_tokens, num_predict).
	DefaultMaxTokens = 16
	// DefaultKVCacheTokens is the KV-cache capacity, in tokens, behind
	// vllm:kv_cache_usage_perc: running prompt plus generated tokens over this.
	DefaultKVCacheTokens = 1 << 16
	// DefaultTruthLimit bounds the ground-truth records kept when RecordTruth is set;
	// older records are dropped first.
	DefaultTruthLimit = 100_000
	// DefaultMaxBodyBytes bounds a request body; larger bodies get HTTP 413.
	DefaultMaxBodyBytes = 32 << 20
	// DefaultFaultAfterChunks is how many content chunks a mid-stream fault
	// (stall_mid, cut, malformed, oversized, reset, error_event) lets through first;
	// fewer when the response is shorter.
	DefaultFaultAfterChunks = 3
	// OversizedLineBytes is the length of the line the oversized fault writes: twice
	// the 1 MiB line limit clients are expected to enforce.
	OversizedLineBytes = 2 << 20
)

// Config sets the latency and capacity model, the faults and the bookkeeping of a
// Server. The zero value is usable: zero fields take the Default* values above.
//
// Durations: zero means "use the default"; a negative value means "no delay" (so a
// benchmark can ask for TTFT = ITL = 0).
type Config struct {
	// Model is the served model name, listed by /v1/models and used as the metrics
	// label. Responses echo the request's model when it names one.
	Model string
	// TTFT is the prefill base time: from admission (a free slot) to the first token.
	TTFT time.Duration
	// PrefillPerToken is added to TTFT for every prompt token (see the package doc for
	// how prompt tokens are estimated).
	PrefillPerToken time.Duration
	// ITL is the base decode time per token.
	ITL time.Duration
	// ITLPerRunning is added to the decode time per token for every running sequence,
	// sampled at each chunk: the capacity model (decode slows as the batch grows).
	ITLPerRunning time.Duration
	// MaxNumSeqs is the number of sequences decoded at once; beyond it requests wait
	// in a FIFO queue (vllm:num_requests_waiting). 0 means unlimited.
	MaxNumSeqs int
	// Jitter is the relative jitter of every delay: 0.1 draws each delay uniformly in
	// ±10% around its nominal value. Seeded, hence reproducible.
	Jitter float64
	// Seed seeds every per-request random source (seed, request number), so the
	// same sequence of requests gets the same delays, lengths, faults and text.
	Seed int64
	// TokensPerChunk packs several tokens into one streamed chunk (as vLLM's
	// stream interval does); a chunk of k tokens costs k decode steps.
	TokensPerChunk int
	// OutputLen, when set, draws the output length of a request from a distribution
	// given the request's max tokens; the result is clamped to [1, maxTokens] and a
	// request shorter than maxTokens finishes with "stop". Requests with ignore_eos
	// always generate maxTokens. The default is maxTokens.
	OutputLen func(r *rand.Rand, maxTokens int) int
	// MaxTokens is the output length of a request that names none (DefaultMaxTokens).
	MaxTokens int
	// FaultRate is the probability that a request gets a fault drawn from Faults.
	FaultRate float64
	// Faults lists the faults drawn from when FaultRate > 0 (default AllFaults()).
	Faults []Fault
	// Reasoning emits this many reasoning tokens (reasoning_content, thinking) before
	// the answer, in the dialects that have a place for them (openai-chat, anthropic,
	// ollama). They count towards the output length, as in vLLM.
	Reasoning int
	// KVCacheTokens is the capacity behind vllm:kv_cache_usage_perc.
	KVCacheTokens int
	// RecordTruth keeps a ground-truth record of each request (Truth), the last
	// TruthLimit of them.
	RecordTruth bool
	// OnDone, when set, receives the Truth of every generation request when its
	// handler finishes (whether or not RecordTruth keeps it), on the handler's
	// goroutine: a live ground-truth feed. It must not block for long.
	OnDone func(Truth)
	// TruthLimit bounds the records kept (DefaultTruthLimit).
	TruthLimit int
	// MaxBodyBytes bounds a request body (DefaultMaxBodyBytes).
	MaxBodyBytes int64
}

// normalize returns c with defaults applied and negative durations clamped to zero.
func (c Config) normalize() Config {
	if c.Model == "" {
		c.Model = DefaultModel
	}
	c.TTFT = durDefault(c.TTFT, DefaultTTFT)
	c.ITL = durDefault(c.ITL, DefaultITL)
	c.PrefillPerToken = max(c.PrefillPerToken, 0)
	c.ITLPerRunning = max(c.ITLPerRunning, 0)
	c.MaxNumSeqs = max(c.MaxNumSeqs, 0)
	c.Jitter = min(max(c.Jitter, 0), 1)
	if c.TokensPerChunk <= 0 {
		c.TokensPerChunk = DefaultTokensPerChunk
	}
	if c.MaxTokens <= 0 {
		c.MaxTokens = DefaultMaxTokens
	}
	c.FaultRate = min(max(c.FaultRate, 0), 1)
	if len(c.Faults) == 0 {
		c.Faults = AllFaults()
	} else {
		c.Faults = append([]Fault(nil), c.Faults...)
	}
	c.Reasoning = max(c.Reasoning, 0)
	if c.KVCacheTokens <= 0 {
		c.KVCacheTokens = DefaultKVCacheTokens
	}
	if c.TruthLimit <= 0 {
		c.TruthLimit = DefaultTruthLimit
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	return c
}

func durDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// Fault names one injected failure. Request one deterministically with the
// X-Mock-Fault request header, or draw them at Config.FaultRate.
type Fault string

// The faults. HTTP faults answer at once with that status and a JSON error body in
// the dialect's shape (429 with Retry-After: 1). Stream faults happen after
// DefaultFaultAfterChunks content chunks (fewer for shorter responses), except
// stall_first, which happens before the first token.
const (
	FaultNone       Fault = ""
	FaultHTTP400    Fault = "http_400"
	FaultHTTP404    Fault = "http_404"
	FaultHTTP422    Fault = "http_422"
	FaultHTTP429    Fault = "http_429"
	FaultHTTP500    Fault = "http_500"
	FaultHTTP503    Fault = "http_503"
	FaultStallFirst Fault = "stall_first" // headers (and the role chunk) sent, then no token until the client gives up
	FaultStallMid   Fault = "stall_mid"   // a few chunks, then silence until the client gives up
	FaultCut        Fault = "cut"         // a few chunks, then a clean end of body without finish or [DONE]
	FaultMalformed  Fault = "malformed"   // one chunk of broken JSON, then the stream goes on
	FaultOversized  Fault = "oversized"   // one line of OversizedLineBytes (valid JSON, empty delta), then the stream goes on
	FaultReset      Fault = "reset"       // a few chunks, then TCP RST (SO_LINGER 0)
	FaultErrorEvent Fault = "error_event" // a few chunks, then the dialect's in-stream error event, then the end
)

// AllFaults returns every fault, the default of Config.Faults.
func AllFaults() []Fault {
	return []Fault{
		FaultHTTP400, FaultHTTP404, FaultHTTP422, FaultHTTP429, FaultHTTP500, FaultHTTP503,
		FaultStallFirst, FaultStallMid, FaultCut, FaultMalformed, FaultOversized, FaultReset,
		FaultErrorEvent,
	}
}

// Status returns the HTTP status of an HTTP fault, 0 for the others.
func (f Fault) Status() int {
	switch f {
	case FaultHTTP400:
		return 400
	case FaultHTTP404:
		return 404
	case FaultHTTP422:
		return 422
	case FaultHTTP429:
		return 429
	case FaultHTTP500:
		return 500
	case FaultHTTP503:
		return 503
	}
	return 0
}

// Valid reports whether f is one of the faults above (FaultNone included).
func (f Fault) Valid() bool {
	if f == FaultNone {
		return true
	}
	for _, g := range AllFaults() {
		if f == g {
			return true
		}
	}
	return false
}

// Request headers that steer one request.
const (
	HeaderFault = "X-Mock-Fault" // a Fault, or "none" to exempt the request from FaultRate
	HeaderTTFT  = "X-Mock-TTFT"  // Go duration replacing the prefill time (base + per token); queueing still applies
	HeaderITL   = "X-Mock-ITL"   // Go duration replacing the decode time per token (no per-running term)
	// HeaderRequestID is set on every response to the response id (the body's id
	// where the dialect has one), the key of Server.Truth.
	HeaderRequestID = "X-Request-Id"
)
