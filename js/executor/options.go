package executor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// OptionError is an invalid option. Field is its path as a script author would write
// it, e.g. "scenarios.chat.rate" or "stages[1].target"; Reason says what is wrong. It
// never contains option values beyond what the script itself wrote.
type OptionError struct {
	Field  string
	Reason string
}

func (e *OptionError) Error() string { return e.Field + ": " + e.Reason }

func optErr(field, format string, args ...any) *OptionError {
	return &OptionError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Shortcuts are k6's top-level execution options. A nil field (or an empty Stages) is
// unset, which is not the same as zero: k6 rejects an explicit zero where it needs a
// positive value.
type Shortcuts struct {
	VUs        *int64
	Duration   *time.Duration
	Iterations *int64
	Stages     []Stage
}

// derives reports whether s has a shortcut that derives a scenario by itself; vus alone
// does not (k6 keeps a script's scenarios when only --vus is given).
func (s Shortcuts) derives() bool {
	return s.Duration != nil || s.Iterations != nil || len(s.Stages) > 0
}

// Merge consolidates two tiers of k6 options, override being the higher (the command
// line over the script). As k6 documents, a tier that sets any of duration, iterations
// or stages resets all three from the tiers below; vus is replaced field by field. So
// `-i 3` on a script with stages runs 3 shared iterations, not an error about
// iterations and stages together.
func (s Shortcuts) Merge(override Shortcuts) Shortcuts {
	if override.derives() {
		s.Duration, s.Iterations, s.Stages = override.Duration, override.Iterations, override.Stages
	}
	if override.VUs != nil {
		s.VUs = override.VUs
	}
	return s
}

// FromShortcuts derives k6's "default" scenario from the shortcut options, as k6
// documents it:
//
//   - iterations → shared-iterations with vus (default 1); with duration too, the
//     duration becomes its maxDuration;
//   - duration → constant-vus with vus (default 1);
//   - stages → ramping-vus starting at vus (default 1);
//   - none of them → per-vu-iterations: 1 iteration for each of vus (default 1).
//
// iterations or duration together with stages is an error, as in k6. Errors name the
// shortcut option ("duration", "stages[0].target").
func FromShortcuts(s Shortcuts) ([]Scenario, error) {
	vus := int64(DefaultVUs)
	if s.VUs != nil {
		vus = *s.VUs
	}
	sc := Scenario{Name: DefaultScenarioName, Exec: DefaultExec, GracefulStop: DefaultGracefulStop}
	rename := map[string]string{}
	switch {
	case s.Iterations != nil:
		if len(s.Stages) > 0 {
			return nil, optErr("stages", "using the execution shortcuts iterations and stages together is not allowed")
		}
		sc.Executor = SharedIterations
		sc.VUs, sc.Iterations, sc.MaxDuration = vus, *s.Iterations, DefaultMaxDuration
		if s.Duration != nil {
			sc.MaxDuration = *s.Duration
			rename["maxDuration"] = "duration"
		}
	case s.Duration != nil:
		if len(s.Stages) > 0 {
			return nil, optErr("stages", "using the execution shortcuts duration and stages together is not allowed")
		}
		sc.Executor = ConstantVUs
		sc.VUs, sc.Duration = vus, *s.Duration
	case len(s.Stages) > 0:
		sc.Executor = RampingVUs
		sc.StartVUs, sc.Stages, sc.GracefulRampDown = vus, slices.Clone(s.Stages), DefaultGracefulRampDown
		rename["startVUs"] = "vus"
	default:
		sc.Executor = PerVUIterations
		sc.VUs, sc.Iterations, sc.MaxDuration = vus, DefaultIterations, DefaultMaxDuration
	}
	if err := validate(&sc, ""); err != nil {
		var oe *OptionError
		if errors.As(err, &oe) {
			if to, ok := rename[oe.Field]; ok {
				oe.Field = to
			}
		}
		return nil, err
	}
	return []Scenario{sc}, nil
}

// Resolve decides the scenarios of a run from two tiers of options, as k6 consolidates
// them: the script's (its shortcuts and its options.scenarios, nil when absent) and the
// command line's shortcuts (-u, -d, -i, -s).
//
// The rules, from k6's documented behaviour:
//   - when the command line gives duration, iterations or stages, the script's
//     duration, iterations, stages and scenarios are all discarded (only its vus
//     carries over) and the shortcuts derive the one "default" scenario;
//   - otherwise a script that sets options.scenarios and also duration, iterations or
//     stages is an error (k6: "using an execution configuration shortcut and scenarios
//     simultaneously is not allowed"); vus beside scenarios is ignored;
//   - the script's scenarios run as written (a -u alone changes nothing);
//   - with no scenarios anywhere, FromShortcuts derives the default scenario.
func Resolve(script Shortcuts, scriptScenarios []Scenario, cli Shortcuts) ([]Scenario, error) {
	if cli.derives() {
		return FromShortcuts(script.Merge(cli))
	}
	if scriptScenarios != nil {
		if script.derives() {
			field := "duration"
			switch {
			case script.Iterations != nil:
				field = "iterations"
			case len(script.Stages) > 0:
				field = "stages"
			}
			return nil, optErr(field, "using an execution shortcut and scenarios simultaneously is not allowed")
		}
		if len(scriptScenarios) == 0 {
			return nil, optErr("scenarios", "must define at least one scenario")
		}
		return scriptScenarios, nil
	}
	return FromShortcuts(script.Merge(cli))
}

// ParseDuration parses a k6 duration: Go's syntax ("1m30s", "500ms", "1h") plus k6's
// day unit ("1d", "2d12h"). Negative durations are returned as parsed; validation
// decides whether they are allowed.
func ParseDuration(s string) (time.Duration, error) {
	i := strings.IndexByte(s, 'd')
	if i < 0 {
		return time.ParseDuration(s)
	}
	days, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(days) || math.IsInf(days, 0) || s[:i] == "" || strings.ContainsAny(s[:i], "eExXpP_") {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	d := days * float64(24*time.Hour)
	if d >= math.MaxInt64 || d <= math.MinInt64 {
		return 0, fmt.Errorf("invalid duration %q: out of range", s)
	}
	total := time.Duration(d)
	if rest := s[i+1:]; rest != "" {
		if rest[0] == '-' || rest[0] == '+' {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		r, err := time.ParseDuration(rest)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		if days < 0 {
			r = -r
		}
		sum := total + r
		if (r > 0 && sum < total) || (r < 0 && sum > total) {
			return 0, fmt.Errorf("invalid duration %q: out of range", s)
		}
		total = sum
	}
	return total, nil
}

// MaxVUsLimit bounds every VU count an option can ask for. k6 has no such limit and
// would try to initialise them all; ten million VUs is far beyond one process, so
// asking for more is an option error rather than an out-of-memory crash.
const MaxVUsLimit = 10_000_000

// Fields each executor accepts besides the common ones. k6 rejects a field that its
// executor does not have, so we do too, rather than silently ignoring it.
var (
	commonFields   = []string{"executor", "startTime", "gracefulStop", "exec", "env", "tags"}
	executorFields = map[string][]string{
		SharedIterations:    {"vus", "iterations", "maxDuration"},
		PerVUIterations:     {"vus", "iterations", "maxDuration"},
		ConstantVUs:         {"vus", "duration"},
		RampingVUs:          {"startVUs", "stages", "gracefulRampDown"},
		ConstantArrivalRate: {"rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"},
		RampingArrivalRate:  {"startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"},
	}
)

// ParseScenarios parses the JSON of options.scenarios (an object of named scenario
// objects) and fills in k6's defaults. Scenarios come back in the order the JSON object
// lists them, which is the script's order when the JSON came from JSON.stringify.
// Every error is an *OptionError naming the field path, e.g.
// "scenarios.chat.rate: must be greater than 0".
func ParseScenarios(raw []byte) ([]Scenario, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, optErr("scenarios", "must be an object of named scenarios")
	}
	var out []Scenario
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, optErr("scenarios", "invalid JSON")
		}
		name, _ := tok.(string)
		var body json.RawMessage
		if err := dec.Decode(&body); err != nil {
			return nil, optErr("scenarios."+name, "invalid JSON")
		}
		if slices.ContainsFunc(out, func(s Scenario) bool { return s.Name == name }) {
			return nil, optErr("scenarios."+name, "defined twice")
		}
		sc, err := parseScenario(name, body)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, optErr("scenarios", "invalid JSON")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, optErr("scenarios", "invalid JSON: trailing data")
	}
	if len(out) == 0 {
		return nil, optErr("scenarios", "must define at least one scenario")
	}
	return out, nil
}

