package js

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/js/metrics"
	"github.com/tokenstorm/tokenstorm/js/vm"
	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// k6's documentation writes handleSummary with textSummary from the jslib k6-summary
// module, a remote import. tokenstorm does not fetch remote modules, so it serves these
// exact specifiers natively: textSummary(data, {indent, enableColors}) renders the data
// object handleSummary received (edits to it included) with the runner's own text
// summary. Other jslib modules, or other exports of this one (jUnit), stay errors.
var jslibSummaryVersions = []string{"0.0.1", "0.0.2", "0.0.3", "0.0.4", "0.1.0"}

func jslibSummarySpecifier(version string) string {
	return "https://jslib.k6.io/k6-summary/" + version + "/index.js"
}

// thresholdObservations gives textSummary the observed value of each threshold, which
// handleSummary's data does not carry (k6's data has only {ok}). The runner fills it in
// before it calls handleSummary.
type thresholdObservations struct {
	mu  sync.Mutex
	res []metrics.ThresholdResult
}

func (o *thresholdObservations) set(res []metrics.ThresholdResult) {
	o.mu.Lock()
	o.res = res
	o.mu.Unlock()
}

func (o *thresholdObservations) find(metric, expr string) (metrics.ThresholdResult, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, r := range o.res {
		if r.Metric == metric && r.Expr == expr {
			return r, true
		}
	}
	return metrics.ThresholdResult{}, false
}

func textSummaryModule(obs *thresholdObservations) vm.ModuleFactory {
	return func(h xk6ext.Host) (vm.Exports, error) {
		rt := h.Runtime()
		textSummary := func(call sobek.FunctionCall) sobek.Value {
			s, opts, indent, err := summaryFromData(call.Argument(0).Export(), call.Argument(1).Export(), obs)
			if err != nil {
				panic(rt.NewTypeError("textSummary: " + err.Error()))
			}
			text := s.Text(opts)
			if indent != "" {
				lines := strings.Split(text, "\n")
				for i, l := range lines {
					if l != "" {
						lines[i] = indent + l
					}
				}
				text = strings.Join(lines, "\n")
			}
			return rt.ToValue(text)
		}
		return vm.Exports{Named: map[string]any{"textSummary": textSummary}}, nil
	}
}

// summaryData is handleSummary's data object, as k6 shapes it.
type summaryData struct {
	Metrics map[string]struct {
		Type       string             `json:"type"`
		Contains   string             `json:"contains"`
		Values     map[string]float64 `json:"values"`
		Thresholds map[string]struct {
			OK bool `json:"ok"`
		} `json:"thresholds"`
	} `json:"metrics"`
	RootGroup *summaryGroup `json:"root_group"`
	Options   struct {
		SummaryTrendStats []string `json:"summaryTrendStats"`
		SummaryTimeUnit   string   `json:"summaryTimeUnit"`
	} `json:"options"`
}

type summaryGroup struct {
	Name   string          `json:"name"`
	Path   string          `json:"path"`
	ID     string          `json:"id"`
	Groups []*summaryGroup `json:"groups"`
	Checks []struct {
		Name   string `json:"name"`
		Path   string `json:"path"`
		ID     string `json:"id"`
		Passes int64  `json:"passes"`
		Fails  int64  `json:"fails"`
	} `json:"checks"`
}

var metricTypes = map[string]xk6ext.MetricType{
	"counter": xk6ext.Counter, "gauge": xk6ext.Gauge, "rate": xk6ext.Rate, "trend": xk6ext.Trend,
}

var valueTypes = map[string]xk6ext.ValueType{
	"default": xk6ext.Default, "time": xk6ext.Time, "data": xk6ext.Data,
}

// thresholdStat is the aggregation at the start of a threshold expression.
var thresholdStat = regexp.MustCompile(`^\s*([a-z]+(?:\([0-9.]+\))?)`)

// summaryFromData rebuilds a metrics.Summary from handleSummary's data (a JS value
// exported to Go) and textSummary's options.
func summaryFromData(data, options any, obs *thresholdObservations) (*metrics.Summary, metrics.SummaryOptions, string, error) {
	var opts metrics.SummaryOptions
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, opts, "", fmt.Errorf("data is not the handleSummary data object: %w", err)
	}
	var d summaryData
	if err := json.Unmarshal(raw, &d); err != nil || d.Metrics == nil {
		return nil, opts, "", fmt.Errorf("data is not the handleSummary data object")
	}
	opts.TrendStats = d.Options.SummaryTrendStats
	opts.TimeUnit = d.Options.SummaryTimeUnit
	opts.NoColor = true // k6-summary's enableColors defaults to false
	indent := " "       // and its indent to one space
	if o, ok := options.(map[string]any); ok {
		if c, ok := o["enableColors"].(bool); ok {
			opts.NoColor = !c
		}
		if in, ok := o["indent"].(string); ok {
			indent = in
		}
	}

	s := &metrics.Summary{Metrics: make(map[string]*metrics.MetricSummary, len(d.Metrics))}
	names := make([]string, 0, len(d.Metrics))
	for name := range d.Metrics {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		m := d.Metrics[name]
		typ, ok := metricTypes[m.Type]
		if !ok {
			return nil, opts, "", fmt.Errorf("metric %q has an unknown type %q", name, m.Type)
		}
		ms := &metrics.MetricSummary{Name: name, Type: typ, Contains: valueTypes[m.Contains], Values: m.Values}
		if i := strings.IndexByte(name, '{'); i > 0 && strings.HasSuffix(name, "}") {
			ms.Submetric, ms.Parent, ms.Tags = true, name[:i], name[i+1:len(name)-1]
		}
		if len(m.Thresholds) > 0 {
			ms.Thresholds = make(map[string]bool, len(m.Thresholds))
			exprs := make([]string, 0, len(m.Thresholds))
			for expr, t := range m.Thresholds {
				ms.Thresholds[expr] = t.OK
				exprs = append(exprs, expr)
			}
			sort.Strings(exprs)
			for _, expr := range exprs {
				r, ok := obs.find(name, expr)
				if !ok {
					r = metrics.ThresholdResult{Metric: name, Expr: expr}
					if st := thresholdStat.FindStringSubmatch(expr); st != nil {
						r.Stat = st[1]
						r.Observed = m.Values[st[1]]
					}
				}
				r.OK = m.Thresholds[expr].OK // the data wins: the script may have edited it
				s.Thresholds = append(s.Thresholds, r)
			}
		}
		s.Metrics[name] = ms
	}
	if d.RootGroup != nil {
		s.RootGroup = toGroup(d.RootGroup)
	}
	return s, opts, indent, nil
}

func toGroup(g *summaryGroup) *metrics.Group {
	out := &metrics.Group{Name: g.Name, Path: g.Path, ID: g.ID}
	for _, c := range g.Checks {
		out.Checks = append(out.Checks, &metrics.Check{Name: c.Name, Path: c.Path, ID: c.ID, Passes: c.Passes, Fails: c.Fails})
	}
	for _, sg := range g.Groups {
		if sg != nil {
			out.Groups = append(out.Groups, toGroup(sg))
		}
	}
	return out
}
