package mockllm

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// promSample is one parsed exposition line.
type promSample struct {
	name   string
	labels map[string]string
	value  float64
}

type promFamily struct {
	typ     string
	samples []promSample
}

var (
	sampleRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$`)
	labelRE  = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"$`)
)

// parseProm parses the Prometheus text format line by line and checks its rules:
// HELP and TYPE before a family's samples, samples of a family contiguous, known
// types, label syntax, float values, histogram buckets cumulative with +Inf equal
// to _count.
func parseProm(r io.Reader) (map[string]*promFamily, error) {
	fams := map[string]*promFamily{}
	var cur string
	sc := bufio.NewScanner(r)
	for ln := 1; sc.Scan(); ln++ {
		line := sc.Text()
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "# ") {
			parts := strings.SplitN(line, " ", 4)
			if len(parts) < 3 {
				return nil, fmt.Errorf("line %d: short comment %q", ln, line)
			}
			switch parts[1] {
			case "HELP":
				cur = parts[2]
			case "TYPE":
				if len(parts) != 4 {
					return nil, fmt.Errorf("line %d: TYPE without type", ln)
				}
				switch parts[3] {
				case "counter", "gauge", "histogram", "summary", "untyped":
				default:
					return nil, fmt.Errorf("line %d: unknown type %q", ln, parts[3])
				}
				if _, dup := fams[parts[2]]; dup {
					return nil, fmt.Errorf("line %d: family %s declared twice", ln, parts[2])
				}
				cur = parts[2]
				fams[cur] = &promFamily{typ: parts[3]}
			}
			continue
		}
		m := sampleRE.FindStringSubmatch(line)
		if m == nil {
			return nil, fmt.Errorf("line %d: not a sample: %q", ln, line)
		}
		s := promSample{name: m[1], labels: map[string]string{}}
		if m[3] != "" {
			for _, kv := range splitLabels(m[3]) {
				lm := labelRE.FindStringSubmatch(kv)
				if lm == nil {
					return nil, fmt.Errorf("line %d: bad label %q", ln, kv)
				}
				s.labels[lm[1]] = lm[2]
			}
		}
		v, err := strconv.ParseFloat(m[4], 64)
		if err != nil {
			return nil, fmt.Errorf("line %d: value: %w", ln, err)
		}
		s.value = v
		f := fams[cur]
		if f == nil || !belongs(s.name, cur, f.typ) {
			return nil, fmt.Errorf("line %d: sample %s outside its family (current %q)", ln, s.name, cur)
		}
		f.samples = append(f.samples, s)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for name, f := range fams {
		if f.typ == "histogram" {
			if err := checkHistogram(name, f); err != nil {
				return nil, err
			}
		}
	}
	return fams, nil
}

