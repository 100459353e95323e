package metrics

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestFormatDuration(t *testing.T) {
	tests := []struct {
		ms   float64
		unit string
		want string
	}{
		{0, "", "0s"},
		{0.0000005, "", "0.5ns"},
		{0.000042, "", "42ns"},
		{0.5, "", "500µs"},
		{0.12345, "", "123.45µs"},
		{1, "", "1ms"},
		{1.2, "", "1.2ms"},
		{140.364, "", "140.36ms"},
		{999.994, "", "999.99ms"},
		{1000, "", "1s"},
		{1130, "", "1.13s"},
		{59999, "", "60s"},
		{60000, "", "1m0s"},
		{90500, "", "1m30.5s"},
		{3723004, "", "1h2m3.004s"},
		{-2.5, "", "-2.5ms"},
		{1234.5678, "ms", "1234.57ms"},
		{1234.5678, "s", "1.23s"},
		{1.5, "us", "1500us"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatDuration(tt.ms, tt.unit))
		})
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		b    float64
		want string
	}{
		{0, "0 B"},
		{9, "9 B"},
		{82, "82 B"},
		{999, "999 B"},
		{1000, "1.0 kB"},
		{1234, "1.2 kB"},
		{12345, "12 kB"},
		{999_960, "1.0 MB"},
		{999_400, "999 kB"},
		{9_960, "10 kB"},
		{9_940, "9.9 kB"},
		{123_456, "123 kB"},
		{34_000_000, "34 MB"},
		{5.5e9, "5.5 GB"},
		{2e21, "2000 EB"},
		{-1234, "-1.2 kB"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, FormatBytes(tt.b))
		})
	}
}

func TestFormatNumbers(t *testing.T) {
	assert.Equal(t, "152.355556", formatDefault(152.3555555555))
	assert.Equal(t, "141", formatDefault(141))
	assert.Equal(t, "4.36938/s", formatPerSecond(4.3693801, xk6ext.Default, ""))
	assert.Equal(t, "31 kB/s", formatPerSecond(31_000, xk6ext.Data, ""))
	assert.Equal(t, "1.5ms/s", formatPerSecond(1.5, xk6ext.Time, ""))
	assert.Equal(t, "99.99%", formatPercent(0.99999), "never rounds up to 100%")
	assert.Equal(t, "100.00%", formatPercent(1))
	assert.Equal(t, "0.00%", formatPercent(0))
}

func TestText(t *testing.T) {
	s := fixtureSummary(t)
	out := s.Text(SummaryOptions{NoColor: true})
	t.Log("\n" + out)
	assert.NotContains(t, out, "\x1b[", "NoColor strips ANSI")

	thr := strings.Index(out, "█ THRESHOLDS")
	tot := strings.Index(out, "█ TOTAL RESULTS")
	require.GreaterOrEqual(t, thr, 0)
	require.Greater(t, tot, thr, "thresholds come first in their own block")
	block := out[thr:tot]
	assert.Contains(t, block, "    ttft\n    ✓ 'p(95)<200' p(95)=95.5ms\n    ✗ 'avg<1' avg=55ms\n")
	assert.Contains(t, block, "    failed\n    ✓ 'rate<0.5' rate=25.00%\n")
	assert.Contains(t, block, "    reqs\n    ✓ 'count>1' count=10\n")
	assert.Contains(t, block, "    ttft{model:a}\n    ✓ 'max<1000' max=50ms\n")

	rest := out[tot:]
	assert.Contains(t, rest, "    ✓ status is 200\n")
	assert.Contains(t, rest, "    █ outer\n\n      █ inner\n\n        ✗ has text\n")
	assert.Contains(t, rest, "✗ has text\n")
	assert.Contains(t, rest, "↳  50% — ✓ 1 / ✗ 1")
	assert.NotContains(t, rest, "█ lonely", "groups without checks are not listed")

	// Metric lines: sorted, submetric right after its parent, ':' aligned.
	var lines []string
	for _, l := range strings.Split(rest, "\n") {
		if strings.Contains(l, "..") {
			lines = append(lines, l)
		}
	}
	var names []string
	colon := -1
	for _, l := range lines {
		names = append(names, strings.TrimSpace(strings.TrimRight(l[:strings.Index(l, ".")], ".")))
		c := strings.Index(l, ": ")
		if colon < 0 {
			colon = c
		}
		assert.Equal(t, colon, c, "aligned: %q", l)
	}
	assert.Equal(t, []string{"checks", "data_received", "failed", "group_duration", "reqs",
		"tps", "ttft", "{ model:a }", "vus"}, names)
	line := func(name string) string {
		for _, l := range lines {
			if strings.HasPrefix(strings.TrimSpace(l), name+".") {
				return l
			}
		}
		t.Fatalf("no line for %s", name)
		return ""
	}
	assert.Regexp(t, `: 75\.00% +✓ 3 +✗ 1$`, line("checks"))
	assert.Regexp(t, `: 2\.2 kB +1\.1 kB/s$`, line("data_received"))
	assert.Regexp(t, `: 10 +5/s$`, line("reqs"))
	assert.Regexp(t, `: 3 +min=2 +max=5$`, line("vus"))
	assert.Regexp(t, `: avg=55ms +min=10ms +med=55ms +max=100ms +p\(90\)=91ms +p\(95\)=95\.5ms$`, line("ttft"))
	assert.Regexp(t, `: avg=52\.125 +min=52\.125 `, line("tps"))
	assert.Regexp(t, `^      \{ model:a \}\.+: avg=30ms `, line("{ model:a }"))
	// Value columns line up between trends.
	assert.Equal(t, strings.Index(line("ttft"), "min="), strings.Index(line("tps"), "min="))

	colored := s.Text(SummaryOptions{})
	assert.Contains(t, colored, ansiGreen+"✓"+ansiReset)
	assert.Contains(t, colored, ansiRed+"✗"+ansiReset)
	assert.Equal(t, out, ansi.ReplaceAllString(colored, ""), "colour adds only escapes")

	custom := s.Text(SummaryOptions{NoColor: true, TrendStats: []string{"p(99)", "count"}, TimeUnit: "s"})
	assert.Regexp(t, `ttft\.+: p\(99\)=0\.1s +count=10\n`, custom)
}
