package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tokenstorm/tokenstorm/js"
	"github.com/tokenstorm/tokenstorm/js/executor"
)

func init() { subcommands = append(subcommands, newRunCmd) }

// runFlags are k6's `run` flags that tokenstorm supports.
type runFlags struct {
	vus           int64
	duration      string
	iterations    int64
	stages        []string
	env           []string
	summaryExport string
	trendStats    string
	timeUnit      string
	quiet         bool
	noColor       bool
	noSummary     bool
}

func newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] SCRIPT.js",
		Short: "Run a k6-style script",
		Long: `Run a k6-style script (ES module) with k6's lifecycle: init, setup(), the scenarios,
teardown(), then handleSummary() or the end-of-test summary.

-u, -d, -i and -s override the script's options as k6's flags do: -d, -i or -s replace
its duration, iterations, stages and scenarios; -u replaces its vus.

Exit codes (k6's): 0 ok, 99 thresholds crossed, 100 setup timeout, 101 teardown timeout,
104 invalid options, 105 interrupted, 107 script error (syntax, init, setup, teardown),
108 aborted by exec.test.abort().`,
		Example: `  tokenstorm run examples/quickstart.js
  tokenstorm run -u 10 -d 30s -e LLM_URL=http://127.0.0.1:8000/v1 examples/chat.js`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := f.options(cmd)
			if err != nil {
				return err
			}
			opts.Stdout, opts.Stderr = cmd.OutOrStdout(), cmd.ErrOrStderr()
			opts.Progress = !f.quiet && isTTY(opts.Stderr)

			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			// After the first signal, restore the default handling so a second Ctrl-C
			// kills the process at once, as in k6.
			go func() {
				<-ctx.Done()
				stop()
			}()

			rep, err := js.Run(ctx, args[0], opts)
			if rep == nil {
				return &exitError{code: 1, err: err}
			}
			if err != nil {
				code := rep.ExitCode
				if code == 0 {
					code = 1
				}
				return &exitError{code: code, err: err}
			}
			if rep.ExitCode != 0 {
				return &exitError{code: rep.ExitCode, err: rep.Err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.Int64VarP(&f.vus, "vus", "u", 1, "number of virtual users (replaces options.vus)")
	fl.StringVarP(&f.duration, "duration", "d", "", `test duration, e.g. "30s", "1m30s" (replaces the script's execution options)`)
	fl.Int64VarP(&f.iterations, "iterations", "i", 0, "total iterations, shared by the VUs (replaces the script's execution options)")
	fl.StringSliceVarP(&f.stages, "stage", "s", nil, `a ramping stage DURATION:TARGET, e.g. "30s:10" (repeatable or comma-separated; replaces the script's execution options)`)
	fl.StringArrayVarP(&f.env, "env", "e", nil, "KEY=VALUE added to __ENV (repeatable); the process environment is included")
	fl.StringVar(&f.summaryExport, "summary-export", "", "write the end-of-test summary as k6's JSON export to this file")
	fl.StringVar(&f.trendStats, "summary-trend-stats", "", `trend statistics in the summary, e.g. "avg,p(95),p(99)"`)
	fl.StringVar(&f.timeUnit, "summary-time-unit", "", `time unit of the trend stats in the summary: "s", "ms" or "us" (default: automatic)`)
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no live progress line and no banner")
	fl.BoolVar(&f.noColor, "no-color", false, "no colours in the output")
	fl.BoolVar(&f.noSummary, "no-summary", false, "do not print the end-of-test summary")
	return cmd
}

// options turns the flags into js.Options; only flags given on the command line
// override the script.
func (f *runFlags) options(cmd *cobra.Command) (js.Options, error) {
	var o js.Options
	fl := cmd.Flags()
	if fl.Changed("vus") {
		if f.vus < 1 {
			return o, fmt.Errorf("--vus must be at least 1, got %d", f.vus)
		}
		o.VUs = &f.vus
	}
	if fl.Changed("iterations") {
		if f.iterations < 1 {
			return o, fmt.Errorf("--iterations must be at least 1, got %d", f.iterations)
		}
		o.Iterations = &f.iterations
	}
	if fl.Changed("duration") {
		d, err := executor.ParseDuration(f.duration)
		if err != nil {
			return o, fmt.Errorf("--duration: %w", err)
		}
		if d <= 0 {
			return o, fmt.Errorf("--duration must be greater than 0, got %q", f.duration)
		}
		o.Duration = &d
	}
	for _, st := range f.stages {
		s, err := parseStage(st)
		if err != nil {
			return o, err
		}
		o.Stages = append(o.Stages, s)
	}
	if len(f.env) > 0 {
		o.Env = make(map[string]string, len(f.env))
		for _, kv := range f.env {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || k == "" {
				return o, fmt.Errorf("--env %q: want KEY=VALUE", kv)
			}
			o.Env[k] = v
		}
	}
	if f.trendStats != "" {
		for _, s := range strings.Split(f.trendStats, ",") {
			if s = strings.TrimSpace(s); s != "" {
				o.SummaryTrendStats = append(o.SummaryTrendStats, s)
			}
		}
	}
	o.SummaryExport, o.SummaryTimeUnit = f.summaryExport, f.timeUnit
	o.Quiet, o.NoColor, o.NoSummary = f.quiet, f.noColor, f.noSummary
	return o, nil
}

// parseStage parses k6's --stage value, DURATION:TARGET.
func parseStage(v string) (executor.Stage, error) {
	ds, ts, ok := strings.Cut(v, ":")
	if !ok {
		return executor.Stage{}, fmt.Errorf("--stage %q: want DURATION:TARGET, e.g. 30s:10", v)
	}
	d, err := executor.ParseDuration(ds)
	if err != nil || d < 0 {
		return executor.Stage{}, fmt.Errorf("--stage %q: bad duration %q", v, ds)
	}
	target, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || target < 0 {
		return executor.Stage{}, fmt.Errorf("--stage %q: the target must be a whole number ≥ 0, got %q", v, ts)
	}
	return executor.Stage{Duration: d, Target: target}, nil
}

func isTTY(w any) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
