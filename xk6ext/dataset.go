package xk6ext

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"sync/atomic"
)

// DatasetError reports a line of a JSONL dataset that cannot be used, as file:line.
type DatasetError struct {
	File string
	Line int // 1-based; 0 when the error is about the whole file
	Err  error
}

func (e *DatasetError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("tokenstorm: dataset %s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("tokenstorm: dataset %s:%d: %v", e.File, e.Line, e.Err)
}

func (e *DatasetError) Unwrap() error { return e.Err }

// DefaultMaxDatasetLine bounds one JSONL line, so a file without newlines cannot make the
// parser buffer without limit.
const DefaultMaxDatasetLine = 4 << 20

// Dataset is a parsed JSONL file of requests, shared read-only by every VU of a run. Each
// item keeps its raw JSON, which a VU parses into its own runtime when the script asks for
// it: JS objects cannot be shared across runtimes, and a copy per use keeps scripts from
// changing what other VUs see.
type Dataset struct {
	File  string
	Items []json.RawMessage
	// next is the global cursor of the sequential order, shared by all VUs.
	next atomic.Uint64
}

// ParseDataset parses JSONL: one JSON object per line with "messages" (an array of
// {role, content} objects with string values) or "prompt" (a string), optionally
// "max_tokens" (a non-negative integer) and any other request fields. Blank lines are
// skipped. The first bad line is reported as a *DatasetError naming name:line.
func ParseDataset(name string, data []byte) (*Dataset, error) {
	ds := &Dataset{File: name}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), DefaultMaxDatasetLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := validateItem(b); err != nil {
			return nil, &DatasetError{File: name, Line: line, Err: err}
		}
		ds.Items = append(ds.Items, json.RawMessage(bytes.Clone(b)))
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", DefaultMaxDatasetLine)
		}
		return nil, &DatasetError{File: name, Line: line + 1, Err: err}
	}
	if len(ds.Items) == 0 {
		return nil, &DatasetError{File: name, Err: errors.New("no items (want one JSON object per line)")}
	}
	return ds, nil
}

func validateItem(b []byte) error {
	if b[0] != '{' {
		return errors.New("want a JSON object")
	}
	var it struct {
		Messages  *json.RawMessage `json:"messages"`
		Prompt    *json.RawMessage `json:"prompt"`
		MaxTokens *json.RawMessage `json:"max_tokens"`
	}
	if err := json.Unmarshal(b, &it); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	switch {
	case it.Messages == nil && it.Prompt == nil:
		return errors.New(`want "messages" or "prompt"`)
	case it.Messages != nil && it.Prompt != nil:
		return errors.New(`give "messages" or "prompt", not both`)
	case it.Messages != nil:
		var msgs []map[string]json.RawMessage
		if err := json.Unmarshal(*it.Messages, &msgs); err != nil || msgs == nil {
			return errors.New(`"messages" must be an array of objects`)
		}
		if len(msgs) == 0 {
			return errors.New(`"messages" is empty`)
		}
		for i, m := range msgs {
			for _, k := range [...]string{"role", "content"} {
				var s string
				raw, ok := m[k]
				if !ok || json.Unmarshal(raw, &s) != nil {
					return fmt.Errorf(`"messages[%d].%s" must be a string`, i, k)
				}
			}
		}
	default:
		var s string
		if json.Unmarshal(*it.Prompt, &s) != nil {
			return errors.New(`"prompt" must be a string`)
		}
	}
	if it.MaxTokens != nil {
		var f float64
		if json.Unmarshal(*it.MaxTokens, &f) != nil || f < 0 || f != math.Trunc(f) || f > math.MaxInt32 {
			return errors.New(`"max_tokens" must be a non-negative integer`)
		}
	}
	return nil
}

// Len is the number of items.
func (d *Dataset) Len() int { return len(d.Items) }

// Order picks item indexes. Implementations other than the sequential one are per VU and
// not goroutine-safe.
type Order interface {
	Next() int
}

// sequential walks the items in file order with a cursor shared by every VU, so N VUs
// together cover the file once before wrapping around, as a shared-iterations run would.
type sequential struct{ ds *Dataset }

func (s sequential) Next() int { return int((s.ds.next.Add(1) - 1) % uint64(len(s.ds.Items))) }

type uniformOrder struct {
	n   int
	rng *rand.Rand
}

func (u *uniformOrder) Next() int { return u.rng.IntN(u.n) }

// Zipf draws rank k (1-based, item k-1) with probability k^-S / Σ j^-S, for any S > 0
// (math/rand's Zipf needs S > 1; prompt popularity is usually fitted with S ≤ 1). The
// cumulative table is shared; each draw is one binary search.
type Zipf struct {
	cdf []float64 // cdf[k-1] = P(rank ≤ k); shared read-only
	rng *rand.Rand
}

// NewZipfCDF returns the cumulative distribution over n ranks with exponent s.
func NewZipfCDF(n int, s float64) []float64 {
	cdf := make([]float64, n)
	var sum float64
	for k := 1; k <= n; k++ {
		sum += math.Pow(float64(k), -s)
		cdf[k-1] = sum
	}
	for i := range cdf {
		cdf[i] /= sum
	}
	cdf[n-1] = 1
	return cdf
}

// Next returns the index (rank−1) of the drawn item.
func (z *Zipf) Next() int {
	u := z.rng.Float64()
	return sort.SearchFloat64s(z.cdf, u) // first k with cdf[k] ≥ u; u < 1 so always < n
}
