package metrics

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// operator is a threshold comparison.
type operator uint8

const (
	opLT operator = iota + 1
	opLE
	opGT
	opGE
	opEQ
	opNE
)

// Longest spellings first, so "<=" is not read as "<" followed by "=".
var operators = []struct {
	text string
	op   operator
}{
	{"===", opEQ}, {"==", opEQ}, {"!=", opNE}, {"<=", opLE}, {">=", opGE}, {"<", opLT}, {">", opGT},
}

func (o operator) compare(a, b float64) bool {
	switch o {
	case opLT:
		return a < b
	case opLE:
		return a <= b
	case opGT:
		return a > b
	case opGE:
		return a >= b
	case opEQ:
		return a == b
	case opNE:
		return a != b
	}
	return false
}

// statKind is an aggregation method a threshold reads.
type statKind uint8

const (
	statCount       statKind = iota + 1 // counter: sum of values
	statCounterRate                     // counter: sum per second of test
	statValue                           // gauge: last value
	statRate                            // rate: share of non-zero samples
	statAvg
	statMin
	statMax
	statMed
	statPercentile
)

// threshold is one parsed expression.
type threshold struct {
	source      string // as written
	stat        string // canonical stat name, e.g. p(95)
	kind        statKind
	p           float64 // for statPercentile, 0..100
	op          operator
	value       float64
	abortOnFail bool
	delay       time.Duration
}

// thresholdSet is the expressions on one metric or submetric key.
type thresholdSet struct {
	name     string // canonical: metric, or metric{k:v,…}
	metric   *xk6ext.Metric
	selector string // canonical k:v,… without braces; empty for the metric itself
	tags     []tagPair
	items    []*threshold
}

type tagPair struct{ key, value string }

// parseMetricKey splits "name{k:v, k2:'v2'}" into the name and its tag pairs. The
// canonical selector drops whitespace and quotes so that spellings of the same
// selection share one submetric.
func parseMetricKey(key string) (name string, tags []tagPair, selector string, reason string) {
	key = strings.TrimSpace(key)
	open := strings.IndexByte(key, '{')
	if open < 0 {
		if strings.IndexByte(key, '}') >= 0 {
			return "", nil, "", "'}' without '{'"
		}
		return key, nil, "", ""
	}
	name = strings.TrimSpace(key[:open])
	if !strings.HasSuffix(key, "}") {
		return "", nil, "", "submetric selector must end with '}'"
	}
	inner := strings.TrimSpace(key[open+1 : len(key)-1])
	if inner == "" {
		return "", nil, "", "empty submetric selector '{}'"
	}
	if strings.ContainsAny(inner, "{}") {
		return "", nil, "", "nested braces in submetric selector"
	}
	var canon strings.Builder
	for i, part := range strings.Split(inner, ",") {
		k, v, ok := strings.Cut(part, ":")
		if !ok {
			return "", nil, "", "selector part " + strconv.Quote(strings.TrimSpace(part)) + " is not tag:value"
		}
		k = strings.TrimSpace(k)
		v = unquote(strings.TrimSpace(v))
		if k == "" {
			return "", nil, "", "empty tag name in submetric selector"
		}
		for _, t := range tags {
			if t.key == k {
				return "", nil, "", "tag " + strconv.Quote(k) + " given twice in submetric selector"
			}
		}
		tags = append(tags, tagPair{k, v})
		if i > 0 {
			canon.WriteByte(',')
		}
		canon.WriteString(k)
		canon.WriteByte(':')
		canon.WriteString(v)
	}
	return name, tags, canon.String(), ""
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// parseExpr parses "<stat> <op> <number>" and checks the stat suits the metric type.
func parseExpr(src string, typ xk6ext.MetricType) (*threshold, string) {
	s := strings.TrimSpace(src)
	if s == "" {
		return nil, "empty threshold expression"
	}
	at := strings.IndexAny(s, "<>=!")
	if at < 0 {
		return nil, "no comparison operator (one of < <= > >= == === !=)"
	}
	th := &threshold{source: src}
	rest := s[at:]
	for _, o := range operators {
		if strings.HasPrefix(rest, o.text) {
			th.op = o.op
			rest = rest[len(o.text):]
			break
		}
	}
	if th.op == 0 {
		return nil, "unknown operator at " + strconv.Quote(rest)
	}
	lhs := strings.TrimSpace(s[:at])
	rhs := strings.TrimSpace(rest)
	if rhs == "" {
		return nil, "missing value after the operator"
	}
	v, err := strconv.ParseFloat(rhs, 64)
	if err != nil || v != v { // NaN never compares true; treat it as a typo
		return nil, "value " + strconv.Quote(rhs) + " is not a number"
	}
	th.value = v
	if lhs == "" {
		return nil, "missing aggregation method before the operator"
	}
	if reason := th.setStat(lhs, typ); reason != "" {
		return nil, reason
	}
	return th, ""
}

// setStat resolves the aggregation method, allowing exactly k6's methods per type:
// counter count and rate; gauge value; rate rate; trend avg, min, max, med and p(N).
func (th *threshold) setStat(lhs string, typ xk6ext.MetricType) string {
	allowed := map[xk6ext.MetricType]string{
		xk6ext.Counter: "count, rate",
		xk6ext.Gauge:   "value",
		xk6ext.Rate:    "rate",
		xk6ext.Trend:   "avg, min, max, med, p(N)",
	}[typ]
	bad := func() string {
		return "aggregation method " + strconv.Quote(lhs) + " is not valid for a " + typ.String() +
			" metric (use " + allowed + ")"
	}
	th.stat = lhs
	switch typ {
	case xk6ext.Counter:
		switch lhs {
		case "count":
			th.kind = statCount
		case "rate":
			th.kind = statCounterRate
		default:
			return bad()
		}
	case xk6ext.Gauge:
		if lhs != "value" {
			return bad()
		}
		th.kind = statValue
	case xk6ext.Rate:
		if lhs != "rate" {
			return bad()
		}
		th.kind = statRate
	case xk6ext.Trend:
		switch lhs {
		case "avg":
			th.kind = statAvg
		case "min":
			th.kind = statMin
		case "max":
			th.kind = statMax
		case "med":
			th.kind = statMed
		default:
			p, ok := parsePercentile(lhs)
			if !ok {
				return bad()
			}
			th.kind, th.p = statPercentile, p
			th.stat = "p(" + strconv.FormatFloat(p, 'f', -1, 64) + ")"
		}
	default:
		return "unknown metric type"
	}
	return ""
}

// parsePercentile reads k6's "p(N)" with N in [0, 100], spaces allowed inside.
func parsePercentile(s string) (float64, bool) {
	if !strings.HasPrefix(s, "p(") || !strings.HasSuffix(s, ")") {
		return 0, false
	}
	n := strings.TrimSpace(s[2 : len(s)-1])
	p, err := strconv.ParseFloat(n, 64)
	if err != nil || !(p >= 0 && p <= 100) {
		return 0, false
	}
	return p, true
}

// thresholdObject is the object form of one threshold.
type thresholdObject struct {
	Threshold      *string         `json:"threshold"`
	AbortOnFail    bool            `json:"abortOnFail"`
	DelayAbortEval json.RawMessage `json:"delayAbortEval"`
}

func parseThresholds(raw map[string]json.RawMessage, reg *Registry) (Thresholds, error) {
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys) // deterministic error choice and result order
	byName := make(map[string]*thresholdSet)
	var out Thresholds
	for _, key := range keys {
		name, tags, selector, reason := parseMetricKey(key)
		if reason != "" {
			return Thresholds{}, &ThresholdError{Metric: key, Reason: reason}
		}
		var m *xk6ext.Metric
		if reg != nil {
			m = reg.Get(name)
		}
		if m == nil {
			return Thresholds{}, &ThresholdError{Metric: key, Reason: "no metric named " + strconv.Quote(name) + " is declared"}
		}
		canon := name
		if selector != "" {
			canon = name + "{" + selector + "}"
		}
		set := byName[canon]
		if set == nil {
			set = &thresholdSet{name: canon, metric: m, selector: selector, tags: tags}
			byName[canon] = set
			out.sets = append(out.sets, set)
		}
		items, err := parseThresholdList(key, raw[key], m.Type)
		if err != nil {
			return Thresholds{}, err
		}
		set.items = append(set.items, items...)
	}
	return out, nil
}