func validName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}

func parseScenario(name string, body json.RawMessage) (Scenario, error) {
	path := "scenarios." + name
	if !validName(name) {
		return Scenario{}, optErr(path, "a scenario name may contain only letters, digits, '_' and '-'")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return Scenario{}, optErr(path, "must be an object")
	}
	p := fieldParser{path: path + ".", fields: fields}
	sc := Scenario{Name: name, Exec: DefaultExec, GracefulStop: DefaultGracefulStop}
	var ok bool
	if sc.Executor, ok = p.str("executor"); !ok {
		if p.err != nil {
			return Scenario{}, p.err
		}
		return Scenario{}, optErr(path+".executor", "is required")
	}
	allowed, known := executorFields[sc.Executor]
	if !known {
		reason := fmt.Sprintf("unknown executor %q", sc.Executor)
		if sc.Executor == "externally-controlled" {
			reason = "the externally-controlled executor is not supported by tokenstorm"
		}
		return Scenario{}, optErr(path+".executor", "%s", reason)
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if slices.Contains(commonFields, k) || slices.Contains(allowed, k) {
			continue
		}
		if k == "options" {
			return Scenario{}, optErr(path+".options", "scenario options (browser) are not supported by tokenstorm")
		}
		return Scenario{}, optErr(path+"."+k, "unknown field for the %s executor", sc.Executor)
	}

	sc.StartTime, _ = p.duration("startTime")
	if d, ok := p.duration("gracefulStop"); ok {
		sc.GracefulStop = d
	}
	if s, ok := p.str("exec"); ok {
		sc.Exec = s
	}
	sc.Env = p.strMap("env")
	sc.Tags = p.strMap("tags")

	switch sc.Executor {
	case SharedIterations, PerVUIterations:
		sc.VUs, sc.Iterations, sc.MaxDuration = DefaultVUs, DefaultIterations, DefaultMaxDuration
		if v, ok := p.int("vus"); ok {
			sc.VUs = v
		}
		if v, ok := p.int("iterations"); ok {
			sc.Iterations = v
		}
		if d, ok := p.duration("maxDuration"); ok {
			sc.MaxDuration = d
		}
	case ConstantVUs:
		sc.VUs = DefaultVUs
		if v, ok := p.int("vus"); ok {
			sc.VUs = v
		}
		if sc.Duration, ok = p.duration("duration"); !ok {
			p.required("duration")
		}
	case RampingVUs:
		sc.StartVUs, sc.GracefulRampDown = DefaultVUs, DefaultGracefulRampDown
		if v, ok := p.int("startVUs"); ok {
			sc.StartVUs = v
		}
		if d, ok := p.duration("gracefulRampDown"); ok {
			sc.GracefulRampDown = d
		}
		sc.Stages = p.stages("stages")
	case ConstantArrivalRate, RampingArrivalRate:
		sc.TimeUnit = DefaultTimeUnit
		if d, ok := p.duration("timeUnit"); ok {
			sc.TimeUnit = d
		}
		if sc.PreAllocatedVUs, ok = p.int("preAllocatedVUs"); !ok {
			p.required("preAllocatedVUs")
		}
		sc.MaxVUs = sc.PreAllocatedVUs
		if v, ok := p.int("maxVUs"); ok {
			sc.MaxVUs = v
		}
		if sc.Executor == ConstantArrivalRate {
			if sc.Rate, ok = p.int("rate"); !ok {
				p.required("rate")
			}
			if sc.Duration, ok = p.duration("duration"); !ok {
				p.required("duration")
			}
		} else {
			sc.StartRate, _ = p.int("startRate")
			sc.Stages = p.stages("stages")
		}
	}
	if p.err != nil {
		return Scenario{}, p.err
	}
	if err := validate(&sc, path+"."); err != nil {
		return Scenario{}, err
	}
	return sc, nil
}

