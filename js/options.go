package js

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokenstorm/tokenstorm/js/executor"
	"github.com/tokenstorm/tokenstorm/js/metrics"
)

// Defaults for the run-level options k6 gives defaults to.
const (
	// DefaultSetupTimeout bounds setup(), as k6's setupTimeout.
	DefaultSetupTimeout = 60 * time.Second
	// DefaultTeardownTimeout bounds teardown(), as k6's teardownTimeout.
	DefaultTeardownTimeout = 60 * time.Second
	// DefaultThresholdInterval is how often thresholds are evaluated during the run for
	// abortOnFail (k6 evaluates every 2 s).
	DefaultThresholdInterval = 2 * time.Second
	// DefaultVUsInterval is how often the vus and vus_max gauges are sampled (k6: 1 s).
	DefaultVUsInterval = time.Second
	// DefaultProgressInterval is how often the live progress line is redrawn.
	DefaultProgressInterval = time.Second
)

// DefaultSummaryTrendStats are the trend statistics of the end-of-test summary (k6's).
var DefaultSummaryTrendStats = []string{"avg", "min", "med", "max", "p(90)", "p(95)"}

// OptionError is an invalid or unsupported option (exit code 104). Field is the option's
// path as the script spells it, e.g. "scenarios.chat.rate" or "thresholds.llm_ttft".
type OptionError struct {
	Field  string
	Reason string
	Err    error // the underlying error, when another package found the problem
}

func (e *OptionError) Error() string {
	if e.Field == "" {
		return "invalid options: " + e.Reason
	}
	return "invalid options: " + e.Field + ": " + e.Reason
}

func (e *OptionError) Unwrap() error { return e.Err }

// optionSupport says what the runner does with a top-level k6 option.
type optionSupport int

const (
	supported optionSupport = iota
	// ignoredHarmless options only configure parts of k6 that tokenstorm does not have
	// (k6/http, k6 Cloud), so a script that sets them behaves identically without them:
	// they are accepted so valid k6 scripts run unchanged. docs/scripting.md lists them.
	ignoredHarmless
)

// knownOptions is the table of accepted top-level options. Every other key of `options`
// is rejected with exit code 104: an option that would silently do nothing (rps, hosts,
// insecureSkipTLSVerify…) would make the test measure something else than its author
// meant. Keep docs/scripting.md in step.
var knownOptions = map[string]optionSupport{
	"vus":                  supported,
	"duration":             supported,
	"iterations":           supported,
	"stages":               supported,
	"scenarios":            supported,
	"thresholds":           supported,
	"summaryTrendStats":    supported,
	"summaryTimeUnit":      supported,
	"setupTimeout":         supported,
	"teardownTimeout":      supported,
	"tags":                 supported,
	"noSetup":              supported,
	"noTeardown":           supported,
	"minIterationDuration": supported,
	// Passed to the tokenstorm module, which applies them to every Client.
	"noConnectionReuse":     supported,
	"insecureSkipTLSVerify": supported,

	// k6/http-only options: tokenstorm has no k6/http, importing it is an error, so
	// these cannot change what a tokenstorm script does.
	"discardResponseBodies": ignoredHarmless,
	"userAgent":             ignoredHarmless,
	"httpDebug":             ignoredHarmless,
	"batch":                 ignoredHarmless,
	"batchPerHost":          ignoredHarmless,
	"maxRedirects":          ignoredHarmless,
	"noCookiesReset":        ignoredHarmless,
	"throw":                 ignoredHarmless,
	// k6 Cloud metadata and telemetry.
	"cloud":         ignoredHarmless,
	"ext":           ignoredHarmless,
	"noUsageReport": ignoredHarmless,
}

// scriptOptions are the options a script exported, parsed and validated, before CLI
// overrides.
type scriptOptions struct {
	VUs        *int64
	Duration   *time.Duration
	Iterations *int64
	Stages     []executor.Stage
	Scenarios  json.RawMessage // options.scenarios as written, parsed by the executor package

	Thresholds        map[string]json.RawMessage
	SummaryTrendStats []string
	SummaryTimeUnit   string
	SetupTimeout      time.Duration
	TeardownTimeout   time.Duration
	Tags              map[string]string
	NoSetup           bool
	NoTeardown        bool
	MinIterDuration   time.Duration
	NoConnectionReuse bool
	InsecureTLS       bool
	Ignored           []string // harmless options that were set (reported at debug level)
}

