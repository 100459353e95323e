package metrics

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// ANSI styles of the text summary, as k6 colours it: passes green, failures red, values
// cyan, the dotted leaders faint.
const (
	ansiReset = "\x1b[0m"
	ansiGreen = "\x1b[32m"
	ansiRed   = "\x1b[31m"
	ansiCyan  = "\x1b[36m"
	ansiFaint = "\x1b[2m"
)

const (
	markPass = "✓"
	markFail = "✗"
)

// timeUnits are the summaryTimeUnit values k6 accepts, in milliseconds.
var timeUnits = map[string]float64{"s": 1000, "ms": 1, "us": 0.001}

// ValidateTimeUnit checks a summaryTimeUnit value: "" (automatic), "s", "ms" or "us".
func ValidateTimeUnit(u string) error {
	if _, ok := timeUnits[u]; u != "" && !ok {
		return &StatError{Stat: "summaryTimeUnit " + strconv.Quote(u)}
	}
	return nil
}

type painter struct{ on bool }

func (p painter) paint(style, s string) string {
	if !p.on || s == "" {
		return s
	}
	return style + s + ansiReset
}

func (p painter) mark(ok bool) string {
	if ok {
		return p.paint(ansiGreen, markPass)
	}
	return p.paint(ansiRed, markFail)
}