// fieldParser reads typed fields out of a JSON object, keeping the first error so the
// parsing code reads straight through. A JSON null counts as absent, as in k6.
type fieldParser struct {
	path   string
	fields map[string]json.RawMessage
	err    error
}

func (p *fieldParser) get(name string) (json.RawMessage, bool) {
	if p.err != nil {
		return nil, false
	}
	raw, ok := p.fields[name]
	if !ok || string(bytes.TrimSpace(raw)) == "null" {
		return nil, false
	}
	return raw, true
}

func (p *fieldParser) fail(name, format string, args ...any) {
	if p.err == nil {
		p.err = optErr(p.path+name, format, args...)
	}
}

func (p *fieldParser) required(name string) { p.fail(name, "is required") }

func (p *fieldParser) str(name string) (string, bool) {
	raw, ok := p.get(name)
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		p.fail(name, "must be a string")
		return "", false
	}
	return s, true
}

func (p *fieldParser) int(name string) (int64, bool) {
	raw, ok := p.get(name)
	if !ok {
		return 0, false
	}
	v, err := parseInt(raw)
	if err != nil {
		p.fail(name, "%s", err.Error())
		return 0, false
	}
	return v, true
}

func parseInt(raw json.RawMessage) (int64, error) {
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
		return 0, errors.New("must be an integer, not a string")
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, errors.New("must be an integer")
	}
	if v, err := n.Int64(); err == nil {
		return v, nil
	}
	// 10.0 and 1e3 are integers too, as in JavaScript.
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, errors.New("must be an integer")
	}
	return int64(f), nil
}