// parseOptions parses the JSON of a script's exported `options` (JSON.stringify'd, so
// "undefined" members are already gone). "null" or empty means no options.
func parseOptions(raw []byte) (*scriptOptions, error) {
	o := &scriptOptions{SetupTimeout: DefaultSetupTimeout, TeardownTimeout: DefaultTeardownTimeout}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return o, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, &OptionError{Reason: "options must be an object", Err: err}
	}
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the first error reported is deterministic
	for _, k := range keys {
		v := top[k]
		if isNull(v) {
			continue
		}
		sup, ok := knownOptions[k]
		if !ok {
			return nil, &OptionError{Field: k, Reason: "not supported by tokenstorm (see docs/scripting.md for the supported k6 options)"}
		}
		if sup == ignoredHarmless {
			o.Ignored = append(o.Ignored, k)
			continue
		}
		if err := o.set(k, v); err != nil {
			return nil, err
		}
	}
	return o, nil
}

func (o *scriptOptions) set(k string, v json.RawMessage) error {
	bad := func(reason string) error { return &OptionError{Field: k, Reason: reason} }
	switch k {
	case "vus":
		n, err := parseCount(v)
		if err != nil {
			return bad(err.Error())
		}
		o.VUs = &n
	case "iterations":
		n, err := parseCount(v)
		if err != nil {
			return bad(err.Error())
		}
		o.Iterations = &n
	case "duration":
		d, err := parseDuration(v)
		if err != nil {
			return bad(err.Error())
		}
		o.Duration = &d
	case "stages":
		st, err := parseStages(v)
		if err != nil {
			var oe *OptionError
			if ok := asOptionError(err, &oe); ok {
				oe.Field = k + oe.Field
				return oe
			}
			return bad(err.Error())
		}
		o.Stages = st
	case "scenarios":
		o.Scenarios = v
	case "thresholds":
		if err := json.Unmarshal(v, &o.Thresholds); err != nil {
			return bad("must be an object mapping metric names to threshold lists")
		}
	case "summaryTrendStats":
		var stats []string
		if err := json.Unmarshal(v, &stats); err != nil {
			return bad("must be an array of strings")
		}
		if err := validateTrendStats(stats); err != nil {
			return bad(err.Error())
		}
		o.SummaryTrendStats = stats
	case "summaryTimeUnit":
		var u string
		if err := json.Unmarshal(v, &u); err != nil {
			return bad("must be a string")
		}
		if err := checkTimeUnit(u); err != nil {
			return bad(err.Error())
		}
		o.SummaryTimeUnit = u
	case "setupTimeout", "teardownTimeout", "minIterationDuration":
		d, err := parseDuration(v)
		if err != nil {
			return bad(err.Error())
		}
		if d <= 0 && k != "minIterationDuration" {
			return bad("must be greater than 0")
		}
		switch k {
		case "setupTimeout":
			o.SetupTimeout = d
		case "teardownTimeout":
			o.TeardownTimeout = d
		default:
			o.MinIterDuration = d
		}
	case "tags":
		if err := json.Unmarshal(v, &o.Tags); err != nil {
			return bad("must be an object of string values")
		}
	case "noSetup", "noTeardown", "noConnectionReuse", "insecureSkipTLSVerify":
		var b bool
		if err := json.Unmarshal(v, &b); err != nil {
			return bad("must be a boolean")
		}
		switch k {
		case "noSetup":
			o.NoSetup = b
		case "noTeardown":
			o.NoTeardown = b
		case "noConnectionReuse":
			o.NoConnectionReuse = b
		default:
			o.InsecureTLS = b
		}
	default:
		return bad("not supported by tokenstorm")
	}
	return nil
}

