package xk6ext

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/llm"
)

// ImportPath is the name scripts import the module by.
const ImportPath = "k6/x/tokenstorm"

// Exports is what a module instance gives the script, in k6's shape: Default is the
// default export, Named the named ones (`import storm, { Client } from 'k6/x/tokenstorm'`).
// The values are sobek values built on the VU's runtime.
type Exports struct {
	Default any
	Named   map[string]any
}

// RootModule is the module's state for one test run, shared by all VUs: the embedded mock
// (started at most once), parsed datasets, and the clients to close at the end. Create
// one per run with NewRootModule and Close it when the run is over.
type RootModule struct {
	ctx    context.Context // lives until Close; parent of the mock server
	cancel context.CancelFunc

	// inflight joins the goroutines of async requests: Close cancels ctx, which ends
	// them, and waits for them.
	inflight sync.WaitGroup

	mu       sync.Mutex
	closed   bool
	datasets map[string]*Dataset   // by absolute path
	zipf     map[zipfKey][]float64 // cumulative tables by dataset and exponent
	closers  []func()              // clients, closed by Close
	mock     mockState

	noConnectionReuse bool
	insecureTLS       bool
}

// Option configures a RootModule with run-wide settings that k6 takes as test options.
type Option func(*RootModule)

// WithNoConnectionReuse makes every Client open a new connection per request, whatever
// its connectionReuse option says: k6's noConnectionReuse option.
func WithNoConnectionReuse() Option { return func(r *RootModule) { r.noConnectionReuse = true } }

// WithInsecureSkipTLSVerify makes every Client accept any TLS certificate: k6's
// insecureSkipTLSVerify option, for servers with self-signed certificates.
func WithInsecureSkipTLSVerify() Option { return func(r *RootModule) { r.insecureTLS = true } }

type zipfKey struct {
	ds *Dataset
	s  float64
}

// NewRootModule returns the state for one test run.
func NewRootModule(opts ...Option) *RootModule {
	ctx, cancel := context.WithCancel(context.Background())
	r := &RootModule{
		ctx:      ctx,
		cancel:   cancel,
		datasets: map[string]*Dataset{},
		zipf:     map[zipfKey][]float64{},
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

// ErrClosed is returned for work asked of a RootModule after Close.
var ErrClosed = errors.New("tokenstorm: module closed (the test run is over)")

// Close ends the run's module state: it cancels async requests still in flight and
// waits for their goroutines, closes every client's idle connections and stops the
// embedded mock. It is safe to call twice; afterwards the module refuses new clients,
// mocks and async requests.
func (r *RootModule) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	closers := r.closers
	r.closers = nil
	r.mu.Unlock()
	r.cancel()
	r.inflight.Wait()
	for _, c := range closers {
		c()
	}
	return r.closeMock()
}

// spawn runs f on a goroutine joined by Close, with a context that ends when parent
// ends or the module closes.
func (r *RootModule) spawn(parent context.Context, f func(ctx context.Context)) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.inflight.Add(1)
	r.mu.Unlock()
	ctx, cancel := context.WithCancel(parent)
	stop := context.AfterFunc(r.ctx, cancel)
	go func() {
		defer r.inflight.Done()
		defer cancel()
		defer stop()
		f(ctx)
	}()
	return nil
}

// addCloser registers cleanup to run at Close; it fails once the module is closed.
func (r *RootModule) addCloser(f func()) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrClosed
	}
	r.closers = append(r.closers, f)
	return nil
}

// loadDataset parses path once per run; later calls share the result.
func (r *RootModule) loadDataset(path string) (*Dataset, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if ds, ok := r.datasets[path]; ok {
		return ds, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &DatasetError{File: path, Err: err}
	}
	ds, err := ParseDataset(path, data)
	if err != nil {
		return nil, err
	}
	r.datasets[path] = ds
	return ds, nil
}

func (r *RootModule) zipfCDF(ds *Dataset, s float64) []float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := zipfKey{ds, s}
	if c, ok := r.zipf[k]; ok {
		return c
	}
	c := NewZipfCDF(ds.Len(), s)
	r.zipf[k] = c
	return c
}

// ModuleInstance is the module as one VU sees it. It is used only on that VU's
// goroutine, except for the request goroutines of the async calls, which touch only
// goroutine-safe state.
type ModuleInstance struct {
	root    *RootModule
	host    Host
	rt      *sobek.Runtime
	metrics *Recorder
	err     error // from declaring the metrics; thrown by every call that would emit
	exports *sobek.Object
	clients map[string]*llm.Client // by configuration, reused across iterations
}

