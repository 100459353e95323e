package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func jsScript(name string) string { return filepath.Join("..", "..", "js", "testdata", name) }

func TestRunCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"passing script", []string{"run", "-q", "-e", "WHO=tester", jsScript("lifecycle.js")}, 0},
		{"thresholds crossed", []string{"run", "-q", jsScript("thresholds_fail.js")}, 99},
		{"invalid option", []string{"run", "-q", "-e", `OPT={"vus": -1}`, jsScript("bad_option.js")}, 104},
		{"syntax error", []string{"run", "-q", jsScript("syntax_error.js")}, 107},
		{"test.abort", []string{"run", "-q", jsScript("abort.js")}, 108},
		{"-i overrides the scenarios", []string{"run", "-q", "-i", "2", "-u", "2", jsScript("overrides.js")}, 0},
		{"-d overrides the scenarios", []string{"run", "-q", "-d", "200ms", jsScript("overrides.js")}, 0},
		{"-s overrides the scenarios", []string{"run", "-q", "-s", "100ms:2", "--stage", "100ms:0", jsScript("overrides.js")}, 0},
		{"bad stage flag", []string{"run", "-s", "100ms", jsScript("overrides.js")}, 2},
		{"bad stage target", []string{"run", "-s", "1s:-1", jsScript("overrides.js")}, 2},
		{"bad summary time unit", []string{"run", "-q", "--summary-time-unit", "h", jsScript("overrides.js")}, 104},
		{"bad duration flag", []string{"run", "-d", "soon", jsScript("overrides.js")}, 2},
		{"bad env flag", []string{"run", "-e", "NOEQUALS", jsScript("overrides.js")}, 2},
		{"zero vus", []string{"run", "-u", "0", jsScript("overrides.js")}, 2},
		{"no script", []string{"run"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			assert.Equal(t, c.code, execute(c.args))
		})
	}
}

func TestRunSummaryExportAndTrendStats(t *testing.T) {
	defer goleak.VerifyNone(t)
	out := filepath.Join(t.TempDir(), "summary.json")
	code := execute([]string{"run", "-q", "--no-color", "--summary-export", out,
		"--summary-trend-stats", "avg,p(99),count", "-e", "WHO=tester", jsScript("lifecycle.js")})
	require.Equal(t, 0, code)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var exp struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(b, &exp))
	d := exp.Metrics["iteration_duration"]
	require.NotNil(t, d)
	assert.Contains(t, d, "p(99)")
	assert.Contains(t, d, "count")
	assert.NotContains(t, d, "p(95)", "--summary-trend-stats replaces the default stats")
}

// TestRunStagesAndTimeUnit: -s/--stage ramps the default scenario (k6's flag) and
// --summary-time-unit fixes the unit of every trend in the summary.
func TestRunStagesAndTimeUnit(t *testing.T) {
	defer goleak.VerifyNone(t)
	out := filepath.Join(t.TempDir(), "summary.json")
	var stdout bytes.Buffer
	code := executeTo(t, &stdout, io.Discard, []string{"run", "--no-color", "--summary-time-unit", "s", "--summary-export", out,
		"-s", "300ms:3,200ms:0", jsScript("overrides.js")})
	require.Equal(t, 0, code, stdout.String())
	assert.Contains(t, stdout.String(), "Up to 3 looping VUs for 500ms over 2 stages")
	assert.Regexp(t, `iteration_duration\.+: avg=[0-9.]+s `, stdout.String(), "trend stats in seconds")
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var exp struct {
		Metrics map[string]map[string]any `json:"metrics"`
	}
	require.NoError(t, json.Unmarshal(b, &exp))
	assert.Equal(t, 3.0, exp.Metrics["vus_max"]["value"], "the stages' peak")
}

// executeTo is execute with the process's stdout and stderr sent to stdout and stderr
// (no test in this package runs in parallel, so swapping os.Stdout is safe).
func executeTo(t *testing.T, stdout, stderr io.Writer, args []string) int {
	t.Helper()
	capture := func(w io.Writer, f **os.File) func() {
		tmp, err := os.CreateTemp(t.TempDir(), "out")
		require.NoError(t, err)
		old := *f
		*f = tmp
		return func() {
			*f = old
			defer tmp.Close()
			_, err := tmp.Seek(0, io.SeekStart)
			require.NoError(t, err)
			_, err = io.Copy(w, tmp)
			require.NoError(t, err)
		}
	}
	restoreOut := capture(stdout, &os.Stdout)
	restoreErr := capture(stderr, &os.Stderr)
	code := execute(args)
	restoreErr()
	restoreOut()
	return code
}

// TestRunNoProgressWithoutTTY: the live progress line is drawn only on a terminal, as
// k6's; the banner and the summary still are printed.
func TestRunNoProgressWithoutTTY(t *testing.T) {
	defer goleak.VerifyNone(t)
	var stdout, stderr bytes.Buffer
	code := executeTo(t, &stdout, &stderr, []string{"run", "-d", "1200ms", jsScript("overrides.js")})
	require.Equal(t, 0, code, stderr.String())
	assert.NotContains(t, stderr.String(), "running (")
	assert.NotContains(t, stderr.String(), "finished (")
	assert.Contains(t, stdout.String(), "1 looping VUs for 1.2s")
	assert.Contains(t, stdout.String(), "iterations")
}
