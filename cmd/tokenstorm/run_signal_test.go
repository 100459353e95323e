//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// triggerWriter calls fire once when a write contains trigger.
type triggerWriter struct {
	trigger []byte
	fire    func()
	once    sync.Once
}

func (w *triggerWriter) Write(p []byte) (int, error) {
	if bytes.Contains(p, w.trigger) {
		w.once.Do(w.fire)
	}
	return len(p), nil
}

// TestRunSIGINT sends the process a real SIGINT while a script runs (when the script
// says so on stderr, so the signal handler is known to be installed): the run must stop,
// run teardown, export the summary and exit 105, as k6 does on Ctrl-C.
func TestRunSIGINT(t *testing.T) {
	defer goleak.VerifyNone(t)
	out := filepath.Join(t.TempDir(), "summary.json")
	var teardown bool
	var mu sync.Mutex
	stderr := io.MultiWriter(
		&triggerWriter{trigger: []byte("INTERRUPT-ME"), fire: func() {
			assert.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGINT)) // not require: this runs on a VU goroutine
		}},
		&triggerWriter{trigger: []byte("teardown after interrupt"), fire: func() {
			mu.Lock()
			teardown = true
			mu.Unlock()
		}},
	)
	cmd := newRunCmd()
	cmd.SetOut(io.Discard)
	cmd.SetErr(stderr)
	cmd.SetArgs([]string{"-q", "--summary-export", out, jsScript("interrupt.js")})
	err := cmd.ExecuteContext(context.Background())

	var ee *exitError
	require.ErrorAs(t, err, &ee)
	assert.Equal(t, 105, ee.code)
	mu.Lock()
	assert.True(t, teardown, "teardown ran after the signal")
	mu.Unlock()
	b, err := os.ReadFile(out)
	require.NoError(t, err, "summary exported after the signal")
	assert.Contains(t, string(b), `"iterations"`)
}