// NewModuleInstance builds the module for one VU. The host calls it in the VU's init
// context, on the VU goroutine, when the script first imports the module; it declares
// the module's metrics there (k6 allows declarations only in init). A failure to declare
// them is reported by Instantiate, and thrown by any call that would emit.
func (r *RootModule) NewModuleInstance(h Host) *ModuleInstance {
	m := &ModuleInstance{root: r, host: h, rt: h.Runtime()}
	m.metrics, m.err = NewRecorder(h.NewMetric)
	m.exports = m.buildExports()
	return m
}

// Instantiate is NewModuleInstance followed by Exports, with the metric declaration
// error returned rather than deferred: the shape of a host's module factory.
func (r *RootModule) Instantiate(h Host) (Exports, error) {
	m := r.NewModuleInstance(h)
	if m.err != nil {
		return Exports{}, m.err
	}
	return m.Exports(), nil
}

// Exports returns the module's exports: the default object and the same members as
// named exports.
func (m *ModuleInstance) Exports() Exports {
	named := make(map[string]any, len(m.exports.Keys()))
	for _, k := range m.exports.Keys() {
		named[k] = m.exports.Get(k)
	}
	return Exports{Default: m.exports, Named: named}
}

func (m *ModuleInstance) buildExports() *sobek.Object {
	o := m.rt.NewObject()
	m.set(o, "dataset", m.jsDataset)
	m.set(o, "lognormal", m.jsLognormal)
	m.set(o, "uniform", m.jsUniform)
	m.set(o, "constant", m.jsConstant)
	m.addClient(o)
	m.addMock(o)
	return o
}

func (m *ModuleInstance) set(o *sobek.Object, name string, fn func(sobek.FunctionCall) sobek.Value) {
	if err := o.Set(name, fn); err != nil {
		panic(err) // setting a property on a fresh ordinary object cannot fail
	}
}

// throw raises err as a JS exception from the current call.
func (m *ModuleInstance) throw(err error) { throw(m.rt, err) }

// vuSeed derives a per-VU seed: the script's seed when given (mixed with the VU id so
// VUs draw different but reproducible sequences), else a random one.
func (m *ModuleInstance) vuSeed(seed int64, set bool) uint64 {
	if !set {
		return rand.Uint64()
	}
	return splitmix(uint64(seed)) ^ uint64(m.host.State().VUIDInTest)
}

