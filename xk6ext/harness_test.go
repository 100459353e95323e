package xk6ext_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/mockllm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sink is the test's metric registry and sample sink: it records every sample the
// module emits, with the tags the host merged.
type sink struct {
	mu      sync.Mutex
	metrics map[string]*xk6ext.Metric
	samples []xk6ext.Sample
}

func newSink() *sink { return &sink{metrics: map[string]*xk6ext.Metric{}} }

func (s *sink) NewMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.metrics[name]; ok {
		if m.Type != typ || m.ValueType != vt {
			return nil, fmt.Errorf("metric %s redeclared as %s/%s (was %s/%s)", name, typ, vt, m.Type, m.ValueType)
		}
		return m, nil
	}
	m := &xk6ext.Metric{Name: name, Type: typ, ValueType: vt}
	s.metrics[name] = m
	return m, nil
}

func (s *sink) Emit(samples []xk6ext.Sample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, smp := range samples {
		tags := make(map[string]string, len(smp.Tags))
		for k, v := range smp.Tags {
			tags[k] = v
		}
		smp.Tags = tags
		s.samples = append(s.samples, smp)
	}
}

// named returns the samples of one metric.
func (s *sink) named(name string) []xk6ext.Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []xk6ext.Sample
	for _, smp := range s.samples {
		if smp.Metric.Name == name {
			out = append(out, smp)
		}
	}
	return out
}

func (s *sink) names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := map[string]bool{}
	for _, smp := range s.samples {
		seen[smp.Metric.Name] = true
	}
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// env is one test run: a root module, a sink and a script directory.
type env struct {
	root *xk6ext.RootModule
	sink *sink
	dir  string
	vars map[string]string
}

func newEnv(t *testing.T, opts ...xk6ext.Option) *env {
	t.Helper()
	e := &env{root: xk6ext.NewRootModule(opts...), sink: newSink(), dir: t.TempDir(), vars: map[string]string{}}
	t.Cleanup(func() { require.NoError(t, e.root.Close()) })
	return e
}

// startMock starts a mock for the test with ground truth on, and puts its OpenAI base
// URL in __ENV.MOCK_URL (root in MOCK_ROOT).
func (e *env) startMock(t *testing.T, cfg mockllm.Config) *mockllm.Server {
	t.Helper()
	cfg.RecordTruth = true
	srv, err := mockllm.Start(context.Background(), "127.0.0.1:0", cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	e.vars["MOCK_URL"] = srv.URL() + "/v1"
	e.vars["MOCK_ROOT"] = srv.URL()
	return srv
}

func (e *env) factory(h xk6ext.Host) (vm.Exports, error) {
	ex, err := e.root.Instantiate(h)
	return vm.Exports{Default: ex.Default, Named: ex.Named}, err
}

// compile writes script as main.js in the env's directory and compiles it.
func (e *env) compile(t *testing.T, script string) *vm.Program {
	t.Helper()
	path := filepath.Join(e.dir, "main.js")
	require.NoError(t, os.WriteFile(path, []byte(script), 0o644))
	return e.compileFile(t, path)
}

func (e *env) compileFile(t *testing.T, path string) *vm.Program {
	t.Helper()
	prog, err := vm.Compile(path, vm.Config{
		Env:      e.vars,
		Modules:  map[string]vm.ModuleFactory{xk6ext.ImportPath: e.factory},
		Registry: e.sink,
		Emit:     e.sink.Emit,
	})
	require.NoError(t, err)
	return prog
}

// vu compiles script and initialises VU 1.
func (e *env) vu(t *testing.T, script string) *vm.VU {
	t.Helper()
	vu, err := e.compile(t, script).NewVU(testCtx(t), 1)
	require.NoError(t, err)
	return vu
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call runs an exported function and returns its result exported to Go.
func call(t *testing.T, vu *vm.VU, fn string, args ...any) any {
	t.Helper()
	v, err := vu.Call(testCtx(t), fn, args...)
	require.NoError(t, err)
	return v
}

// callErr runs an exported function that must throw and returns the error.
func callErr(t *testing.T, vu *vm.VU, fn string) error {
	t.Helper()
	_, err := vu.Call(testCtx(t), fn)
	require.Error(t, err, "%s should throw", fn)
	return err
}

// obj asserts v is a JS object exported to Go.
func obj(t *testing.T, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	require.True(t, ok, "want an object, got %T", v)
	return m
}

func num(t *testing.T, v any) float64 {
	t.Helper()
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	case int:
		return float64(x)
	}
	t.Fatalf("want a number, got %T (%v)", v, v)
	return 0
}

var errNoTruth = errors.New("no truth")

// truthOf returns the mock's ground truth for a response id.
func truthOf(srv *mockllm.Server, id string) (mockllm.Truth, error) {
	tr, ok := srv.Truth(id)
	if !ok {
		return tr, fmt.Errorf("%w for %q", errNoTruth, id)
	}
	return tr, nil
}

func writeFile(dir, name, content string) error {
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

func itoa(i int) string { return fmt.Sprint(i) }