func splitLabels(s string) []string {
	var out []string
	inQ, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQ = !inQ
		case ',':
			if !inQ {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	return append(out, s[start:])
}

func belongs(sample, family, typ string) bool {
	if sample == family {
		return typ != "histogram"
	}
	if typ == "histogram" {
		return sample == family+"_bucket" || sample == family+"_sum" || sample == family+"_count"
	}
	return false
}

func checkHistogram(name string, f *promFamily) error {
	prevLE, prev := math.Inf(-1), -1.0
	var inf, count float64 = -1, -2
	for _, s := range f.samples {
		switch s.name {
		case name + "_bucket":
			le, err := strconv.ParseFloat(s.labels["le"], 64)
			if err != nil {
				return fmt.Errorf("%s: le %q", name, s.labels["le"])
			}
			if le <= prevLE || s.value < prev {
				return fmt.Errorf("%s: buckets not increasing at le=%v", name, le)
			}
			prevLE, prev = le, s.value
			if math.IsInf(le, 1) {
				inf = s.value
			}
		case name + "_count":
			count = s.value
		}
	}
	if inf != count {
		return fmt.Errorf("%s: +Inf bucket %v != count %v", name, inf, count)
	}
	return nil
}

// bucketBounds returns the le labels of a histogram family's buckets, in order.
func bucketBounds(name string, f *promFamily) []string {
	var out []string
	for _, s := range f.samples {
		if s.name == name+"_bucket" {
			out = append(out, s.labels["le"])
		}
	}
	return out
}

func scrape(t *testing.T, c *http.Client, url string) map[string]*promFamily {
	t.Helper()
	resp, err := c.Get(url + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.True(t, strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4"))
	fams, err := parseProm(resp.Body)
	require.NoError(t, err)
	return fams
}

func gauge(t *testing.T, fams map[string]*promFamily, name string) float64 {
	t.Helper()
	f, ok := fams[name]
	require.True(t, ok, "family %s missing", name)
	require.Len(t, f.samples, 1, name)
	return f.samples[0].value
}

func TestMetricsParser(t *testing.T) {
	f, err := os.Open("testdata/sim-metrics.txt")
	require.NoError(t, err)
	defer f.Close()
	fams, err := parseProm(f)
	require.NoError(t, err, "the parser accepts a real vLLM-style exposition")
	assert.Len(t, fams, 20)

	for _, bad := range []string{
		"vllm:x 1\n", // no TYPE
		"# TYPE a gauge\na{b=\"c} 1\n",
		"# TYPE a gauge\na one\n",
		"# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_count 1\n",
		"# TYPE h histogram\nh_bucket{le=\"+Inf\"} 2\nh_count 1\n",
		"# TYPE a gauge\n# TYPE a gauge\n",
	} {
		_, err := parseProm(strings.NewReader(bad))
		assert.Error(t, err, "%q", bad)
	}
}

// TestMetrics checks /metrics against the fixture's names and types and against the
// requests actually served.
func TestMetrics(t *testing.T) {
	cfg := Config{Model: `odd"model`, TTFT: time.Millisecond, ITL: 100 * time.Microsecond, RecordTruth: true}
	srv, c := startServer(t, cfg)

	for i, body := range []string{
		`{"messages":[{"role":"user","content":"one two three four"}],"stream":true,"max_tokens":4}`,
		`{"messages":[{"role":"user","content":"five"}],"max_tokens":3}`,
	} {
		resp := post(t, c, srv.URL()+"/v1/chat/completions", body)
		_, err := io.Copy(io.Discard, resp.Body)
		require.NoError(t, err, i)
		resp.Body.Close()
	}
	fams := scrape(t, c, srv.URL())

	fixture, err := os.Open("testdata/sim-metrics.txt")
	require.NoError(t, err)
	defer fixture.Close()
	want, err := parseProm(fixture)
	require.NoError(t, err)
	// The families the issue names, with vLLM's types.
	for name, typ := range map[string]string{
		"vllm:num_requests_running":        "gauge",
		"vllm:num_requests_waiting":        "gauge",
		"vllm:kv_cache_usage_perc":         "gauge",
		"vllm:prompt_tokens_total":         "counter",
		"vllm:generation_tokens_total":     "counter",
		"vllm:time_to_first_token_seconds": "histogram",
		"vllm:e2e_request_latency_seconds": "histogram",
	} {
		if assert.Contains(t, fams, name) {
			assert.Equal(t, typ, fams[name].typ, name)
		}
	}
	for name, f := range fams {
		if w, ok := want[name]; ok {
			assert.Equal(t, w.typ, f.typ, name)
			if f.typ == "histogram" {
				assert.Equal(t, bucketBounds(name, w), bucketBounds(name, f), "%s: vLLM's buckets", name)
			}
		} else {
			t.Errorf("family %s is not in vLLM's exposition", name)
		}
		for _, s := range f.samples {
			assert.Equal(t, `odd\"model`, s.labels["model_name"], s.name)
		}
	}

	truths := srv.Truths()
	require.Len(t, truths, 2)
	prompt, gen := 0, 0
	for _, tr := range truths {
		prompt += tr.PromptTokens
		gen += tr.CompletionTokens
	}
	assert.Equal(t, float64(prompt), gauge(t, fams, "vllm:prompt_tokens_total"))
	assert.Equal(t, float64(gen), gauge(t, fams, "vllm:generation_tokens_total"))
	assert.Zero(t, gauge(t, fams, "vllm:num_requests_running"))
	assert.Zero(t, gauge(t, fams, "vllm:num_requests_waiting"))
	assert.Zero(t, gauge(t, fams, "vllm:kv_cache_usage_perc"))

	count := func(fam, suffix string) float64 {
		for _, s := range fams[fam].samples {
			if s.name == fam+suffix {
				return s.value
			}
		}
		t.Fatalf("%s%s missing", fam, suffix)
		return 0
	}
	assert.Equal(t, 2.0, count("vllm:time_to_first_token_seconds", "_count"))
	assert.Equal(t, 2.0, count("vllm:e2e_request_latency_seconds", "_count"))
	assert.Equal(t, float64(gen-2), count("vllm:inter_token_latency_seconds", "_count"))
	assert.Greater(t, count("vllm:time_to_first_token_seconds", "_sum"), 0.002)
	for _, s := range fams["vllm:request_success_total"].samples {
		want := 0.0
		if s.labels["finished_reason"] == "length" {
			want = 2
		}
		assert.Equal(t, want, s.value, s.labels["finished_reason"])
	}
}

func TestModelsAndHealth(t *testing.T) {
	srv, c := startServer(t, Config{Model: "m-9"})
	for _, tt := range []struct{ path, want string }{
		{"/v1/models", `"id":"m-9"`},
		{"/health", `"ok"`},
	} {
		t.Run(tt.path, func(t *testing.T) {
			resp, err := c.Get(srv.URL() + tt.path)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Contains(t, string(raw), tt.want)
			assert.True(t, strictUnmarshal(raw, new(map[string]any)) == nil, "%s", raw)
		})
	}
}