// resolvePath resolves a script-given path the way k6's open() does: relative to the
// directory of the script that makes the call (found from the JS call stack), falling
// back to the working directory when the caller's file is unknown.
func (m *ModuleInstance) resolvePath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	for _, f := range m.rt.CaptureCallStack(0, nil) {
		name := strings.TrimPrefix(f.Position().Filename, "file://")
		if filepath.IsAbs(name) {
			return filepath.Join(filepath.Dir(name), p)
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return abs
}

// jsDataset implements storm.dataset(path, {order, s, seed}).
func (m *ModuleInstance) jsDataset(call sobek.FunctionCall) sobek.Value {
	const fn = "dataset"
	path, ok := call.Argument(0).Export().(string)
	if !ok || path == "" {
		m.throw(&OptionError{Func: fn, Field: "path", Reason: "must be a non-empty string"})
	}
	or, err := newOptReader(m.rt, fn, "", call.Argument(1))
	if err != nil {
		m.throw(err)
	}
	order, err := or.str("order", "sequential")
	if err != nil {
		m.throw(err)
	}
	s, sSet, err := or.number("s", 1)
	if err != nil {
		m.throw(err)
	}
	seed, seedSet, err := or.integer("seed", 0, -1<<53, 1<<53)
	if err != nil {
		m.throw(err)
	}
	if err := or.unknown(); err != nil {
		m.throw(err)
	}
	if sSet && order != "zipf" {
		m.throw(or.errf("s", "only applies to order 'zipf'"))
	}
	if seedSet && order == "sequential" {
		m.throw(or.errf("seed", "only applies to orders 'random' and 'zipf'"))
	}
	if !(s > 0) {
		m.throw(or.errf("s", "must be positive, got %v", s))
	}
	ds, err := m.root.loadDataset(m.resolvePath(path))
	if err != nil {
		m.throw(err)
	}
	var o Order
	switch order {
	case "sequential":
		o = sequential{ds}
	case "random":
		o = &uniformOrder{n: ds.Len(), rng: newRand(m.vuSeed(seed, seedSet))}
	case "zipf":
		o = &Zipf{cdf: m.root.zipfCDF(ds, s), rng: newRand(m.vuSeed(seed, seedSet))}
	default:
		m.throw(or.errf("order", "must be 'sequential', 'random' or 'zipf', got %q", order))
	}
	return m.datasetObject(ds, o)
}

func (m *ModuleInstance) datasetObject(ds *Dataset, o Order) sobek.Value {
	obj := m.rt.NewObject()
	parse, ok := sobek.AssertFunction(m.rt.Get("JSON").ToObject(m.rt).Get("parse"))
	if !ok {
		m.throw(errors.New("tokenstorm: JSON.parse is not available"))
	}
	item := func(i int) sobek.Value {
		v, err := parse(sobek.Undefined(), m.rt.ToValue(string(ds.Items[i])))
		if err != nil {
			m.throw(err)
		}
		return v
	}
	_ = obj.DefineDataProperty("length", m.rt.ToValue(ds.Len()), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	_ = obj.DefineDataProperty("path", m.rt.ToValue(ds.File), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	m.set(obj, "next", func(sobek.FunctionCall) sobek.Value { return item(o.Next()) })
	m.set(obj, "at", func(call sobek.FunctionCall) sobek.Value {
		f, ok := toFloat(call.Argument(0).Export())
		if !ok || f != float64(int64(f)) {
			m.throw(&OptionError{Func: "dataset.at", Field: "index", Reason: "must be an integer"})
		}
		i := int(f)
		if i < 0 {
			i += ds.Len() // as Array.prototype.at
		}
		if i < 0 || i >= ds.Len() {
			return sobek.Undefined()
		}
		return item(i)
	})
	return obj
}

// samplerObject wraps s as a JS object with sample().
func (m *ModuleInstance) samplerObject(s Sampler) sobek.Value {
	obj := m.rt.NewObject()
	m.set(obj, "sample", func(sobek.FunctionCall) sobek.Value { return m.rt.ToValue(s.Sample()) })
	return obj
}

func (m *ModuleInstance) jsLognormal(call sobek.FunctionCall) sobek.Value {
	const fn = "lognormal"
	or, err := newOptReader(m.rt, fn, "", call.Argument(0))
	if err != nil {
		m.throw(err)
	}
	median, medSet, err := or.number("median", 0)
	if err != nil {
		m.throw(err)
	}
	if !medSet {
		m.throw(or.errf("median", "is required"))
	}
	sigma, _, err := or.number("sigma", 1)
	if err != nil {
		m.throw(err)
	}
	lo, _, err := or.integer("min", 1, 0, 1<<53)
	if err != nil {
		m.throw(err)
	}
	hi, _, err := or.integer("max", 0, 0, 1<<53)
	if err != nil {
		m.throw(err)
	}
	seed, seedSet, err := or.integer("seed", 0, -1<<53, 1<<53)
	if err != nil {
		m.throw(err)
	}
	if err := or.unknown(); err != nil {
		m.throw(err)
	}
	l, err := NewLognormal(median, sigma, lo, hi, m.vuSeed(seed, seedSet))
	if err != nil {
		m.throw(&OptionError{Func: fn, Reason: err.Error()})
	}
	return m.samplerObject(l)
}

func (m *ModuleInstance) jsUniform(call sobek.FunctionCall) sobek.Value {
	const fn = "uniform"
	or, err := newOptReader(m.rt, fn, "", call.Argument(0))
	if err != nil {
		m.throw(err)
	}
	lo, loSet, err := or.integer("min", 0, 0, 1<<53)
	if err != nil {
		m.throw(err)
	}
	hi, hiSet, err := or.integer("max", 0, 0, 1<<53)
	if err != nil {
		m.throw(err)
	}
	if !loSet || !hiSet {
		m.throw(&OptionError{Func: fn, Reason: "min and max are required"})
	}
	seed, seedSet, err := or.integer("seed", 0, -1<<53, 1<<53)
	if err != nil {
		m.throw(err)
	}
	if err := or.unknown(); err != nil {
		m.throw(err)
	}
	u, err := NewUniform(lo, hi, m.vuSeed(seed, seedSet))
	if err != nil {
		m.throw(&OptionError{Func: fn, Reason: err.Error()})
	}
	return m.samplerObject(u)
}

func (m *ModuleInstance) jsConstant(call sobek.FunctionCall) sobek.Value {
	f, ok := toFloat(call.Argument(0).Export())
	if !ok || f < 0 || f != float64(int64(f)) {
		m.throw(&OptionError{Func: "constant", Field: "n", Reason: fmt.Sprintf("must be a non-negative integer, got %s", call.Argument(0).String())})
	}
	return m.samplerObject(Constant{N: int64(f)})
}
