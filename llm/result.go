package llm

import (
	"time"
)

// ErrorType classifies a failed request. The values are the `error_type` tag of every
// metric, so the set is closed and small (see docs/metrics.md).
type ErrorType string

// The error types. An empty ErrorType means the request succeeded.
const (
	ErrNetwork     ErrorType = "network"      // dial, TLS, reset, EOF before headers
	ErrTimeout     ErrorType = "timeout"      // a phase deadline passed; Result.TimeoutPhase says which
	ErrHTTP4xx     ErrorType = "http_4xx"     // 4xx other than 429
	ErrHTTP5xx     ErrorType = "http_5xx"     // 5xx
	ErrRateLimited ErrorType = "rate_limited" // 429
	ErrStream      ErrorType = "stream"       // in-stream error event, oversized line/response, cut stream
	ErrDecode      ErrorType = "decode"       // malformed JSON in a chunk or body
	ErrTruncated   ErrorType = "truncated"    // stream ended without a finish reason / terminator
)

// TokenSource says where a token count came from.
type TokenSource string

// Token count sources.
const (
	SourceUsage     TokenSource = "usage"     // the server's usage block
	SourceTokenizer TokenSource = "tokenizer" // counted here with the offline BPE tokenizer
)

// Result is everything measured about one request. All durations are measured from one
// monotonic start taken just before the request is written; a zero duration means the
// point was never reached (for example TTFT of a request that failed before any token).
//
// Definitions (docs/metrics.md):
//   - TTFB: start → response headers.
//   - TTFT: start → first chunk carrying generated text of any kind, reasoning included.
//     Role-only or empty deltas do not count.
//   - TTFO: start → first chunk of the answer proper (after any reasoning).
//   - ITL: gaps between consecutive content chunks (reasoning or answer), one per gap,
//     so len(ITL) == ContentChunks-1.
//   - E2E: start → last content chunk.
//   - Duration: start → stream closed (body fully read or failure).
//   - TPOT: (E2E − TTFT) / (CompletionTokens − 1), only when CompletionTokens > 1.
type Result struct {
	Model   string
	Dialect Dialect
	// ID is the response id the server gave (the stream's "id" field, else the
	// x-request-id header), for joining client results with server logs and traces.
	ID string

	// Start is the wall-clock time the request started, for reporting and for lining up
	// with server metrics. Durations never use it.
	Start time.Time

	Status int // HTTP status; 0 when no response arrived

	// Err is the typed error of a failed request (*StatusError, *StreamError, *TimeoutError,
	// or a wrapped transport error); nil on success. It never contains secrets.
	Err          error
	ErrorType    ErrorType // "" on success
	TimeoutPhase string    // "connect", "first_token", "idle", "total" when ErrorType == ErrTimeout

	TTFB     time.Duration
	TTFT     time.Duration
	TTFO     time.Duration
	ITL      []time.Duration
	TPOT     time.Duration
	E2E      time.Duration
	Duration time.Duration

	PromptTokens     int
	CompletionTokens int
	ReasoningTokens  int         // part of CompletionTokens, where the server reports it
	TokenSource      TokenSource // source of PromptTokens/CompletionTokens

	// UsageCompletionTokens and TokenizerCompletionTokens are both set when both sources
	// exist, so the discrepancy between the server's count and ours can be reported.
	UsageCompletionTokens     int
	TokenizerCompletionTokens int

	Chunks        int // every decoded event/line carrying a JSON payload
	ContentChunks int // chunks carrying generated text (reasoning or answer)
	FinishReason  string

	Text      string // the answer; empty when the client was told not to keep text
	Reasoning string // reasoning / thinking output, kept apart from Text

	BytesSent     int64
	BytesReceived int64
}

// OK reports whether the request succeeded.
func (r *Result) OK() bool { return r.Err == nil && r.ErrorType == "" }