func parseThresholdList(key string, raw json.RawMessage, typ xk6ext.MetricType) ([]*threshold, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &ThresholdError{Metric: key, Reason: "value must be an array of threshold expressions"}
	}
	items := make([]*threshold, 0, len(list))
	for _, el := range list {
		el = bytes.TrimSpace(el)
		var expr string
		var obj thresholdObject
		switch {
		case len(el) > 0 && el[0] == '"':
			if err := json.Unmarshal(el, &expr); err != nil {
				return nil, &ThresholdError{Metric: key, Reason: "bad string: " + err.Error()}
			}
		case len(el) > 0 && el[0] == '{':
			dec := json.NewDecoder(bytes.NewReader(el))
			dec.DisallowUnknownFields() // an unsupported option must not be silently ignored
			if err := dec.Decode(&obj); err != nil {
				return nil, &ThresholdError{Metric: key, Reason: "bad threshold object: " + err.Error()}
			}
			if obj.Threshold == nil {
				return nil, &ThresholdError{Metric: key, Reason: `threshold object lacks "threshold"`}
			}
			expr = *obj.Threshold
		default:
			return nil, &ThresholdError{Metric: key, Reason: "each threshold must be a string or an object"}
		}
		th, reason := parseExpr(expr, typ)
		if reason != "" {
			return nil, &ThresholdError{Metric: key, Expr: expr, Reason: reason}
		}
		th.abortOnFail = obj.AbortOnFail
		if len(obj.DelayAbortEval) > 0 && string(obj.DelayAbortEval) != "null" {
			d, reason := parseDelay(obj.DelayAbortEval)
			if reason != "" {
				return nil, &ThresholdError{Metric: key, Expr: expr, Reason: reason}
			}
			th.delay = d
		}
		items = append(items, th)
	}
	return items, nil
}

// parseDelay reads delayAbortEval as k6 durations are read: a Go-style duration string
// ("10s", "1m30s") or a number of milliseconds.
func parseDelay(raw json.RawMessage) (time.Duration, string) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return 0, "delayAbortEval " + strconv.Quote(s) + " is not a duration"
		}
		if d < 0 {
			return 0, "delayAbortEval must not be negative"
		}
		return d, ""
	}
	var ms float64
	if err := json.Unmarshal(raw, &ms); err == nil {
		if ms < 0 {
			return 0, "delayAbortEval must not be negative"
		}
		return time.Duration(ms * float64(time.Millisecond)), ""
	}
	return 0, "delayAbortEval must be a duration string or milliseconds"
}
