package js

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Program is what a run executes: a compiled k6-style script, or a scenario written in
// Go (package gotest). The runner treats both alike: options from VU 0, the same
// executors, metrics engine, thresholds and summaries.
type Program interface {
	// NewVU initialises VU id (k6's init context). VU 0 gives the options and runs
	// setup(), teardown() and handleSummary().
	NewVU(ctx context.Context, id int64) (ProgramVU, error)
}

// ProgramVU is one VU of a Program.
type ProgramVU interface {
	executor.VU
	// Options is the k6 options object, as JSON.
	Options() (json.RawMessage, error)
	// Exports lists the functions the program exports (default, setup, scenario execs…).
	Exports() []string
	// Call runs an exported function such as setup, teardown or handleSummary.
	Call(ctx context.Context, fn string, args ...any) (any, error)
	// SetSetupData hands setup()'s result to the VU.
	SetSetupData(data json.RawMessage)
}

// Env is what a Go Program gets from its run: where to declare metrics and send
// samples, the log, and the run-level tags (options.tags) to put on every sample.
type Env struct {
	Registry *metrics.Registry
	Emit     func(samples []xk6ext.Sample)
	Logger   *slog.Logger
	Tags     map[string]string
}

// RunProgram runs a Program built by build, exactly as Run runs a script; name stands
// for the script's path in the banner and in messages. build is called again when the
// options set run-level tags (Env.Tags then holds them) or the module's run-wide
// settings (noConnectionReuse, insecureSkipTLSVerify), as a script is compiled again. A Program that implements
// interface{ Close() error } is closed when the run ends.
func RunProgram(ctx context.Context, name string, build func(Env) (Program, error), opts Options) (*Report, error) {
	r := newRunner(name, opts)
	r.build = func(tags map[string]string) (Program, error) {
		p, err := build(Env{Registry: r.reg, Emit: r.emit, Logger: r.log, Tags: tags})
		if err == nil {
			r.track(p)
		}
		return p, err
	}
	defer r.close()
	return r.run(ctx)
}

// scriptProgram is a compiled script as a Program.
type scriptProgram struct{ *vm.Program }

func (p scriptProgram) NewVU(ctx context.Context, id int64) (ProgramVU, error) {
	vu, err := p.Program.NewVU(ctx, id)
	if err != nil {
		return nil, err
	}
	return vu, nil
}

var _ ProgramVU = (*vm.VU)(nil)