func (p *fieldParser) duration(name string) (time.Duration, bool) {
	raw, ok := p.get(name)
	if !ok {
		return 0, false
	}
	d, err := parseDurationJSON(raw)
	if err != nil {
		p.fail(name, "%s", err.Error())
		return 0, false
	}
	return d, true
}

// parseDurationJSON accepts a k6 duration string or a number of milliseconds.
func parseDurationJSON(raw json.RawMessage) (time.Duration, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		d, err := ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("invalid duration %q (use a number of milliseconds or a string like \"30s\", \"1m30s\", \"1d\")", s)
		}
		return d, nil
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err != nil {
		return 0, errors.New("must be a duration: a number of milliseconds or a string like \"30s\"")
	}
	ns := ms * float64(time.Millisecond)
	if ns >= math.MaxInt64 || ns <= math.MinInt64 {
		return 0, errors.New("duration out of range")
	}
	return time.Duration(ns), nil
}

func (p *fieldParser) strMap(name string) map[string]string {
	raw, ok := p.get(name)
	if !ok {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		p.fail(name, "must be an object of strings")
		return nil
	}
	out := make(map[string]string, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var s string
		if err := json.Unmarshal(m[k], &s); err != nil {
			p.fail(name+"."+k, "must be a string")
			return nil
		}
		out[k] = s
	}
	return out
}

func (p *fieldParser) stages(name string) []Stage {
	raw, ok := p.get(name)
	if !ok {
		p.required(name)
		return nil
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		p.fail(name, "must be an array of {duration, target}")
		return nil
	}
	out := make([]Stage, 0, len(items))
	for i, item := range items {
		sp := fieldParser{path: fmt.Sprintf("%s%s[%d].", p.path, name, i)}
		if err := json.Unmarshal(item, &sp.fields); err != nil || sp.fields == nil {
			p.fail(fmt.Sprintf("%s[%d]", name, i), "must be an object {duration, target}")
			return nil
		}
		for k := range sp.fields {
			if k != "duration" && k != "target" {
				p.fail(fmt.Sprintf("%s[%d].%s", name, i, k), "unknown field of a stage")
				return nil
			}
		}
		var st Stage
		if st.Duration, ok = sp.duration("duration"); !ok {
			sp.required("duration")
		}
		if st.Target, ok = sp.int("target"); !ok {
			sp.required("target")
		}
		if sp.err != nil {
			if p.err == nil {
				p.err = sp.err
			}
			return nil
		}
		out = append(out, st)
	}
	return out
}