func (s *Summary) text(opts SummaryOptions) string {
	p := painter{on: !opts.NoColor}
	var b strings.Builder
	names := s.names()

	if len(s.Thresholds) > 0 {
		b.WriteString("  █ THRESHOLDS\n\n")
		last := ""
		for _, r := range s.Thresholds {
			if r.Metric != last {
				if last != "" {
					b.WriteByte('\n')
				}
				b.WriteString("    " + r.Metric + "\n")
				last = r.Metric
			}
			m := s.Metrics[r.Metric]
			b.WriteString("    " + p.mark(r.OK) + " '" + r.Expr + "' " + r.Stat + "=" +
				p.paint(ansiCyan, formatStat(r.Stat, r.Observed, m, opts.TimeUnit)) + "\n")
		}
		b.WriteString("\n\n")
	}

	b.WriteString("  █ TOTAL RESULTS\n\n")
	if s.RootGroup != nil && hasChecks(s.RootGroup) {
		writeChecks(&b, p, s.RootGroup, "    ")
		b.WriteByte('\n')
	}

	type row struct {
		label string
		cells []string
	}
	rows := make([]row, 0, len(names))
	labelW := 0
	for _, n := range names {
		m := s.Metrics[n]
		label := n
		if m.Submetric {
			label = "  { " + strings.ReplaceAll(m.Tags, ",", ", ") + " }"
		}
		labelW = max(labelW, utf8.RuneCountInString(label))
		rows = append(rows, row{label, m.textCells(opts)})
	}
	var colW []int
	for _, r := range rows {
		for j, c := range r.cells[:max(len(r.cells)-1, 0)] {
			if j == len(colW) {
				colW = append(colW, 0)
			}
			colW[j] = max(colW[j], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		dots := labelW + 3 - utf8.RuneCountInString(r.label)
		b.WriteString("    " + r.label + p.paint(ansiFaint, strings.Repeat(".", dots)) + ": ")
		for j, c := range r.cells {
			b.WriteString(p.paint(ansiCyan, c))
			if j < len(r.cells)-1 {
				b.WriteString(strings.Repeat(" ", colW[j]-utf8.RuneCountInString(c)+1))
			}
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func hasChecks(g *Group) bool {
	if len(g.Checks) > 0 {
		return true
	}
	for _, sub := range g.Groups {
		if hasChecks(sub) {
			return true
		}
	}
	return false
}

func writeChecks(b *strings.Builder, p painter, g *Group, indent string) {
	for _, c := range g.Checks {
		ok := c.Fails == 0
		b.WriteString(indent + p.mark(ok) + " " + c.Name + "\n")
		if !ok {
			total := c.Passes + c.Fails
			pct := int64(math.Floor(float64(c.Passes) * 100 / float64(total)))
			b.WriteString(indent + "  " + p.paint(ansiFaint, "↳  "+strconv.FormatInt(pct, 10)+"% — ") +
				p.paint(ansiGreen, markPass+" "+strconv.FormatInt(c.Passes, 10)) + " / " +
				p.paint(ansiRed, markFail+" "+strconv.FormatInt(c.Fails, 10)) + "\n")
		}
	}
	for _, sub := range g.Groups {
		if !hasChecks(sub) {
			continue
		}
		b.WriteString("\n" + indent + "█ " + sub.Name + "\n")
		if len(sub.Checks) > 0 {
			b.WriteByte('\n')
		}
		writeChecks(b, p, sub, indent+"  ")
	}
}

// textCells are the value columns of a metric's summary line.
func (m *MetricSummary) textCells(opts SummaryOptions) []string {
	v := m.Values
	switch m.Type {
	case xk6ext.Counter:
		return []string{formatValue(v["count"], m.Contains, opts.TimeUnit), formatPerSecond(v["rate"], m.Contains, opts.TimeUnit)}
	case xk6ext.Gauge:
		return []string{formatValue(v["value"], m.Contains, opts.TimeUnit),
			"min=" + formatValue(v["min"], m.Contains, opts.TimeUnit),
			"max=" + formatValue(v["max"], m.Contains, opts.TimeUnit)}
	case xk6ext.Rate:
		return []string{formatPercent(v["rate"]), markPass + " " + formatDefault(v["passes"]),
			markFail + " " + formatDefault(v["fails"])}
	}
	keys, vals := m.statValues(opts)
	cells := make([]string, len(keys))
	for i, k := range keys {
		if k == "count" {
			cells[i] = k + "=" + formatDefault(vals[k])
			continue
		}
		cells[i] = k + "=" + formatValue(vals[k], m.Contains, opts.TimeUnit)
	}
	return cells
}

// formatStat renders a threshold's observed value for the THRESHOLDS block.
func formatStat(stat string, v float64, m *MetricSummary, unit string) string {
	if m == nil {
		return formatDefault(v)
	}
	switch {
	case m.Type == xk6ext.Rate:
		return formatPercent(v)
	case m.Type == xk6ext.Counter && stat == "rate":
		return formatPerSecond(v, m.Contains, unit)
	}
	return formatValue(v, m.Contains, unit)
}

func formatValue(v float64, vt xk6ext.ValueType, unit string) string {
	switch vt {
	case xk6ext.Time:
		return FormatDuration(v, unit)
	case xk6ext.Data:
		return FormatBytes(v)
	}
	return formatDefault(v)
}

func formatPerSecond(v float64, vt xk6ext.ValueType, unit string) string {
	switch vt {
	case xk6ext.Time:
		return FormatDuration(v, unit) + "/s"
	case xk6ext.Data:
		return FormatBytes(v) + "/s"
	}
	return formatDefault(v) + "/s" // k6: "4.36938/s", six decimals at most
}

// formatPercent floors to two decimals so that 99.999% never reads as 100.00%.
func formatPercent(r float64) string {
	return strconv.FormatFloat(math.Floor(r*10000)/100, 'f', 2, 64) + "%"
}

// formatDefault prints a plain number with at most six decimals, as k6 does.
func formatDefault(v float64) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// trim2 prints v with up to two decimals, dropping trailing zeros ("1.5", "2", "0.25").
func trim2(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "-0" {
		return "0"
	}
	return s
}

// FormatDuration renders a time value given in milliseconds as k6's summary does: in
// the fixed unit when one is set (summaryTimeUnit "s", "ms", "us"), otherwise in the
// largest of ns, µs, ms and s that keeps it at or above 1, with two decimals at most,
// and as minutes and seconds from one minute up ("1m30s").
func FormatDuration(ms float64, unit string) string {
	if f, ok := timeUnits[unit]; ok {
		return trim2(ms/f) + unit
	}
	if ms == 0 || math.IsNaN(ms) || math.IsInf(ms, 0) {
		if ms == 0 {
			return "0s"
		}
		return strconv.FormatFloat(ms, 'f', -1, 64) + "ms"
	}
	a := math.Abs(ms)
	switch {
	case a < 0.001:
		return trim2(ms*1e6) + "ns"
	case a < 1:
		return trim2(ms*1e3) + "µs"
	case a < 1000:
		return trim2(ms) + "ms"
	case a < 60000:
		return trim2(ms/1000) + "s"
	}
	return time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond).String()
}

var byteUnits = []string{"B", "kB", "MB", "GB", "TB", "PB", "EB"}

// FormatBytes renders a byte count in decimal (SI) units as k6's summary does: "82 B",
// "1.2 kB", "34 MB"; one decimal below 10 of a unit, none above.
func FormatBytes(b float64) string {
	if math.IsNaN(b) || math.IsInf(b, 0) {
		return strconv.FormatFloat(b, 'f', -1, 64) + " B"
	}
	sign := ""
	if b < 0 {
		sign, b = "-", -b
	}
	if b < 10 {
		return sign + strconv.FormatFloat(math.Round(b), 'f', 0, 64) + " B"
	}
	e := min(int(math.Floor(math.Log10(b)/3)), len(byteUnits)-1)
	for {
		raw := b / math.Pow(1000, float64(e))
		if tenth := math.Round(raw*10) / 10; tenth < 10 {
			return sign + strconv.FormatFloat(tenth, 'f', 1, 64) + " " + byteUnits[e]
		}
		whole := math.Round(raw)
		if whole >= 1000 && e < len(byteUnits)-1 { // 999.6 kB reads as 1.0 MB
			e++
			continue
		}
		return sign + strconv.FormatFloat(whole, 'f', 0, 64) + " " + byteUnits[e]
	}
}
