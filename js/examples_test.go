package js_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js"
)

// TestExamples runs every examples/*.js as written (each takes a few seconds against the
// embedded mock) and requires exit code 0: the examples are the documentation users copy,
// so their thresholds must hold. With -short they run with -i 2 -u 2 instead.
func TestExamples(t *testing.T) {
	scripts, err := filepath.Glob(filepath.Join("..", "examples", "*.js"))
	require.NoError(t, err)
	if len(scripts) == 0 {
		t.Skip("examples/ has no scripts yet: nothing to run")
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			t.Parallel()
			opts := js.Options{Quiet: true}
			if testing.Short() {
				opts.Iterations, opts.VUs = ptr[int64](2), ptr[int64](2)
			}
			stdout, stderr := &syncBuffer{}, &syncBuffer{}
			opts.Stdout, opts.Stderr = stdout, stderr
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := js.Run(ctx, s, opts)
			require.NoError(t, err)
			require.NotNil(t, rep)
			require.Equal(t, js.ExitOK, rep.ExitCode, "err: %v\nstderr:\n%s\nstdout:\n%s", rep.Err, stderr, stdout)
			assert.Greater(t, rep.Summary.Counter("llm_reqs"), 0.0, "the example made requests")
			assert.Zero(t, rep.Summary.Rate("llm_req_failed"), "no failed request against the mock")
		})
	}
}
