package llm

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// MaxErrorBody is the most bytes of an error response body kept in StatusError.Body.
const MaxErrorBody = 512

// StatusError is a response whose HTTP status is not 2xx. It is never retried: retries
// hide overload, and a load test must see it.
type StatusError struct {
	StatusCode int
	// RetryAfter is the server's Retry-After header (seconds or an HTTP date, turned into
	// a duration); 0 when absent or unparseable.
	RetryAfter time.Duration
	// Body is an excerpt of the response body (at most MaxErrorBody bytes), with the
	// request's API key redacted should the server echo it.
	Body string
}

func (e *StatusError) Error() string {
	var b strings.Builder
	b.WriteString("llm: HTTP ")
	b.WriteString(strconv.Itoa(e.StatusCode))
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteByte(' ')
		b.WriteString(t)
	}
	if e.RetryAfter > 0 {
		b.WriteString(" (retry after ")
		b.WriteString(e.RetryAfter.String())
		b.WriteByte(')')
	}
	if e.Body != "" {
		b.WriteString(": ")
		b.WriteString(e.Body)
	}
	return b.String()
}

// StreamError is a failure inside a response that started well: an error event sent by
// the server, a line or response larger than the configured limits, or a stream cut in
// the middle of its framing.
type StreamError struct {
	Message string
	// Server is true when the message came from the server (an in-stream error event),
	// false when the client detected the problem.
	Server bool
}

func (e *StreamError) Error() string {
	if e.Server {
		return "llm: server error in stream: " + e.Message
	}
	return "llm: stream: " + e.Message
}

// DecodeError is a chunk or body that is not the JSON the dialect promises.
type DecodeError struct {
	// Excerpt is the start of the offending payload (at most 128 bytes).
	Excerpt string
}

func (e *DecodeError) Error() string { return "llm: malformed JSON: " + strconv.Quote(e.Excerpt) }

// TruncatedError is a stream that ended cleanly but without a finish reason or the
// dialect's terminator ([DONE], message_stop, done:true, details).
type TruncatedError struct{}

func (e *TruncatedError) Error() string {
	return "llm: stream ended without finish reason or terminator"
}

// TimeoutError is a phase deadline that passed.
type TimeoutError struct {
	// Phase is "connect", "first_token", "idle" or "total".
	Phase string
}

// The timeout phases.
const (
	PhaseConnect    = "connect"
	PhaseFirstToken = "first_token"
	PhaseIdle       = "idle"
	PhaseTotal      = "total"
)

func (e *TimeoutError) Error() string { return "llm: timeout (" + e.Phase + ")" }

// Timeout lets callers that test net.Error-style timeouts see this as one.
func (e *TimeoutError) Timeout() bool { return true }

// NetworkError wraps a transport failure (dial, TLS, reset, EOF before headers, or the
// caller's context cancelled). Its message never includes the request's headers.
type NetworkError struct {
	Op  string // "request" or "read"
	Err error
}

func (e *NetworkError) Error() string { return "llm: network (" + e.Op + "): " + e.Err.Error() }
func (e *NetworkError) Unwrap() error { return e.Err }

// statusErrorType maps an HTTP status to its error type.
func statusErrorType(code int) ErrorType {
	switch {
	case code == http.StatusTooManyRequests:
		return ErrRateLimited
	case code >= 500:
		return ErrHTTP5xx
	default:
		return ErrHTTP4xx
	}
}

// parseRetryAfter reads a Retry-After header as delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 || s > 1e9 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// classifyTransport turns an error from RoundTrip or a body read into the Result's error,
// giving a deadline cause (our phase timers) precedence over the symptom it produced.
func classifyTransport(ctx, parent context.Context, op string, err error) (error, ErrorType, string) {
	if cause := context.Cause(ctx); cause != nil {
		var te *TimeoutError
		if errors.As(cause, &te) {
			return te, ErrTimeout, te.Phase
		}
		if parent.Err() != nil {
			if errors.Is(parent.Err(), context.DeadlineExceeded) {
				te := &TimeoutError{Phase: PhaseTotal}
				return te, ErrTimeout, te.Phase
			}
			return &NetworkError{Op: op, Err: parent.Err()}, ErrNetwork, ""
		}
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		// A dial timeout of our own transport (ConnectTimeout) surfaces this way.
		var oe *net.OpError
		if errors.As(err, &oe) && oe.Op == "dial" {
			te := &TimeoutError{Phase: PhaseConnect}
			return te, ErrTimeout, te.Phase
		}
	}
	if op == "read" && errors.Is(err, io.ErrUnexpectedEOF) {
		return &StreamError{Message: "connection closed in the middle of the response"}, ErrStream, ""
	}
	return &NetworkError{Op: op, Err: err}, ErrNetwork, ""
}

// isStaleConnError reports whether err is what a reused keep-alive connection that the
// server had already closed produces: EOF or reset before any response byte.
func isStaleConnError(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "server closed idle connection")
}

// redact removes every secret from s. It is applied to every server-provided text we
// keep, since a server may echo the request's credentials in an error.
func redact(s string, secrets []string) string {
	for _, secret := range secrets {
		if len(secret) >= 4 {
			s = strings.ReplaceAll(s, secret, "[REDACTED]")
		}
	}
	return s
}

// credentialHeaders carry secrets whatever way they are given: Config.APIKey, or set by
// hand in Config.Headers or Request.Headers.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie"}

// appendSecrets appends the secret values of h's credential headers to dst: each whole
// value, and for "Scheme token" values the token alone.
func appendSecrets(dst []string, h http.Header) []string {
	for _, name := range credentialHeaders {
		for _, v := range h.Values(name) {
			dst = append(dst, v)
			if _, token, ok := strings.Cut(v, " "); ok {
				dst = append(dst, strings.TrimSpace(token))
			}
		}
	}
	return dst
}

func excerpt(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return string(b)
}
