package xk6ext_test

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

func promptsJSONL(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "{\"prompt\":\"p%d\",\"i\":%d,\"max_tokens\":%d}\n", i, i, i+1)
	}
	return b.String()
}

func TestDatasetSequentialIsGlobal(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, writeFile(e.dir, "data/d.jsonl", promptsJSONL(5)))
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
const ds = storm.dataset('./data/d.jsonl');
export function next() { return ds.next().prompt; }
export function info() {
  const first = ds.at(0);
  first.prompt = 'changed';
  return { length: ds.length, at0: ds.at(0).prompt, last: ds.at(-1).prompt, out: ds.at(5) === undefined, path: ds.path };
}
`)
	vu1, err := prog.NewVU(testCtx(t), 1)
	require.NoError(t, err)
	// Overwrite the file: the second VU must see the copy loaded once per run.
	require.NoError(t, writeFile(e.dir, "data/d.jsonl", `{"prompt":"other"}`))
	vu2, err := prog.NewVU(testCtx(t), 2)
	require.NoError(t, err)

	var got []any
	for range 6 {
		got = append(got, call(t, vu1, "next"), call(t, vu2, "next"))
	}
	want := []any{"p0", "p1", "p2", "p3", "p4", "p0", "p1", "p2", "p3", "p4", "p0", "p1"}
	assert.Equal(t, want, got, "one cursor shared by both VUs, wrapping around")

	info := obj(t, call(t, vu2, "info"))
	assert.EqualValues(t, 5, info["length"])
	assert.Equal(t, "p0", info["at0"], "items are copies: a script's change is not seen by the next read")
	assert.Equal(t, "p4", info["last"])
	assert.Equal(t, true, info["out"])
	assert.Equal(t, filepath.Join(e.dir, "data", "d.jsonl"), info["path"], "relative to the script, not the working directory")
}

func TestDatasetItemIsARequest(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, writeFile(e.dir, "d.jsonl",
		`{"messages":[{"role":"user","content":"hello"}],"max_tokens":3}`+"\n"+`{"prompt":"p","max_tokens":2,"temperature":0}`))
	vu := e.vu(t, `
import storm from 'k6/x/tokenstorm';
const ds = storm.dataset('d.jsonl');
const c = new storm.Client();
export default function () { return [c.chat(ds.next()).completion_tokens, c.chat(ds.next()).completion_tokens]; }
`)
	assert.Equal(t, []any{int64(3), int64(2)}, call(t, vu, "default"))
}

// draws runs n draws of order in VU id and returns the count of each item index.
func draws(t *testing.T, e *env, opts string, id int64, n int) []float64 {
	t.Helper()
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
const ds = storm.dataset('d.jsonl', `+opts+`);
export function run(n) {
  const counts = new Array(ds.length).fill(0);
  for (let k = 0; k < n; k++) counts[ds.next().i]++;
  return counts;
}
`)
	vu, err := prog.NewVU(testCtx(t), id)
	require.NoError(t, err)
	raw := call(t, vu, "run", n).([]any)
	out := make([]float64, len(raw))
	for i, v := range raw {
		out[i] = num(t, v)
	}
	return out
}

func TestDatasetZipfFollowsRankPower(t *testing.T) {
	const items, n = 10, 40000
	for _, s := range []float64{0.8, 1.2} {
		t.Run(fmt.Sprint("s=", s), func(t *testing.T) {
			e := newEnv(t)
			require.NoError(t, writeFile(e.dir, "d.jsonl", promptsJSONL(items)))
			counts := draws(t, e, fmt.Sprintf("{ order: 'zipf', s: %v, seed: 5 }", s), 1, n)
			var norm float64
			for k := 1; k <= items; k++ {
				norm += math.Pow(float64(k), -s)
			}
			for k := 1; k <= items; k++ {
				p := math.Pow(float64(k), -s) / norm
				sigma := math.Sqrt(n * p * (1 - p))
				assert.InDelta(t, n*p, counts[k-1], 5*sigma, "rank %d", k)
			}
			assert.Greater(t, counts[0], counts[items-1]*3, "rank 1 much hotter than rank %d", items)
		})
	}
}

func TestDatasetRandomIsUniformAndSeeded(t *testing.T) {
	const items, n = 8, 16000
	e := newEnv(t)
	require.NoError(t, writeFile(e.dir, "d.jsonl", promptsJSONL(items)))
	counts := draws(t, e, "{ order: 'random', seed: 9 }", 1, n)
	p := 1.0 / items
	for i, c := range counts {
		assert.InDelta(t, n*p, c, 5*math.Sqrt(n*p*(1-p)), "item %d", i)
	}

	seq := func(root *env, id int64) string {
		prog := root.compile(t, `
import storm from 'k6/x/tokenstorm';
const ds = storm.dataset('d.jsonl', { order: 'random', seed: 9 });
export function seq() { const s = []; for (let k = 0; k < 32; k++) s.push(ds.next().i); return s.join(','); }
`)
		vu, err := prog.NewVU(testCtx(t), id)
		require.NoError(t, err)
		return call(t, vu, "seq").(string)
	}
	other := newEnv(t)
	require.NoError(t, writeFile(other.dir, "d.jsonl", promptsJSONL(items)))
	assert.Equal(t, seq(e, 3), seq(other, 3), "same seed and VU: same sequence in another run")
	assert.NotEqual(t, seq(e, 3), seq(e, 4), "VUs draw different sequences")
}

