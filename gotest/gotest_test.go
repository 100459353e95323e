package gotest_test

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/tokenstorm/tokenstorm/gotest"
	"github.com/tokenstorm/tokenstorm/mockllm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// captureTB records what a test reports instead of failing the real test, so a
// deliberately failing scenario can be checked for the message it produces.
type captureTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
	fatal  string
	failed bool
}

func (c *captureTB) Helper() {}

func (c *captureTB) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errors = append(c.errors, fmt.Sprintf(format, args...))
	c.failed = true
}

func (c *captureTB) Fatalf(format string, args ...any) {
	c.mu.Lock()
	c.fatal = fmt.Sprintf(format, args...)
	c.failed = true
	c.mu.Unlock()
	runtime.Goexit()
}

func (c *captureTB) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func (c *captureTB) Logf(string, ...any) {}

// run calls fn with the capturing TB on its own goroutine, since Fatalf ends the
// goroutine it is called on, as testing.T's does.
func (c *captureTB) run(fn func(tb testing.TB)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(c)
	}()
	<-done
}

func TestRunScriptPasses(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 5 * time.Millisecond, ITL: time.Millisecond})
	res := gotest.RunScript(t, "testdata/slo.js", gotest.URL(mock.OpenAIURL()), gotest.NoShrink())

	require.Equal(t, 0, res.ExitCode, res.Output)
	assert.Empty(t, res.Failed())
	assert.Equal(t, 6.0, res.Counter("llm_reqs"))
	assert.Equal(t, 6.0, res.Counter("iterations"))
	assert.Zero(t, res.Rate("llm_req_failed"))
	ttft := res.Trend("llm_ttft")
	assert.Equal(t, int64(6), ttft.Count())
	// The mock's prefill is 5ms; TTFT cannot be shorter than the server took.
	assert.GreaterOrEqual(t, ttft.Min(), 5.0)
	passes, fails := res.Check("request ok")
	assert.Equal(t, int64(6), passes)
	assert.Zero(t, fails)
	assert.Len(t, mock.Truths(), 6, "every request reached the mock named by URL")
}

func TestRunScriptReportsCrossedThreshold(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 40 * time.Millisecond})
	tb := &captureTB{TB: t}
	var res *gotest.Result
	tb.run(func(tb testing.TB) {
		res = gotest.RunScript(tb, "testdata/slo.js",
			gotest.URL(mock.OpenAIURL()), gotest.Env("TTFT_LIMIT_MS", "1"), gotest.NoShrink())
	})

	require.Empty(t, tb.fatal)
	require.NotNil(t, res)
	assert.Equal(t, 99, res.ExitCode)
	require.Len(t, tb.errors, 1, "exactly the TTFT threshold is crossed: %q", tb.errors)
	msg := tb.errors[0]
	assert.Contains(t, msg, "llm_ttft")
	assert.Contains(t, msg, `"p(95)<1"`)
	assert.Contains(t, msg, "observed p(95) = ")
	assert.Contains(t, msg, "ms", "the observed value is printed as a duration")
	assert.GreaterOrEqual(t, res.Thresholds[indexOf(t, res, "llm_ttft")].Observed, 40.0)
}

func indexOf(t *testing.T, res *gotest.Result, metric string) int {
	for i, th := range res.Thresholds {
		if th.Metric == metric {
			return i
		}
	}
	t.Fatalf("no threshold on %s in %+v", metric, res.Thresholds)
	return -1
}

func TestRunScriptScriptErrorFails(t *testing.T) {
	t.Parallel()
	tb := &captureTB{TB: t}
	tb.run(func(tb testing.TB) { gotest.RunScript(tb, "testdata/does-not-exist.js") })
	assert.True(t, tb.Failed())
	assert.Contains(t, tb.fatal, "does-not-exist.js")
}

func TestRequireThresholdsListsEveryCrossing(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: 20 * time.Millisecond})
	inner := &captureTB{TB: t}
	var res *gotest.Result
	inner.run(func(tb testing.TB) {
		res = gotest.RunScript(tb, "testdata/slo.js", gotest.URL(mock.OpenAIURL()),
			gotest.Env("TTFT_LIMIT_MS", "1"), gotest.Iterations(2), gotest.NoShrink())
	})
	require.NotNil(t, res)
	outer := &captureTB{TB: t}
	outer.run(func(tb testing.TB) { gotest.RequireThresholds(tb, res) })
	assert.True(t, strings.HasPrefix(outer.fatal, "1 threshold(s) crossed:"), outer.fatal)
	assert.Contains(t, outer.fatal, "llm_ttft")
}

func TestMockServerRecordsTruth(t *testing.T) {
	t.Parallel()
	mock := gotest.MockServer(t, mockllm.Config{TTFT: time.Millisecond})
	res := gotest.RunScript(t, "testdata/slo.js", gotest.URL(mock.OpenAIURL()),
		gotest.Iterations(1), gotest.VUs(1), gotest.NoShrink())
	require.Equal(t, 0, res.ExitCode)
	truths := mock.Truths()
	require.Len(t, truths, 1)
	assert.Equal(t, int(res.Counter("llm_completion_tokens")), truths[0].CompletionTokens)
}
