package js

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/js/executor"
)

func TestParseOptions(t *testing.T) {
	t.Run("defaults", func(t *testing.T) {
		for _, raw := range []string{"", "null", "{}", `{"vus": null}`} {
			o, err := parseOptions([]byte(raw))
			require.NoError(t, err, raw)
			assert.Nil(t, o.VUs)
			assert.Equal(t, DefaultSetupTimeout, o.SetupTimeout)
			assert.Equal(t, DefaultTeardownTimeout, o.TeardownTimeout)
		}
	})
	t.Run("every supported option", func(t *testing.T) {
		o, err := parseOptions([]byte(`{
			"vus": 3, "duration": "1m30s", "iterations": 7,
			"stages": [{"duration": "10s", "target": 5}, {"duration": 2000}],
			"scenarios": {"a": {"executor": "shared-iterations"}},
			"thresholds": {"checks": ["rate>0.9"]},
			"summaryTrendStats": ["avg", "p(99.9)", "count"], "summaryTimeUnit": "ms",
			"setupTimeout": "2m", "teardownTimeout": 5000, "minIterationDuration": "250ms",
			"tags": {"team": "llm"}, "noSetup": true, "noTeardown": false,
			"discardResponseBodies": true, "cloud": {"name": "x"}
		}`))
		require.NoError(t, err)
		assert.Equal(t, int64(3), *o.VUs)
		assert.Equal(t, 90*time.Second, *o.Duration)
		assert.Equal(t, int64(7), *o.Iterations)
		assert.Equal(t, []executor.Stage{{Duration: 10 * time.Second, Target: 5}, {Duration: 2 * time.Second}}, o.Stages)
		assert.JSONEq(t, `{"a": {"executor": "shared-iterations"}}`, string(o.Scenarios))
		assert.Contains(t, o.Thresholds, "checks")
		assert.Equal(t, []string{"avg", "p(99.9)", "count"}, o.SummaryTrendStats)
		assert.Equal(t, "ms", o.SummaryTimeUnit)
		assert.Equal(t, 2*time.Minute, o.SetupTimeout)
		assert.Equal(t, 5*time.Second, o.TeardownTimeout)
		assert.Equal(t, 250*time.Millisecond, o.MinIterDuration)
		assert.Equal(t, map[string]string{"team": "llm"}, o.Tags)
		assert.True(t, o.NoSetup)
		assert.ElementsMatch(t, []string{"discardResponseBodies", "cloud"}, o.Ignored)
	})
	bad := []struct{ raw, field string }{
		{`[]`, ""},
		{`{"vus": "three"}`, "vus"},
		{`{"vus": 1e12}`, "vus"},
		{`{"duration": -5}`, "duration"},
		{`{"duration": "-5s"}`, "duration"},
		{`{"duration": true}`, "duration"},
		{`{"stages": {}}`, "stages"},
		{`{"stages": [{"target": 1}]}`, "stages[0].duration"},
		{`{"stages": [{"duration": "1s", "vus": 1}]}`, "stages[0].vus"},
		{`{"noSetup": "yes"}`, "noSetup"},
		{`{"thresholds": []}`, "thresholds"},
		{`{"hosts": {"a": "1.2.3.4"}}`, "hosts"},
		{`{"rps": 5}`, "rps"},
		{`{"Vus": 5}`, "Vus"}, // option names are case-sensitive, as in k6
	}
	for _, c := range bad {
		t.Run(c.raw, func(t *testing.T) {
			_, err := parseOptions([]byte(c.raw))
			var oe *OptionError
			require.True(t, errors.As(err, &oe), "want *OptionError, got %v", err)
			assert.Equal(t, c.field, oe.Field)
			assert.Contains(t, oe.Error(), c.field)
		})
	}
}

func TestParseDuration(t *testing.T) {
	good := map[string]time.Duration{
		`"30s"`:   30 * time.Second,
		`"1m30s"`: 90 * time.Second,
		`"500ms"`: 500 * time.Millisecond,
		`"1d"`:    24 * time.Hour,
		`1500`:    1500 * time.Millisecond,
		`0.5`:     500 * time.Microsecond,
		`"0s"`:    0,
	}
	for raw, want := range good {
		got, err := parseDuration(json.RawMessage(raw))
		require.NoError(t, err, raw)
		assert.Equal(t, want, got, raw)
	}
	for _, raw := range []string{`"soon"`, `""`, `-1`, `"-1s"`, `null`, `{}`, `1e300`} {
		_, err := parseDuration(json.RawMessage(raw))
		assert.Error(t, err, raw)
	}
}

func TestValidateTrendStats(t *testing.T) {
	require.NoError(t, validateTrendStats([]string{"avg", "min", "med", "max", "count", "p(0)", "p(99.99)", "p(100)"}))
	for _, s := range []string{"mean", "p(101)", "p()", "p(x)", "P(90)", ""} {
		assert.Error(t, validateTrendStats([]string{s}), s)
	}
}

func TestProgressDuration(t *testing.T) {
	cases := map[time.Duration]string{
		0:                       "0m00.0s",
		5200 * time.Millisecond: "0m05.2s",
		90 * time.Second:        "1m30.0s",
		time.Hour + 2*time.Minute + 3*time.Second: "1h02m03.0s",
		-time.Second: "0m00.0s",
	}
	for d, want := range cases {
		assert.Equal(t, want, progressDuration(d), d.String())
	}
}

// FuzzParseOptions: any JSON a script could export parses or fails with an
// *OptionError, never panics, and what parses is valid.
func FuzzParseOptions(f *testing.F) {
	for _, s := range []string{
		`{}`, `null`, `{"vus": 2, "duration": "10s"}`, `{"iterations": 3, "thresholds": {"checks": ["rate>0"]}}`,
		`{"stages": [{"duration": "1s", "target": 2}]}`, `{"setupTimeout": 100}`, `{"summaryTrendStats": ["p(99)"]}`,
		`{"tags": {"a": "b"}}`, `{"rps": 1}`, `{"duration": "1d2h"}`, `[1,2]`, `{"vus": -1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		o, err := parseOptions(raw)
		if err != nil {
			var oe *OptionError
			if !errors.As(err, &oe) {
				t.Fatalf("error is not an *OptionError: %T %v", err, err)
			}
			return
		}
		if o.VUs != nil && *o.VUs < 0 || o.Iterations != nil && *o.Iterations < 0 {
			t.Fatalf("negative count accepted: %s", raw)
		}
		if o.Duration != nil && *o.Duration < 0 || o.SetupTimeout <= 0 || o.TeardownTimeout <= 0 || o.MinIterDuration < 0 {
			t.Fatalf("bad duration accepted: %s", raw)
		}
		for _, st := range o.Stages {
			if st.Duration < 0 || st.Target < 0 {
				t.Fatalf("bad stage accepted: %s", raw)
			}
		}
		if err := validateTrendStats(o.SummaryTrendStats); err != nil {
			t.Fatalf("invalid trend stats accepted: %v", err)
		}
	})
}

// FuzzParseDuration: durations parse to non-negative values or fail, never panic.
func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{`"30s"`, `"1m30s"`, `1500`, `"1d"`, `"-1s"`, `1e308`, `"1.5h"`, `"9999999999d"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := parseDuration(raw)
		if err == nil && d < 0 {
			t.Fatalf("negative duration %v from %q", d, raw)
		}
	})
}
