package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

func init() { subcommands = append(subcommands, newMockCmd) }

// defaultMockAddr is loopback: the mock is a test tool and should not be reachable
// from the network unless asked.
const defaultMockAddr = "127.0.0.1:8000"

func newMockCmd() *cobra.Command {
	var (
		addr   string
		cfg    mockllm.Config
		faults []string
	)
	cmd := &cobra.Command{
		Use:   "mock",
		Short: "Serve the embedded mock LLM (127.0.0.1 by default)",
		Long: `Serve the embedded mock LLM server: OpenAI chat and completions, Anthropic
messages, TGI and Ollama, streamed or not, with a latency and capacity model,
fault injection and vLLM-named Prometheus metrics at /metrics.

It binds 127.0.0.1 unless --addr names another host (an empty host, as in ":8000",
still means 127.0.0.1; write 0.0.0.0:8000 to listen on every interface).

Per request, the headers X-Mock-Fault (a fault name), X-Mock-TTFT and X-Mock-ITL
(Go durations) override the configuration; every response carries X-Request-Id.
Faults: ` + faultList() + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := mockConfig(cfg, faults)
			if err != nil {
				return err // usage error: exit 2
			}
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return fmt.Errorf("--addr %q: %w", addr, err)
			}
			if host == "" {
				host = "127.0.0.1"
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			srv, err := mockllm.Start(ctx, net.JoinHostPort(host, port), c)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			out := cmd.OutOrStdout()
			u := srv.URL()
			fmt.Fprintf(out, "tokenstorm mock: model %q on %s (Ctrl-C to stop)\n", c.Model, u)
			for _, l := range []struct{ dialect, base, routes string }{
				{"openai-chat", u + "/v1", "POST /v1/chat/completions"},
				{"openai-completions", u + "/v1", "POST /v1/completions"},
				{"anthropic", u + "/v1", "POST /v1/messages"},
				{"tgi", u, "POST /generate_stream, /generate"},
				{"ollama", u, "POST /api/chat"},
				{"metrics", u + "/metrics", "GET /metrics, /health, /v1/models"},
			} {
				fmt.Fprintf(out, "  %-19s %-32s %s\n", l.dialect, l.base, l.routes)
			}
			<-ctx.Done()
			if err := srv.Close(); err != nil {
				return &exitError{code: 1, err: err}
			}
			fmt.Fprintln(out, "tokenstorm mock: stopped")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&addr, "addr", defaultMockAddr, "listen address (host:port; port 0 picks a free one)")
	f.StringVar(&cfg.Model, "model", mockllm.DefaultModel, "served model name (/v1/models, metrics label)")
	f.DurationVar(&cfg.TTFT, "ttft", mockllm.DefaultTTFT, "prefill base time, from admission to the first token")
	f.DurationVar(&cfg.PrefillPerToken, "prefill-per-token", 0, "prefill time added per prompt token")
	f.DurationVar(&cfg.ITL, "itl", mockllm.DefaultITL, "decode time per token")
	f.DurationVar(&cfg.ITLPerRunning, "itl-per-running", 0, "decode time added per token for every running sequence")
	f.IntVar(&cfg.MaxNumSeqs, "max-num-seqs", 0, "sequences decoded at once; more wait in a queue (0 = unlimited)")
	f.Float64Var(&cfg.Jitter, "jitter", 0, "relative jitter of every delay (0.1 = ±10%), seeded")
	f.Int64Var(&cfg.Seed, "seed", 0, "seed of delays, lengths, faults and text")
	f.IntVar(&cfg.TokensPerChunk, "tokens-per-chunk", mockllm.DefaultTokensPerChunk, "tokens packed in each streamed chunk")
	f.IntVar(&cfg.MaxTokens, "max-tokens", mockllm.DefaultMaxTokens, "output length of requests that set no max_tokens")
	f.Float64Var(&cfg.FaultRate, "fault-rate", 0, "probability that a request gets a random fault")
	f.StringSliceVar(&faults, "faults", nil, "faults drawn at --fault-rate (default all)")
	f.IntVar(&cfg.Reasoning, "reasoning", 0, "reasoning tokens emitted before the answer (chat, anthropic, ollama)")
	return cmd
}

// mockConfig validates the flags and maps them onto mockllm.Config, whose zero
// durations mean "default": an explicit 0 on the command line means no delay.
func mockConfig(c mockllm.Config, faults []string) (mockllm.Config, error) {
	for name, d := range map[string]time.Duration{"--ttft": c.TTFT, "--itl": c.ITL,
		"--prefill-per-token": c.PrefillPerToken, "--itl-per-running": c.ITLPerRunning} {
		if d < 0 {
			return c, fmt.Errorf("%s must not be negative", name)
		}
	}
	if c.TTFT == 0 {
		c.TTFT = -1
	}
	if c.ITL == 0 {
		c.ITL = -1
	}
	switch {
	case c.MaxNumSeqs < 0:
		return c, errors.New("--max-num-seqs must not be negative")
	case c.Jitter < 0 || c.Jitter > 1:
		return c, errors.New("--jitter must be within [0, 1]")
	case c.FaultRate < 0 || c.FaultRate > 1:
		return c, errors.New("--fault-rate must be within [0, 1]")
	case c.TokensPerChunk < 1:
		return c, errors.New("--tokens-per-chunk must be at least 1")
	case c.MaxTokens < 1 || c.MaxTokens > mockllm.MaxOutputTokens:
		return c, fmt.Errorf("--max-tokens must be within [1, %d]", mockllm.MaxOutputTokens)
	case c.Reasoning < 0:
		return c, errors.New("--reasoning must not be negative")
	case c.Model == "":
		return c, errors.New("--model must not be empty")
	}
	for _, f := range faults {
		ft := mockllm.Fault(f)
		if ft == mockllm.FaultNone || !ft.Valid() {
			return c, fmt.Errorf("--faults: unknown fault %q (known: %s)", f, faultList())
		}
		c.Faults = append(c.Faults, ft)
	}
	return c, nil
}

func faultList() string {
	s := ""
	for i, f := range mockllm.AllFaults() {
		if i > 0 {
			s += ", "
		}
		s += string(f)
	}
	return s
}