// validate checks sc against k6's documented constraints; prefix is the path of the
// scenario ("scenarios.chat.") or "" for the shortcut-derived one.
func validate(sc *Scenario, prefix string) error {
	e := func(field, format string, args ...any) error { return optErr(prefix+field, format, args...) }
	switch {
	case sc.StartTime < 0:
		return e("startTime", "must not be negative")
	case sc.GracefulStop < 0:
		return e("gracefulStop", "must not be negative")
	case sc.Exec == "":
		return e("exec", "must not be empty")
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"vus", sc.VUs}, {"startVUs", sc.StartVUs}, {"preAllocatedVUs", sc.PreAllocatedVUs}, {"maxVUs", sc.MaxVUs}} {
		if f.v > MaxVUsLimit {
			return e(f.name, "must be at most %d", MaxVUsLimit)
		}
	}
	if sc.Executor == RampingVUs && maxTarget(sc.Stages) > MaxVUsLimit {
		return e("stages", "targets must be at most %d VUs", MaxVUsLimit)
	}
	switch sc.Executor {
	case SharedIterations, PerVUIterations:
		switch {
		case sc.VUs <= 0:
			return e("vus", "must be greater than 0")
		case sc.Iterations <= 0:
			return e("iterations", "must be greater than 0")
		case sc.Executor == PerVUIterations && sc.Iterations > math.MaxInt64/sc.VUs:
			return e("iterations", "vus × iterations is too large")
		case sc.Executor == SharedIterations && sc.Iterations < sc.VUs:
			return e("iterations", "must not be less than vus (%d), as every VU needs an iteration", sc.VUs)
		case sc.MaxDuration <= 0:
			return e("maxDuration", "must be greater than 0")
		}
	case ConstantVUs:
		switch {
		case sc.VUs <= 0:
			return e("vus", "must be greater than 0")
		case sc.Duration <= 0:
			return e("duration", "must be greater than 0")
		}
	case RampingVUs:
		if sc.StartVUs < 0 {
			return e("startVUs", "must not be negative")
		}
		if sc.GracefulRampDown < 0 {
			return e("gracefulRampDown", "must not be negative")
		}
		if err := validateStages(sc.Stages, prefix); err != nil {
			return err
		}
		if max(sc.StartVUs, maxTarget(sc.Stages)) == 0 {
			return e("stages", "must reach at least 1 VU")
		}
	case ConstantArrivalRate, RampingArrivalRate:
		switch {
		case sc.TimeUnit <= 0:
			return e("timeUnit", "must be greater than 0")
		case sc.PreAllocatedVUs < 0:
			return e("preAllocatedVUs", "must not be negative")
		case sc.MaxVUs < sc.PreAllocatedVUs:
			return e("maxVUs", "must not be less than preAllocatedVUs (%d)", sc.PreAllocatedVUs)
		case sc.MaxVUs <= 0:
			return e("maxVUs", "must be greater than 0 (or set preAllocatedVUs)")
		}
		if sc.Executor == ConstantArrivalRate {
			switch {
			case sc.Rate <= 0:
				return e("rate", "must be greater than 0")
			case sc.Duration <= 0:
				return e("duration", "must be greater than 0")
			}
		} else {
			if sc.StartRate < 0 {
				return e("startRate", "must not be negative")
			}
			if err := validateStages(sc.Stages, prefix); err != nil {
				return err
			}
		}
	default:
		return e("executor", "unknown executor %q", sc.Executor)
	}
	return nil
}

func validateStages(stages []Stage, prefix string) error {
	if len(stages) == 0 {
		return optErr(prefix+"stages", "must have at least one stage")
	}
	var total time.Duration
	for i, st := range stages {
		if st.Duration < 0 {
			return optErr(fmt.Sprintf("%sstages[%d].duration", prefix, i), "must not be negative")
		}
		if st.Target < 0 {
			return optErr(fmt.Sprintf("%sstages[%d].target", prefix, i), "must not be negative")
		}
		total += st.Duration
		if total < 0 {
			return optErr(fmt.Sprintf("%sstages[%d].duration", prefix, i), "total duration out of range")
		}
	}
	if total == 0 {
		return optErr(prefix+"stages", "must last longer than 0s in total")
	}
	return nil
}

func maxTarget(stages []Stage) int64 {
	var m int64
	for _, st := range stages {
		m = max(m, st.Target)
	}
	return m
}
