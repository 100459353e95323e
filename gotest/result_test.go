package gotest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/gotest"
)

// softTB records Fatalf and returns, as a recording or mock TB may: the package must
// not hand back a nil or panic after such a Fatalf.
type softTB struct {
	testing.TB
	mu    sync.Mutex
	fatal []string
}

func (s *softTB) Helper()               {}
func (s *softTB) Logf(string, ...any)   {}
func (s *softTB) Errorf(string, ...any) {}
func (s *softTB) Fatalf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fatal = append(s.fatal, fmt.Sprintf(format, args...))
}
func (s *softTB) Failed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.fatal) > 0
}

func TestFatalfThatReturnsLeavesAUsableResult(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]func(tb testing.TB) *gotest.Result{
		"Run without Exec":       func(tb testing.TB) *gotest.Result { return gotest.Run(tb, gotest.Scenario{Iterations: 1}) },
		"Run without load model": func(tb testing.TB) *gotest.Result { return gotest.Run(tb, gotest.Scenario{Exec: chatOnce}) },
		"RunScript missing file": func(tb testing.TB) *gotest.Result { return gotest.RunScript(tb, "testdata/does-not-exist.js") },
	} {
		t.Run(name, func(t *testing.T) {
			tb := &softTB{TB: t}
			res := run(tb)
			require.NotNil(t, res, "a Fatalf that returned must not leave the caller a nil")
			require.NotEmpty(t, tb.fatal)
			assert.NotPanics(t, func() {
				_ = res.Trend("llm_ttft").P(95)
				_ = res.Rate("llm_goodput")
				_ = res.Counter("llm_reqs")
				_ = res.Gauge("vus_max")
				_, _ = res.Check("request ok")
				_ = res.Failed()
				_ = res.Metrics()
				_ = res.Has("llm_ttft")
				_ = res.Summary()
			})
			assert.Zero(t, res.Trend("llm_ttft").Count())
		})
	}
}

// A metric named by a threshold is in the summary even without samples; asking for it
// must still fail rather than compare against zeroes.
func TestEmptyMetricsFailTheTest(t *testing.T) {
	t.Parallel()
	idle := gotest.Scenario{
		Iterations: 1,
		NoShrink:   true,
		Thresholds: map[string][]string{"llm_ttft": {"p(95)<1000"}, "llm_req_failed": {"rate==0"}},
		Exec:       func(context.Context, *gotest.VU) error { return nil }, // no request at all
	}
	for name, ask := range map[string]func(res *gotest.Result){
		"Trend":          func(res *gotest.Result) { res.Trend("llm_ttft") },
		"Rate":           func(res *gotest.Result) { res.Rate("llm_req_failed") },
		"unknown check":  func(res *gotest.Result) { res.Check("no such check") },
		"unknown metric": func(res *gotest.Result) { res.Counter("no_such_metric") },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tb := &captureTB{TB: t}
			var res *gotest.Result
			tb.run(func(tb testing.TB) {
				res = gotest.Run(tb, idle)
				ask(res)
			})
			require.NotNil(t, res)
			assert.Empty(t, tb.errors)
			assert.False(t, res.Has("llm_ttft"), "a thresholded trend without samples has none")
			assert.NotContains(t, res.Metrics(), "llm_ttft")
			assert.Contains(t, tb.fatal, "no ", "fails naming what is missing")
		})
	}
}

// A Go iteration that fails with its own error after the stop still counts, as a
// script's exception does (vm.VU.RunIteration): only context errors mark it interrupted.
func TestExecErrorAfterStopCountsAsScript(t *testing.T) {
	t.Parallel()
	res := gotest.Run(t, gotest.Scenario{
		VUs: 2, Duration: 50 * time.Millisecond, GracefulStop: time.Millisecond, NoShrink: true,
		Exec: func(ctx context.Context, vu *gotest.VU) error {
			<-ctx.Done()
			return errors.New("own error after the stop")
		},
	})
	assert.Equal(t, 2.0, res.Counter("iterations"))
}
