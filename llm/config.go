package llm

import (
	"crypto/tls"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Defaults applied to a zero Config field.
const (
	// DefaultMaxLineBytes bounds one SSE line / NDJSON line (1 MiB): far above any real
	// chunk, low enough that a hostile server cannot exhaust memory.
	DefaultMaxLineBytes = 1 << 20
	// DefaultMaxResponseBytes bounds one whole response body (64 MiB).
	DefaultMaxResponseBytes = 64 << 20
	// DefaultEncoding is the tiktoken encoding used to count tokens when the server
	// reports no usage. cl100k_base is the most widely shared BPE among the servers we
	// target; counts for other model families are estimates, which Result.TokenSource
	// makes visible. "none" disables tokenizer counting.
	DefaultEncoding = "cl100k_base"
	// DefaultAnthropicMaxTokens is sent as max_tokens to the Anthropic dialect when the
	// request sets none, because the Messages API requires the field.
	DefaultAnthropicMaxTokens = 1024
	// DefaultAnthropicVersion is the anthropic-version header sent with the Anthropic
	// dialect unless Headers sets one.
	DefaultAnthropicVersion = "2023-06-01"
	// DefaultTimeout, DefaultConnectTimeout, DefaultFirstTokenTimeout and
	// DefaultIdleTimeout are all 0: no deadline. A load test decides its own patience;
	// the caller's context still bounds every request.
	DefaultTimeout           time.Duration = 0
	DefaultConnectTimeout    time.Duration = 0
	DefaultFirstTokenTimeout time.Duration = 0
	DefaultIdleTimeout       time.Duration = 0
	// EncodingNone turns tokenizer counting off.
	EncodingNone = "none"
)

// Config configures a Client. The zero value of every field but BaseURL is usable.
type Config struct {
	// BaseURL is what users write for the server: http://127.0.0.1:8000/v1 for the
	// OpenAI dialects and Anthropic; the server root for TGI and Ollama.
	BaseURL string
	// Dialect is the wire protocol; default OpenAIChat.
	Dialect Dialect
	// Model is sent with every request unless Request.Model overrides it.
	Model string
	// APIKey is sent as "Authorization: Bearer" (as x-api-key for Anthropic). It never
	// appears in errors or results.
	APIKey string
	// Headers are added to every request.
	Headers http.Header

	// Phase timeouts; 0 means none. ConnectTimeout covers dial and TLS up to a usable
	// connection; FirstTokenTimeout runs from the start to the first content chunk;
	// IdleTimeout is the longest gap allowed between chunks after the first content
	// chunk; Timeout bounds the whole request. Each expiry is a *TimeoutError.
	ConnectTimeout, FirstTokenTimeout, IdleTimeout, Timeout time.Duration

	// KeepText keeps the answer and reasoning in Result.Text / Result.Reasoning.
	KeepText bool
	// NoConnectionReuse opens a new connection per request (k6's
	// --no-connection-reuse).
	NoConnectionReuse bool
	// NoIncludeUsage does not send stream_options.include_usage to the OpenAI dialects
	// (some servers reject the field).
	NoIncludeUsage bool
	// CompareTokenizer also counts completion tokens with the tokenizer when the server
	// reports usage, filling Result.TokenizerCompletionTokens next to
	// Result.UsageCompletionTokens. Off by default: BPE costs CPU per request.
	CompareTokenizer bool
	// Encoding is the tiktoken encoding for counting (cl100k_base, o200k_base,
	// r50k_base, p50k_base, p50k_edit, or "none"); default DefaultEncoding.
	Encoding string

	// MaxLineBytes and MaxResponseBytes bound one line and one response; exceeding
	// either is a *StreamError. Defaults DefaultMaxLineBytes, DefaultMaxResponseBytes.
	MaxLineBytes, MaxResponseBytes int

	// NoKernelTimestamps stamps chunks when the read that delivered them returns,
	// instead of with the kernel's receive time of their bytes (SO_TIMESTAMPNS, Linux,
	// the Client's own transport only). The kernel stamp leaves out the time the
	// reading goroutine waits for a CPU, which dominates the error under load.
	NoKernelTimestamps bool

	// Transport replaces the Client's own *http.Transport. The Client then does not
	// close its idle connections, and the stale keep-alive retry reuses Transport.
	Transport http.RoundTripper
	// TLSClientConfig is used by the Client's own transport (for example a test CA or
	// InsecureSkipVerify); nil means Go's defaults.
	TLSClientConfig *tls.Config
}

// ConfigError is an invalid Config; Field names the offending field.
type ConfigError struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string { return "llm: Config." + e.Field + ": " + e.Reason }

var knownEncodings = map[string]bool{
	"cl100k_base": true, "o200k_base": true, "r50k_base": true, "p50k_base": true, "p50k_edit": true,
	EncodingNone: true,
}

// normalize validates cfg and fills defaults.
func (cfg *Config) normalize() error {
	if cfg.BaseURL == "" {
		return &ConfigError{Field: "BaseURL", Reason: "required"}
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return &ConfigError{Field: "BaseURL", Reason: "must be an absolute http(s) URL"}
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	switch cfg.Dialect {
	case "":
		cfg.Dialect = OpenAIChat
	case OpenAIChat, OpenAICompletions, Anthropic, TGI, Ollama:
	default:
		return &ConfigError{Field: "Dialect", Reason: "unknown dialect " + string(cfg.Dialect)}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"ConnectTimeout", cfg.ConnectTimeout}, {"FirstTokenTimeout", cfg.FirstTokenTimeout},
		{"IdleTimeout", cfg.IdleTimeout}, {"Timeout", cfg.Timeout},
	} {
		if d.v < 0 {
			return &ConfigError{Field: d.name, Reason: "must not be negative"}
		}
	}
	if cfg.MaxLineBytes < 0 {
		return &ConfigError{Field: "MaxLineBytes", Reason: "must not be negative"}
	}
	if cfg.MaxResponseBytes < 0 {
		return &ConfigError{Field: "MaxResponseBytes", Reason: "must not be negative"}
	}
	if cfg.MaxLineBytes == 0 {
		cfg.MaxLineBytes = DefaultMaxLineBytes
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.Encoding == "" {
		cfg.Encoding = DefaultEncoding
	}
	if !knownEncodings[cfg.Encoding] {
		return &ConfigError{Field: "Encoding", Reason: "unknown encoding " + cfg.Encoding}
	}
	return nil
}
