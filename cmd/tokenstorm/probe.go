package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/spf13/cobra"
	"golang.org/x/net/http/httpguts"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

func init() { subcommands = append(subcommands, newProbeCmd) }

// Defaults of the probe flags.
const (
	defaultProbeURL       = "http://127.0.0.1:8000/v1"
	defaultProbePrompt    = "Write one sentence about load testing."
	defaultProbeMaxTokens = 64
	defaultProbeTimeout   = 60 * time.Second
	// probeEnvAPIKey is read when --api-key is not given, so keys stay out of shell
	// history and process listings.
	probeEnvAPIKey = "TOKENSTORM_API_KEY"
	probeTextRunes = 200 // text shown by the human output
)

type probeFlags struct {
	url, model, dialect, prompt, apiKey string
	maxTokens                           int
	headers                             []string
	json                                bool
	timeout                             time.Duration
}

func newProbeCmd() *cobra.Command {
	var f probeFlags
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Send one streamed request and print its timing breakdown",
		Long: `Send one streamed request and print its timing breakdown: TTFB, TTFT (and TTFO
after reasoning), inter-chunk gaps, TPOT, E2E, tokens and finish reason. With --json,
print one JSON object; "chunks" counts every decoded event (role, finish and usage
chunks included), "itl_ms" has one gap per pair of chunks carrying text. The API key and
credentials given with --header (Authorization, X-Api-Key, …) are never printed.
Exit status: 0 ok, 1 the request failed, 2 bad usage.`,
		Example: `  tokenstorm probe --url http://127.0.0.1:8000/v1 --model my-model
  tokenstorm probe --dialect ollama --url http://127.0.0.1:11434 --model llama3 --json
  TOKENSTORM_API_KEY=... tokenstorm probe --dialect anthropic --url https://api.anthropic.com/v1 --model claude-sonnet-4-5`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runProbe(cmd, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.url, "url", defaultProbeURL, "base URL (…/v1 for OpenAI-compatible and Anthropic servers, the root for tgi and ollama)")
	fl.StringVar(&f.model, "model", "", "model name")
	fl.StringVar(&f.dialect, "dialect", string(llm.OpenAIChat), "openai-chat, openai-completions, anthropic, tgi or ollama")
	fl.StringVar(&f.prompt, "prompt", defaultProbePrompt, "prompt text")
	fl.IntVar(&f.maxTokens, "max-tokens", defaultProbeMaxTokens, "maximum output tokens (0: server default)")
	fl.StringVar(&f.apiKey, "api-key", "", "API key (default $"+probeEnvAPIKey+")")
	fl.StringArrayVar(&f.headers, "header", nil, "extra request header K:V (repeatable)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	fl.DurationVar(&f.timeout, "timeout", defaultProbeTimeout, "total request timeout (0: none)")
	return cmd
}

func runProbe(cmd *cobra.Command, f *probeFlags) error {
	hdr, err := parseHeaders(f.headers)
	if err != nil {
		return err // usage error: exit 2
	}
	if f.maxTokens < 0 {
		return errors.New("--max-tokens must not be negative")
	}
	key := f.apiKey
	if key == "" {
		key = os.Getenv(probeEnvAPIKey)
	}
	c, err := llm.NewClient(llm.Config{
		BaseURL: f.url, Dialect: llm.Dialect(f.dialect), Model: f.model, APIKey: key,
		Headers: hdr, Timeout: f.timeout, KeepText: true,
	})
	if err != nil {
		var ce *llm.ConfigError
		if errors.As(err, &ce) {
			return fmt.Errorf("--%s: %s", probeFlagOf(ce.Field), ce.Reason)
		}
		return err
	}
	defer c.Close()
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	res := c.Do(ctx, &llm.Request{Prompt: f.prompt, MaxTokens: f.maxTokens})
	// The client redacts its APIKey; credentials given with --header are ours to hide.
	red := newRedactor(key, hdr)
	out := cmd.OutOrStdout()
	if f.json {
		err = writeProbeJSON(out, res, red)
	} else {
		err = writeProbeHuman(out, c.Config(), res, red)
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if !res.OK() {
		return &exitError{code: 1}
	}
	return nil
}

func probeFlagOf(field string) string {
	switch field {
	case "BaseURL":
		return "url"
	case "Dialect":
		return "dialect"
	case "Timeout":
		return "timeout"
	}
	return strings.ToLower(field)
}

// parseHeaders parses --header values "K:V" (spaces around K and V trimmed). Names and
// values are checked as net/http would check them when sending, so that a typo is a
// usage error (exit 2) rather than a failed request (exit 1).
func parseHeaders(hs []string) (http.Header, error) {
	hdr := http.Header{}
	for _, h := range hs {
		k, v, ok := strings.Cut(h, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch {
		case !ok || k == "":
			return nil, fmt.Errorf("--header %q: want K:V", h)
		case !httpguts.ValidHeaderFieldName(k):
			return nil, fmt.Errorf("--header %q: invalid header name", h)
		case !httpguts.ValidHeaderFieldValue(v):
			return nil, fmt.Errorf("--header %q: invalid header value", k)
		}
		hdr.Add(k, v)
	}
	return hdr, nil
}

// credentialHeaders are the request headers whose values are secrets.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "X-Api-Key", "Api-Key", "Cookie"}

// newRedactor returns a function that hides the API key and every credential given with
// --header (the whole value, and the credential after a scheme such as "Bearer ") in
// what probe prints: servers echo them in error bodies.
func newRedactor(key string, hdr http.Header) func(string) string {
	var secrets []string
	add := func(s string) {
		if len(s) >= 4 { // shorter "secrets" would redact ordinary words
			secrets = append(secrets, s)
		}
	}
	add(key)
	for _, name := range credentialHeaders {
		for _, v := range hdr.Values(name) {
			add(v)
			if _, cred, ok := strings.Cut(v, " "); ok {
				add(strings.TrimSpace(cred))
			}
		}
	}
	if len(secrets) == 0 {
		return func(s string) string { return s }
	}
	// Longest first, so a full "Bearer X" goes before X alone.
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range secrets {
		pairs = append(pairs, s, "[REDACTED]")
	}
	return strings.NewReplacer(pairs...).Replace
}

// probeJSON is the --json object; its keys are a documented contract (README, docs/metrics.md).
type probeJSON struct {
	OK               bool      `json:"ok"`
	Status           int       `json:"status"`
	ErrorType        string    `json:"error_type"`
	Error            string    `json:"error"`
	TTFBms           float64   `json:"ttfb_ms"`
	TTFTms           float64   `json:"ttft_ms"`
	TTFOms           float64   `json:"ttfo_ms"`
	ITLms            []float64 `json:"itl_ms"`
	TPOTms           float64   `json:"tpot_ms"`
	E2Ems            float64   `json:"e2e_ms"`
	Durationms       float64   `json:"duration_ms"`
	PromptTokens     int       `json:"prompt_tokens"`
	CompletionTokens int       `json:"completion_tokens"`
	TokenSource      string    `json:"token_source"`
	Chunks           int       `json:"chunks"`
	FinishReason     string    `json:"finish_reason"`
	Text             string    `json:"text"`
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func writeProbeJSON(w io.Writer, r *llm.Result, redact func(string) string) error {
	o := probeJSON{
		OK: r.OK(), Status: r.Status, ErrorType: string(r.ErrorType),
		TTFBms: ms(r.TTFB), TTFTms: ms(r.TTFT), TTFOms: ms(r.TTFO), ITLms: make([]float64, len(r.ITL)),
		TPOTms: ms(r.TPOT), E2Ems: ms(r.E2E), Durationms: ms(r.Duration),
		PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, TokenSource: string(r.TokenSource),
		Chunks: r.Chunks, FinishReason: r.FinishReason, Text: redact(r.Text),
	}
	if r.Err != nil {
		o.Error = redact(r.Err.Error())
	}
	for i, g := range r.ITL {
		o.ITLms[i] = ms(g)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(o)
}

func fmtMS(d time.Duration) string { return fmt.Sprintf("%.2f ms", ms(d)) }

func writeProbeHuman(w io.Writer, cfg llm.Config, r *llm.Result, redact func(string) string) error {
	var b strings.Builder
	row := func(k, format string, args ...any) {
		fmt.Fprintf(&b, "  %-10s ", k)
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	model := r.Model
	if model == "" {
		model = "(server default)"
	}
	fmt.Fprintf(&b, "probe %s  dialect %s  model %s\n", cfg.BaseURL, cfg.Dialect, model)
	if r.OK() {
		row("result", "ok, HTTP %d", r.Status)
	} else {
		row("result", "FAILED (%s), HTTP %d", r.ErrorType, r.Status)
		row("error", "%s", redact(r.Err.Error()))
	}
	row("TTFB", "%s", fmtMS(r.TTFB))
	row("TTFT", "%s", fmtMS(r.TTFT))
	if r.Reasoning != "" {
		row("TTFO", "%s  (first answer chunk after reasoning)", fmtMS(r.TTFO))
	}
	if len(r.ITL) > 0 {
		var itl tokens.TrendSink // k6's percentiles, as the summary of a run reports them
		for _, g := range r.ITL {
			itl.Add(ms(g))
		}
		row("ITL", "p50 %.2f ms  p99 %.2f ms  max %.2f ms  (%d gaps)", itl.Percentile(50), itl.Percentile(99), itl.Max(), itl.Count())
	}
	if r.TPOT > 0 {
		row("TPOT", "%s", fmtMS(r.TPOT))
	}
	row("E2E", "%s", fmtMS(r.E2E))
	row("duration", "%s", fmtMS(r.Duration))
	src := string(r.TokenSource)
	if src == "" {
		src = "none"
	}
	row("tokens", "prompt %d, completion %d (%s)", r.PromptTokens, r.CompletionTokens, src)
	row("chunks", "%d (%d with content)", r.Chunks, r.ContentChunks)
	if r.FinishReason != "" {
		row("finish", "%s", r.FinishReason)
	}
	if r.ID != "" {
		row("id", "%s", r.ID)
	}
	if r.Text != "" {
		row("text", "%q", clip(redact(r.Text), probeTextRunes))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// clip returns the first n runes of s, with "…" when it cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + "…"
		}
		i++
	}
	return s
}