func TestDatasetBadLineNamesFileAndLine(t *testing.T) {
	e := newEnv(t)
	require.NoError(t, writeFile(e.dir, "bad.jsonl", "{\"prompt\":\"ok\"}\n\n{\"prompt\": 3}\n"))
	prog := e.compile(t, `
import storm from 'k6/x/tokenstorm';
storm.dataset('bad.jsonl');
export default function () {}
`)
	_, err := prog.NewVU(testCtx(t), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(e.dir, "bad.jsonl")+":3: \"prompt\" must be a string")
}

func TestParseDataset(t *testing.T) {
	cases := []struct {
		name, data string
		n          int
		line       int
		want       string
	}{
		{"messages and prompts", "{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}]}\n{\"prompt\":\"b\",\"max_tokens\":4}\n", 2, 0, ""},
		{"blank lines and CRLF", "\r\n{\"prompt\":\"a\"}\r\n\r\n{\"prompt\":\"b\"}", 2, 0, ""},
		{"extra fields kept", `{"prompt":"a","temperature":0.5,"seed":1}`, 1, 0, ""},
		{"empty file", "\n\n", 0, 0, "no items"},
		{"not an object", "[1,2]", 0, 1, "want a JSON object"},
		{"broken JSON", "{\"prompt\":\"a\"}\n{\"prompt\":", 0, 2, "invalid JSON"},
		{"trailing garbage", `{"prompt":"a"} x`, 0, 1, "invalid JSON"},
		{"neither", `{"text":"a"}`, 0, 1, `want "messages" or "prompt"`},
		{"both", `{"prompt":"a","messages":[{"role":"user","content":"b"}]}`, 0, 1, "not both"},
		{"empty messages", `{"messages":[]}`, 0, 1, `"messages" is empty`},
		{"messages not array", `{"messages":{"role":"user"}}`, 0, 1, "array of objects"},
		{"role missing", `{"messages":[{"content":"x"}]}`, 0, 1, `"messages[0].role" must be a string`},
		{"content not string", `{"messages":[{"role":"user","content":"x"},{"role":"user","content":[1]}]}`, 0, 1, `"messages[1].content"`},
		{"max_tokens negative", `{"prompt":"a","max_tokens":-1}`, 0, 1, "non-negative integer"},
		{"max_tokens fraction", `{"prompt":"a","max_tokens":1.5}`, 0, 1, "non-negative integer"},
		{"max_tokens string", `{"prompt":"a","max_tokens":"3"}`, 0, 1, "non-negative integer"},
		{"line too long", "{\"prompt\":\"" + strings.Repeat("x", xk6ext.DefaultMaxDatasetLine) + "\"}", 0, 1, "longer than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds, err := xk6ext.ParseDataset("f.jsonl", []byte(c.data))
			if c.want == "" {
				require.NoError(t, err)
				assert.Equal(t, c.n, ds.Len())
				return
			}
			var de *xk6ext.DatasetError
			require.True(t, errors.As(err, &de), "typed error, got %v", err)
			assert.Equal(t, "f.jsonl", de.File)
			assert.Equal(t, c.line, de.Line)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

func FuzzParseDataset(f *testing.F) {
	f.Add([]byte("{\"messages\":[{\"role\":\"user\",\"content\":\"a\"}],\"max_tokens\":3}\n{\"prompt\":\"b\"}\n"))
	f.Add([]byte("\r\n{\"prompt\":\"a\"}\r\n"))
	f.Add([]byte(`{"prompt":"a","max_tokens":1e3}`))
	f.Add([]byte(`{"messages":[{"role":"user","content":"\u00e9"}]} {}`))
	f.Add([]byte("{\"prompt\":\"\x00\"}\n[]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		ds, err := xk6ext.ParseDataset("fuzz.jsonl", data)
		if err != nil {
			var de *xk6ext.DatasetError
			if !errors.As(err, &de) {
				t.Fatalf("untyped error %v", err)
			}
			if de.Line < 0 {
				t.Fatalf("bad line %d", de.Line)
			}
			return
		}
		if ds.Len() == 0 {
			t.Fatal("success with no items")
		}
		// Every kept item is a valid line on its own.
		for _, it := range ds.Items {
			if _, err := xk6ext.ParseDataset("item", it); err != nil {
				t.Fatalf("kept item %q does not parse alone: %v", it, err)
			}
		}
	})
}

func TestExampleDatasetParses(t *testing.T) {
	// The example dataset shipped with the scripts must parse.
	data, err := os.ReadFile(filepath.Join("..", "examples", "data", "prompts.jsonl"))
	require.NoError(t, err)
	ds, err := xk6ext.ParseDataset("prompts.jsonl", data)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, ds.Len(), 20)
}
