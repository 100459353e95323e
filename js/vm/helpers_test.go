package vm_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/grafana/sobek"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// sink records every emitted sample.
type sink struct {
	mu      sync.Mutex
	samples []xk6ext.Sample
}

func (s *sink) emit(samples []xk6ext.Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, samples...)
}

func (s *sink) named(name string) []xk6ext.Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []xk6ext.Sample
	for _, x := range s.samples {
		if x.Metric.Name == name {
			out = append(out, x)
		}
	}
	return out
}

// probe is a native test module, "k6/x/probe", giving scripts hooks into the test.
type probe struct {
	mu       sync.Mutex
	records  []any
	hosts    []xk6ext.Host
	cancel   context.CancelFunc
	release  chan struct{} // later() resolves when closed
	started  chan struct{} // later() signals here once its goroutine runs
	late     chan func(func() error)
	inits    int
	goroutes sync.WaitGroup
}

func newProbe() *probe {
	return &probe{release: make(chan struct{}), started: make(chan struct{}, 16), late: make(chan func(func() error), 16)}
}

func (p *probe) factory(h xk6ext.Host) (vm.Exports, error) {
	p.mu.Lock()
	p.inits++
	p.hosts = append(p.hosts, h)
	p.mu.Unlock()
	rt := h.Runtime()
	return vm.Exports{Named: map[string]any{
		"record": func(v sobek.Value) {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.records = append(p.records, v.Export())
		},
		"cancel": func() { p.cancel() },
		"inInit": func() bool { return h.InInit() },
		"state":  func() xk6ext.State { return h.State() },
		// later(v) returns a promise resolved with v from another goroutine once the test
		// closes release.
		"later": func(v sobek.Value) *sobek.Promise {
			promise, resolve, _ := rt.NewPromise()
			enqueue := h.RegisterCallback()
			p.goroutes.Add(1)
			go func() {
				defer p.goroutes.Done()
				p.started <- struct{}{}
				<-p.release
				enqueue(func() error { return resolve(v) })
			}()
			return promise
		},
		// soon(v) resolves at once from another goroutine.
		"soon": func(v sobek.Value) *sobek.Promise {
			promise, resolve, _ := rt.NewPromise()
			enqueue := h.RegisterCallback()
			p.goroutes.Add(1)
			go func() {
				defer p.goroutes.Done()
				enqueue(func() error { return resolve(v) })
			}()
			return promise
		},
		// hold() reserves a slot and hands its enqueue to the test, never filling it.
		"hold": func() {
			p.late <- h.RegisterCallback()
		},
		"emit": func(name string, value float64, tags map[string]string) {
			m, _ := h.NewMetric(name, xk6ext.Counter, xk6ext.Default)
			if m == nil {
				m = &xk6ext.Metric{Name: name, Type: xk6ext.Counter}
			}
			var t map[string]string
			if tags != nil {
				t = make(map[string]string, len(tags))
				for k, v := range tags {
					t[k] = v
				}
			}
			h.Emit(xk6ext.Sample{Metric: m, Value: value, Tags: t})
		},
	}}, nil
}

func (p *probe) recorded() []any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]any(nil), p.records...)
}

type env struct {
	t     *testing.T
	sink  *sink
	probe *probe
	cfg   vm.Config
	logs  *logBuffer
}

func newEnv(t *testing.T) *env {
	e := &env{t: t, sink: &sink{}, probe: newProbe(), logs: &logBuffer{}}
	e.cfg = vm.Config{
		Env:     map[string]string{"GREETING": "hello"},
		Modules: map[string]vm.ModuleFactory{"k6/x/probe": e.probe.factory},
		Emit:    e.sink.emit,
		Logger:  slog.New(e.logs),
		Tags:    map[string]string{"run": "r1"},
	}
	t.Cleanup(func() { e.probe.goroutes.Wait() })
	return e
}

func (e *env) compile(script string) *vm.Program {
	e.t.Helper()
	p, err := vm.Compile(testdata(script), e.cfg)
	require.NoError(e.t, err)
	return p
}

func (e *env) vu(script string, id int64) *vm.VU {
	e.t.Helper()
	vu, err := e.compile(script).NewVU(context.Background(), id)
	require.NoError(e.t, err)
	e.probe.reset()
	return vu
}

// writeScript writes src to a temp dir and returns its path.
func writeScript(t *testing.T, name, src string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

func testdata(name string) string {
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join("testdata", name)
}

func scenario(name string) *executor.Scenario {
	return &executor.Scenario{Name: name, Executor: "shared-iterations", Exec: "default"}
}

// logBuffer is a slog handler keeping records.
type logBuffer struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *logBuffer) Enabled(context.Context, slog.Level) bool { return true }
func (l *logBuffer) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}
func (l *logBuffer) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logBuffer) WithGroup(string) slog.Handler      { return l }

func (l *logBuffer) lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.recs))
	for i, r := range l.recs {
		out[i] = r.Level.String() + " " + r.Message
	}
	return out
}

func writeIn(t *testing.T, dir, name, src string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(src), 0o644))
	return path
}

// reset forgets what init code recorded.
func (p *probe) reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.records = nil
}

func writeFile(path, src string) error { return os.WriteFile(path, []byte(src), 0o644) }
