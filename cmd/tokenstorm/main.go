// Command tokenstorm load-tests LLM inference servers: it runs k6-style scripts, serves
// an embedded mock LLM and probes a single streamed request.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a subcommand. Subcommands return it for
// every outcome that is not plain success or a usage error.
type exitError struct {
	code int
	err  error // may be nil when the command already reported what happened
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// defaultGCPercent is the GC target the CLI runs with unless GOGC says otherwise. A load
// generator allocates per request and keeps little: a less eager GC costs a little memory
// and removes most GC pauses from the read path, where they would delay chunk stamps
// that cannot come from the kernel (non-Linux hosts, custom transports); see
// docs/benchmarks.md, BenchmarkAccuracy at GOGC=100 vs 400.
const defaultGCPercent = 400

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(defaultGCPercent)
	}
	os.Exit(execute(os.Args[1:]))
}

// execute runs the CLI with args and returns the exit code.
func execute(args []string) int {
	root := newRootCmd()
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil {
			fmt.Fprintln(os.Stderr, "error:", ee.err)
		}
		return ee.code
	}
	fmt.Fprintln(os.Stderr, "error:", err)
	return 2 // usage
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "tokenstorm",
		Short:         "Load-test LLM inference servers with k6-style scripts",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newVersionCmd())
	for _, sub := range subcommands {
		root.AddCommand(sub())
	}
	return root
}

// subcommands is filled by the init functions of the files that define them, so each
// subcommand lives in its own file.
var subcommands []func() *cobra.Command

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v := "(devel)"
			if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
				v = bi.Main.Version
			}
			fmt.Fprintln(cmd.OutOrStdout(), "tokenstorm", v)
			return nil
		},
	}
}
