package xk6ext

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/grafana/sobek"
)

// OptionError reports an invalid argument given to the module from JavaScript. Field is
// the option's path as the script wrote it ("timeout", "slo.ttft", "messages[2].content"),
// so the exception a script sees names what to fix.
type OptionError struct {
	Func   string // "Client", "chat", "mock", "dataset", "lognormal", …
	Field  string
	Reason string
}

func (e *OptionError) Error() string {
	if e.Field == "" {
		return "tokenstorm: " + e.Func + ": " + e.Reason
	}
	return "tokenstorm: " + e.Func + ": option " + strconv.Quote(e.Field) + ": " + e.Reason
}

// throw raises err as a JavaScript exception: a TypeError for an invalid argument, an
// Error otherwise. Go panics carrying a sobek value are how a native function throws.
func throw(rt *sobek.Runtime, err error) {
	panic(jsError(rt, err))
}

func jsError(rt *sobek.Runtime, err error) *sobek.Object {
	var oe *OptionError
	if errors.As(err, &oe) {
		return rt.NewTypeError(err.Error())
	}
	if ctor, ok := rt.Get("Error").(*sobek.Object); ok {
		if o, cerr := rt.New(ctor, rt.ToValue(err.Error())); cerr == nil {
			return o
		}
	}
	return rt.NewGoError(err)
}

// optReader walks a JS options object, recording which keys were read so unknown keys
// (usually typos such as "max_token") are rejected instead of silently ignored.
type optReader struct {
	rt     *sobek.Runtime
	fn     string
	prefix string
	obj    *sobek.Object
	seen   map[string]bool
}

// newOptReader returns a reader over v, which must be undefined, null or an object.
func newOptReader(rt *sobek.Runtime, fn, prefix string, v sobek.Value) (*optReader, error) {
	r := &optReader{rt: rt, fn: fn, prefix: prefix, seen: map[string]bool{}}
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return r, nil
	}
	obj, ok := v.(*sobek.Object)
	if !ok || obj.ClassName() == "Array" || obj.ClassName() == "Function" {
		return nil, &OptionError{Func: fn, Field: strings.TrimSuffix(prefix, "."), Reason: "must be an object"}
	}
	r.obj = obj
	return r, nil
}

func (r *optReader) errf(key, format string, args ...any) error {
	return &OptionError{Func: r.fn, Field: r.prefix + key, Reason: fmt.Sprintf(format, args...)}
}

// get returns the value of key, or nil when it is absent, undefined or null.
func (r *optReader) get(key string) sobek.Value {
	r.seen[key] = true
	if r.obj == nil {
		return nil
	}
	v := r.obj.Get(key)
	if v == nil || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return nil
	}
	return v
}

// keys lists the object's own enumerable keys.
func (r *optReader) keys() []string {
	if r.obj == nil {
		return nil
	}
	return r.obj.Keys()
}

// unknown returns an error for the first key that was never read.
func (r *optReader) unknown() error {
	for _, k := range r.keys() {
		if !r.seen[k] {
			return r.errf(k, "unknown option")
		}
	}
	return nil
}

func (r *optReader) str(key, def string) (string, error) {
	v := r.get(key)
	if v == nil {
		return def, nil
	}
	s, ok := v.Export().(string)
	if !ok {
		return "", r.errf(key, "must be a string, got %s", typeName(v))
	}
	return s, nil
}

func (r *optReader) boolean(key string, def bool) (bool, error) {
	v := r.get(key)
	if v == nil {
		return def, nil
	}
	b, ok := v.Export().(bool)
	if !ok {
		return false, r.errf(key, "must be a boolean, got %s", typeName(v))
	}
	return b, nil
}

// number reads a finite number.
func (r *optReader) number(key string, def float64) (float64, bool, error) {
	v := r.get(key)
	if v == nil {
		return def, false, nil
	}
	f, ok := toFloat(v.Export())
	if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false, r.errf(key, "must be a finite number, got %s", typeName(v))
	}
	return f, true, nil
}

// integer reads an integral number within [lo, hi].
func (r *optReader) integer(key string, def, lo, hi int64) (int64, bool, error) {
	f, set, err := r.number(key, float64(def))
	if err != nil || !set {
		return def, set, err
	}
	if f != math.Trunc(f) {
		return 0, false, r.errf(key, "must be an integer, got %v", f)
	}
	if f < float64(lo) || f > float64(hi) {
		return 0, false, r.errf(key, "must be between %d and %d, got %v", lo, hi, f)
	}
	return int64(f), true, nil
}

// duration reads a k6-style duration: a string Go's time.ParseDuration accepts ("30s",
// "500ms", "1m30s") or a number of milliseconds. Negative durations are rejected.
func (r *optReader) duration(key string) (time.Duration, bool, error) {
	v := r.get(key)
	if v == nil {
		return 0, false, nil
	}
	d, err := parseDuration(v.Export())
	if err != nil {
		return 0, false, r.errf(key, "%v", err)
	}
	return d, true, nil
}

// parseDuration converts an exported JS value to a duration: strings in Go syntax or
// numbers of milliseconds, as k6 options accept.
func parseDuration(v any) (time.Duration, error) {
	var d time.Duration
	switch x := v.(type) {
	case string:
		p, err := time.ParseDuration(strings.TrimSpace(x))
		if err != nil {
			// k6 also accepts a bare number in a string as milliseconds.
			f, ferr := strconv.ParseFloat(strings.TrimSpace(x), 64)
			if ferr != nil {
				return 0, fmt.Errorf("invalid duration %q (want e.g. \"30s\", \"500ms\" or a number of milliseconds)", x)
			}
			p = time.Duration(f * float64(time.Millisecond))
		}
		d = p
	default:
		f, ok := toFloat(v)
		if !ok || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("invalid duration %v (want e.g. \"30s\", \"500ms\" or a number of milliseconds)", v)
		}
		if f*float64(time.Millisecond) > math.MaxInt64 {
			return 0, fmt.Errorf("duration %v ms is too long", f)
		}
		d = time.Duration(f * float64(time.Millisecond))
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %v", d)
	}
	return d, nil
}

// stringMap reads an object whose values are strings (tags, headers). Numbers and
// booleans are converted as k6 does for tags.
func (r *optReader) stringMap(key string) (map[string]string, error) {
	v := r.get(key)
	if v == nil {
		return nil, nil
	}
	obj, ok := v.(*sobek.Object)
	if !ok || obj.ClassName() == "Array" {
		return nil, r.errf(key, "must be an object of strings, got %s", typeName(v))
	}
	keys := obj.Keys()
	m := make(map[string]string, len(keys))
	for _, k := range keys {
		e := obj.Get(k)
		switch x := e.Export().(type) {
		case string:
			m[k] = x
		case bool, int64, float64:
			m[k] = e.String()
		default:
			return nil, r.errf(key+"."+k, "must be a string, got %s", typeName(e))
		}
	}
	return m, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	}
	return 0, false
}

// typeName names a JS value's type for error messages.
func typeName(v sobek.Value) string {
	if v == nil || sobek.IsUndefined(v) {
		return "undefined"
	}
	if sobek.IsNull(v) {
		return "null"
	}
	if o, ok := v.(*sobek.Object); ok {
		switch o.ClassName() {
		case "Array":
			return "array"
		case "Function":
			return "function"
		}
		return "object"
	}
	switch v.Export().(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	}
	return v.String()
}