func asOptionError(err error, target **OptionError) bool {
	oe, ok := err.(*OptionError)
	if ok {
		*target = oe
	}
	return ok
}

func isNull(v json.RawMessage) bool {
	v = bytes.TrimSpace(v)
	return len(v) == 0 || string(v) == "null"
}

// parseCount parses a non-negative integer option (vus, iterations). k6 accepts JSON
// numbers only; a fractional value is an error rather than silently truncated.
func parseCount(v json.RawMessage) (int64, error) {
	var f float64
	if err := json.Unmarshal(v, &f); err != nil {
		return 0, fmt.Errorf("must be a number")
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
		return 0, fmt.Errorf("must be a non-negative integer, got %v", f)
	}
	return int64(f), nil
}

// parseDuration parses a k6 duration option: a string as k6 writes them ("1m30s", "1d")
// or a JSON number of milliseconds.
// checkTimeUnit checks a summaryTimeUnit value (the option or --summary-time-unit).
func checkTimeUnit(u string) error {
	if metrics.ValidateTimeUnit(u) != nil {
		return fmt.Errorf("%q is not one of \"s\", \"ms\", \"us\"", u)
	}
	return nil
}

func parseDuration(v json.RawMessage) (time.Duration, error) {
	v = bytes.TrimSpace(v)
	if isNull(v) {
		return 0, fmt.Errorf("must be a duration string or a number of milliseconds")
	}
	if v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return 0, fmt.Errorf("must be a duration string or a number of milliseconds")
		}
		d, err := executor.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		if d < 0 {
			return 0, fmt.Errorf("must be a non-negative duration, got %q", s)
		}
		return d, nil
	}
	var ms float64
	if err := json.Unmarshal(v, &ms); err != nil {
		return 0, fmt.Errorf("must be a duration string (\"30s\", \"1m30s\") or a number of milliseconds")
	}
	if ms < 0 || math.IsNaN(ms) || ms > float64(math.MaxInt64/int64(time.Millisecond)) {
		return 0, fmt.Errorf("must be a non-negative duration, got %v", ms)
	}
	return time.Duration(ms * float64(time.Millisecond)), nil
}

func parseStages(v json.RawMessage) ([]executor.Stage, error) {
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(v, &raw); err != nil {
		return nil, fmt.Errorf("must be an array of {duration, target}")
	}
	out := make([]executor.Stage, 0, len(raw))
	for i, st := range raw {
		field := func(f string) string { return fmt.Sprintf("[%d].%s", i, f) }
		for k := range st {
			if k != "duration" && k != "target" {
				return nil, &OptionError{Field: fmt.Sprintf("[%d].%s", i, k), Reason: "unknown field"}
			}
		}
		d, ok := st["duration"]
		if !ok {
			return nil, &OptionError{Field: field("duration"), Reason: "required"}
		}
		dur, err := parseDuration(d)
		if err != nil {
			return nil, &OptionError{Field: field("duration"), Reason: err.Error()}
		}
		var target int64
		if t, ok := st["target"]; ok && !isNull(t) {
			if target, err = parseCount(t); err != nil {
				return nil, &OptionError{Field: field("target"), Reason: err.Error()}
			}
		}
		out = append(out, executor.Stage{Duration: dur, Target: target})
	}
	return out, nil
}

var percentileStat = regexp.MustCompile(`^p\((\d+(\.\d+)?)\)$`)

// validateTrendStats checks summaryTrendStats the way k6 does: avg, min, med, max,
// count and p(N) with 0 ≤ N ≤ 100.
func validateTrendStats(stats []string) error {
	for _, s := range stats {
		switch s {
		case "avg", "min", "med", "max", "count":
			continue
		}
		m := percentileStat.FindStringSubmatch(s)
		if m == nil {
			return fmt.Errorf("%q is not a trend statistic (avg, min, med, max, count, p(N))", s)
		}
		if p, _ := strconv.ParseFloat(m[1], 64); p > 100 {
			return fmt.Errorf("%q: percentile must be between 0 and 100", s)
		}
	}
	return nil
}
