package xk6ext_test

import (
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/mockllm"
)

// dts is index.d.ts, read once per test.
func dts(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("index.d.ts")
	require.NoError(t, err)
	return string(b)
}

var dtsMember = regexp.MustCompile(`(?m)^  (?:readonly )?(\w+)\??[:(]`)

// dtsBlock returns the member names of a top-level block of index.d.ts whose header
// matches header (an interface, the class, the default export's type).
func dtsBlock(t *testing.T, src, header string) []string {
	t.Helper()
	re := regexp.MustCompile(`(?s)` + header + ` \{\n(.*?)\n\}`)
	m := re.FindStringSubmatch(src)
	require.NotNil(t, m, "index.d.ts has no block %q", header)
	var names []string
	for _, mm := range dtsMember.FindAllStringSubmatch(m[1], -1) {
		if mm[1] != "constructor" && !slices.Contains(names, mm[1]) {
			names = append(names, mm[1])
		}
	}
	sort.Strings(names)
	return names
}

// dtsSurfaceScript reads the module's real surface from JavaScript: the option keys
// each function reads (a Proxy records every get), and the members of what it returns.
const dtsSurfaceScript = `
import storm, * as named from 'k6/x/tokenstorm';

function keysRead(base, fn) {
  const seen = new Set();
  const p = new Proxy(base, { get(t, k) { if (typeof k === 'string') seen.add(k); return t[k]; } });
  try { fn(p); } catch (e) { seen.add('THREW: ' + e.message); }
  return [...seen].sort();
}
const members = (o) => Object.getOwnPropertyNames(o).sort();

const surface = {
  ClientOptions: keysRead({}, (p) => new storm.Client(p)),
  SLO: keysRead({}, (p) => new storm.Client({ slo: p })),
  MockOptions: keysRead({}, (p) => storm.mock(p)),
  DatasetOptions: keysRead({}, (p) => storm.dataset('./d.jsonl', p)),
  LognormalOptions: keysRead({ median: 10 }, (p) => storm.lognormal(p)),
  UniformOptions: keysRead({ min: 1, max: 2 }, (p) => storm.uniform(p)),
  Client: members(new storm.Client({ url: __ENV.MOCK_URL })),
  Dataset: members(storm.dataset('./d.jsonl')),
  Sampler: members(storm.constant(1)),
  Default: Object.keys(storm).sort(),
  Named: Object.keys(named).filter((k) => k !== 'default').sort(),
};
const client = new storm.Client({ url: __ENV.MOCK_URL, model: 'mock-model' });

export function read() {
  const r = client.chat({ messages: [{ role: 'user', content: 'hi' }], max_tokens: 3 });
  surface.Result = Object.keys(r).sort();
  return surface;
}
`

// TestIndexDTSMatchesModule: index.d.ts declares exactly what the module implements,
// both ways: every option it names is read, every option read is named, every Result
// field and member exists on both sides.
func TestIndexDTSMatchesModule(t *testing.T) {
	src := dts(t)
	e := newEnv(t)
	e.startMock(t, mockllm.Config{})
	require.NoError(t, writeFile(e.dir, "d.jsonl", `{"prompt": "a"}`+"\n"))
	vu := e.vu(t, dtsSurfaceScript)
	got := obj(t, call(t, vu, "read"))
	strs := func(v any) []string {
		var out []string
		for _, x := range v.([]any) {
			out = append(out, x.(string))
		}
		return out
	}
	for name, header := range map[string]string{
		"ClientOptions":    "export interface ClientOptions",
		"SLO":              "export interface SLO",
		"MockOptions":      "export interface MockOptions",
		"DatasetOptions":   "export interface DatasetOptions",
		"LognormalOptions": "export interface LognormalOptions",
		"Client":           "export class Client",
		"Dataset":          "export interface Dataset",
		"Sampler":          "export interface Sampler",
		"Default":          "declare const storm:",
		"Result":           "export interface Result",
	} {
		t.Run(name, func(t *testing.T) {
			want := dtsBlock(t, src, regexp.QuoteMeta(header))
			if name == "Default" {
				want = regexp.MustCompile(`(?m)^  (\w+): typeof`).FindAllString(src[strings.Index(src, header):], -1)
				for i, w := range want {
					want[i] = strings.TrimSuffix(strings.TrimSpace(w), ": typeof")
				}
				sort.Strings(want)
			}
			assert.Equal(t, want, strs(got[name]))
		})
	}
	t.Run("UniformOptions", func(t *testing.T) {
		m := regexp.MustCompile(`export function uniform\(options: \{([^}]*)\}`).FindStringSubmatch(src)
		require.NotNil(t, m)
		var want []string
		for _, f := range strings.Split(m[1], ";") {
			if k, _, ok := strings.Cut(strings.TrimSpace(f), ":"); ok {
				want = append(want, strings.TrimSuffix(k, "?"))
			}
		}
		sort.Strings(want)
		assert.Equal(t, want, strs(got["UniformOptions"]))
	})
	t.Run("Named", func(t *testing.T) {
		var want []string
		for _, m := range regexp.MustCompile(`(?m)^export (?:function|class) (\w+)`).FindAllStringSubmatch(src, -1) {
			want = append(want, m[1])
		}
		sort.Strings(want)
		assert.Equal(t, want, strs(got["Named"]))
	})
	t.Run("faults", func(t *testing.T) {
		m := regexp.MustCompile(`(?s)faults\?: Array<(.*?)>;`).FindStringSubmatch(src)
		require.NotNil(t, m)
		var want []string
		for _, q := range regexp.MustCompile(`'(\w+)'`).FindAllStringSubmatch(m[1], -1) {
			want = append(want, q[1])
		}
		var have []string
		for _, f := range mockllm.AllFaults() {
			have = append(have, string(f))
		}
		sort.Strings(want)
		sort.Strings(have)
		assert.Equal(t, have, want)
	})
}
