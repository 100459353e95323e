package gotest

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/tokenstorm/tokenstorm/js"
)

// ShortFactor divides the durations and iteration counts given through Options (and a
// Scenario's) when the tests run with -short.
const ShortFactor = 10

// Floors that -short never shrinks below.
const (
	minShortDuration   = 100 * time.Millisecond
	minShortIterations = 1
)

// An Option changes how RunScript runs a script. Overrides behave like k6's flags:
// Duration or Iterations replace the script's duration, iterations, stages and
// scenarios; VUs replaces its vus.
type Option func(*config)

type config struct {
	vus        *int64
	iterations *int64
	duration   *time.Duration
	env        map[string]string
	noShrink   bool
}

// VUs overrides the script's vus (k6's -u).
func VUs(n int64) Option { return func(c *config) { c.vus = &n } }

// Iterations overrides the script's iterations (k6's -i).
func Iterations(n int64) Option { return func(c *config) { c.iterations = &n } }

// Duration overrides the script's duration (k6's -d).
func Duration(d time.Duration) Option { return func(c *config) { c.duration = &d } }

// Env sets an environment variable the script sees in __ENV (k6's -e).
func Env(key, value string) Option {
	return func(c *config) {
		if c.env == nil {
			c.env = map[string]string{}
		}
		c.env[key] = value
	}
}

// URL points the script at a server: it sets __ENV.LLM_URL, the variable the examples
// read (a Client with no url uses the embedded mock).
func URL(u string) Option { return Env("LLM_URL", u) }

// NoShrink keeps Duration and Iterations as given under -short.
func NoShrink() Option { return func(c *config) { c.noShrink = true } }

func (c *config) shrink() { c.shrinkBy(testing.Short()) }

func (c *config) shrinkBy(short bool) {
	if c.noShrink || !short {
		return
	}
	if c.duration != nil {
		d := shrinkDuration(*c.duration)
		c.duration = &d
	}
	// Iterations shrink only beside VUs: the script's own vus are unknown here and k6
	// refuses fewer iterations than VUs.
	if c.iterations != nil && c.vus != nil {
		n := max(shrinkCount(*c.iterations), min(*c.iterations, *c.vus))
		c.iterations = &n
	}
}

func shrinkDuration(d time.Duration) time.Duration {
	return max(d/ShortFactor, min(d, minShortDuration))
}

func shrinkCount(n int64) int64 {
	return max(n/ShortFactor, min(n, minShortIterations))
}

// RunScript runs the k6-style script at path through the runner behind `tokenstorm
// run`, in-process, and returns its Result. Each crossed threshold is reported through
// t.Errorf with the metric, the threshold and the observed value; a script that could
// not run (syntax error, invalid options, exception in init or setup) fails the test
// with t.Fatalf. What the run printed (summary, logs) is logged when the test fails or
// runs with -v.
func RunScript(t testing.TB, path string, opts ...Option) *Result {
	t.Helper()
	var c config
	for _, o := range opts {
		o(&c)
	}
	c.shrink()

	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rep, err := js.Run(ctx, path, js.Options{
		VUs:        c.vus,
		Iterations: c.iterations,
		Duration:   c.duration,
		Env:        c.env,
		NoColor:    true,
		Quiet:      true,
		Stdout:     out,
		Stderr:     out,
	})
	return finish(t, path, rep, err, out)
}

// syncBuffer collects a run's output; the runner writes from several goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
