package vm

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"

	"github.com/tokenstorm/tokenstorm/xk6ext"
)

// Config is what a Program needs from the runner. Every field is optional; the zero
// Config runs scripts with an empty __ENV, a private metric registry, samples dropped
// and logs discarded.
type Config struct {
	// Env becomes __ENV: the process environment plus -e values (the caller builds it).
	Env map[string]string
	// Modules are extra native modules by import specifier, e.g. "k6/x/tokenstorm".
	Modules map[string]ModuleFactory
	// Registry declares metrics. When nil the Program keeps a private registry.
	Registry MetricRegistry
	// Emit receives samples, with their tags already merged. It is called from VU
	// goroutines and from module goroutines, concurrently. It must not retain the slice
	// after returning; the Tags maps are handed over and never mutated afterwards (maps
	// of samples without tags of their own are shared between samples).
	Emit func(samples []xk6ext.Sample)
	// Logger receives console.* output and is handed to modules. Nil discards.
	Logger *slog.Logger
	// Tags are run-level tags (options.tags), added to every sample.
	Tags map[string]string
	// Abort is called by exec.test.abort(reason). The VU that called it stops its
	// iteration with an *AbortError; stopping the rest of the run is the caller's job.
	Abort func(reason string)
	// ScenarioInfo, when set, answers exec.scenario.startTime and .progress. Without it
	// startTime is when this Program first saw an iteration of the scenario and progress
	// throws a "not supported" error.
	ScenarioInfo func(scenario string) (start time.Time, progress float64)
	// Instance, when set, answers exec.instance.*; without it those properties throw a
	// "not supported" error rather than returning made-up numbers.
	Instance func() InstanceInfo
}

// InstanceInfo is what k6/execution's exec.instance exposes.
type InstanceInfo struct {
	IterationsInterrupted  int64
	IterationsCompleted    int64
	VUsActive              int64
	VUsInitialized         int64
	CurrentTestRunDuration time.Duration
}

// MetricRegistry declares metrics; js/metrics.Registry implements it.
type MetricRegistry interface {
	NewMetric(name string, typ xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error)
}

// ModuleFactory builds the exports of a native module for one VU. It is called once per
// VU, on the VU goroutine, while the VU is in the init context, before the script's own
// top-level code runs.
type ModuleFactory func(h xk6ext.Host) (Exports, error)

// Exports is what a native module offers to `import`. Named values become named exports;
// Default becomes the default export (when nil, the default export is an object holding
// the named ones, as k6 does for its own modules). Values are converted with
// sobek's Runtime.ToValue; Go struct fields and methods are seen from JS through the
// field name mapper described in the package documentation.
type Exports struct {
	Default any
	Named   map[string]any
}

// Program is a compiled script: its entry module and every local module it imports,
// parsed and compiled once and shared read-only by all VUs. It is safe for concurrent
// use; each VU gets its own runtime.
type Program struct {
	cfg     Config
	path    string // absolute path of the entry module
	entry   *sobek.SourceTextModuleRecord
	paths   map[sobek.ModuleRecord]string // absolute path of each source module
	files   map[string]*sobek.SourceTextModuleRecord
	natives map[string]*nativeModule // by specifier, only those the script imports
	order   []*nativeModule          // natives in first-import order
	names   []string                 // exported names of the entry module

	reg     MetricRegistry
	builtin builtinMetrics
	logger  *slog.Logger

	initMu   sync.Mutex
	initVUs  map[*sobek.Runtime]*VU // VUs whose module graph is being evaluated
	fileMu   sync.Mutex
	fileData map[string][]byte // open() cache, by absolute path
	shared   sharedStore
	scenMu   sync.Mutex
	scenSeen map[string]time.Time
}

type builtinMetrics struct {
	checks, iterations, iterationDuration, groupDuration *xk6ext.Metric
}

// Compile reads the entry file and every local module it imports (transitively),
// parses and compiles them, and checks every import specifier. Nothing runs. Problems
// in the script are *ScriptError values with file:line:col.
func Compile(path string, cfg Config) (*Program, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("vm: %w", err)
	}
	p := &Program{
		cfg:      cfg,
		path:     abs,
		paths:    make(map[sobek.ModuleRecord]string),
		files:    make(map[string]*sobek.SourceTextModuleRecord),
		natives:  make(map[string]*nativeModule),
		initVUs:  make(map[*sobek.Runtime]*VU),
		fileData: make(map[string][]byte),
		scenSeen: make(map[string]time.Time),
		reg:      cfg.Registry,
		logger:   cfg.Logger,
	}
	if p.reg == nil {
		p.reg = newLocalRegistry()
	}
	if p.logger == nil {
		p.logger = slog.New(slog.DiscardHandler)
	}
	if err := p.declareBuiltins(); err != nil {
		return nil, err
	}
	if _, err := p.load(abs, nil); err != nil {
		return nil, err
	}
	p.entry = p.files[abs]
	if err := p.entry.Link(); err != nil {
		return nil, errorFromParse(err)
	}
	p.entry.GetExportedNames(func(names []string) { p.names = append([]string(nil), names...) })
	sort.Strings(p.names)
	return p, nil
}

// Path is the absolute path of the entry script.
func (p *Program) Path() string { return p.path }

func (p *Program) declareBuiltins() error {
	var err error
	decl := func(name string, t xk6ext.MetricType, vt xk6ext.ValueType) *xk6ext.Metric {
		if err != nil {
			return nil
		}
		var m *xk6ext.Metric
		m, err = p.reg.NewMetric(name, t, vt)
		return m
	}
	p.builtin.checks = decl("checks", xk6ext.Rate, xk6ext.Default)
	p.builtin.iterations = decl("iterations", xk6ext.Counter, xk6ext.Default)
	p.builtin.iterationDuration = decl("iteration_duration", xk6ext.Trend, xk6ext.Time)
	p.builtin.groupDuration = decl("group_duration", xk6ext.Trend, xk6ext.Time)
	if err != nil {
		return fmt.Errorf("vm: declaring built-in metrics: %w", err)
	}
	return nil
}

// importRef is one import specifier found in a module, with its position for errors.
type importRef struct {
	spec string
	idx  int
}

// load parses the module at abs and, recursively, the local modules it imports. from is
// the importing reference, for error positions when the file cannot be read.
func (p *Program) load(abs string, from *ScriptError) (*sobek.SourceTextModuleRecord, error) {
	if m, ok := p.files[abs]; ok {
		return m, nil // also breaks import cycles: the record exists before recursing
	}
	src, err := os.ReadFile(abs)
	if err != nil {
		if from != nil {
			from.Message = "cannot read module: " + err.Error()
			from.cause = err
			return nil, from
		}
		return nil, fmt.Errorf("vm: reading script: %w", err)
	}
	body, err := parser.ParseFile(nil, abs, string(src), 0, parser.IsModule, parser.WithDisableSourceMaps)
	if err != nil {
		return nil, errorFromParse(err)
	}
	rec, err := sobek.ModuleFromAST(body, p.resolve)
	if err != nil {
		se := errorFromParse(err)
		if se.File == "" {
			se.File = abs
		}
		return nil, se
	}
	p.files[abs] = rec
	p.paths[rec] = abs
	for _, ref := range importsOf(body) {
		at := func() *ScriptError {
			pos := body.File.Position(ref.idx - body.File.Base())
			return &ScriptError{File: abs, Line: pos.Line, Column: pos.Column}
		}
		kind, target := classify(filepath.Dir(abs), ref.spec, p.cfg.Modules)
		switch kind {
		case specCore, specModule:
			if _, ok := p.natives[ref.spec]; !ok {
				nm := p.newNative(ref.spec, kind)
				p.natives[ref.spec] = nm
				p.order = append(p.order, nm)
			}
		case specFile:
			if _, err := p.load(target, at()); err != nil {
				return nil, err
			}
		default:
			se := at()
			se.Message = target // classify's explanation
			return nil, se
		}
	}
	return rec, nil
}

// importsOf lists the module specifiers a module imports or re-exports from.
func importsOf(body *ast.Program) []importRef {
	var out []importRef
	for _, st := range body.Body {
		switch d := st.(type) {
		case *ast.ImportDeclaration:
			spec := d.ModuleSpecifier
			if d.FromClause != nil {
				spec = d.FromClause.ModuleSpecifier
			}
			out = append(out, importRef{spec: spec.String(), idx: int(d.Idx)})
		case *ast.ExportDeclaration:
			if d.FromClause != nil {
				out = append(out, importRef{spec: d.FromClause.ModuleSpecifier.String(), idx: int(d.Idx)})
			}
		}
	}
	return out
}

// resolve is sobek's HostResolveImportedModule. Every specifier was checked and loaded
// by Compile, so this only looks records up; it is safe for concurrent use because the
// maps are read-only after Compile.
func (p *Program) resolve(ref any, spec string) (sobek.ModuleRecord, error) {
	if nm, ok := p.natives[spec]; ok {
		return nm, nil
	}
	dir := filepath.Dir(p.path)
	if rec, ok := ref.(sobek.ModuleRecord); ok {
		if path, ok := p.paths[rec]; ok {
			dir = filepath.Dir(path)
		}
	}
	kind, target := classify(dir, spec, p.cfg.Modules)
	if kind != specFile {
		return nil, fmt.Errorf("%s", target)
	}
	if rec, ok := p.files[target]; ok {
		return rec, nil
	}
	return nil, fmt.Errorf("module %q was not loaded", spec)
}

type specKind int

const (
	specUnsupported specKind = iota
	specCore
	specModule
	specFile
)

// coreModules are the k6 modules tokenstorm implements natively.
var coreModules = map[string]bool{"k6": true, "k6/metrics": true, "k6/execution": true, "k6/data": true}

// classify decides what an import specifier names. For files it returns the absolute
// path; for unsupported specifiers an explanation for the user.
func classify(dir, spec string, modules map[string]ModuleFactory) (specKind, string) {
	switch {
	case coreModules[spec]:
		return specCore, spec
	case modules[spec] != nil:
		return specModule, spec
	case spec == "":
		return specUnsupported, "empty module specifier"
	case strings.HasPrefix(spec, "./"), strings.HasPrefix(spec, "../"), strings.HasPrefix(spec, "/"),
		strings.HasPrefix(spec, "file://"):
		path, err := resolvePath(dir, spec)
		if err != nil {
			return specUnsupported, err.Error()
		}
		return specFile, path
	case spec == "k6" || strings.HasPrefix(spec, "k6/"):
		return specUnsupported, fmt.Sprintf("module %q is not supported by tokenstorm (supported: %s)", spec, supportedList(modules))
	case strings.Contains(spec, "://"):
		return specUnsupported, fmt.Sprintf("remote module %q is not supported by tokenstorm: import local files with ./ or ../", spec)
	}
	return specUnsupported, fmt.Sprintf("module %q is not supported by tokenstorm: import local files with ./ or ../ (supported modules: %s)", spec, supportedList(modules))
}

func supportedList(modules map[string]ModuleFactory) string {
	names := []string{"k6", "k6/data", "k6/execution", "k6/metrics"}
	for n := range modules {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// resolvePath turns a local specifier or open() argument into an absolute, cleaned
// path: relative ones against dir, file:// URLs by their path.
func resolvePath(dir, spec string) (string, error) {
	if strings.HasPrefix(spec, "file://") {
		spec = strings.TrimPrefix(spec, "file://")
		if !strings.HasPrefix(spec, "/") {
			return "", fmt.Errorf("file URL %q must be absolute", "file://"+spec)
		}
	}
	if spec == "" {
		return "", fmt.Errorf("empty path")
	}
	if strings.IndexByte(spec, 0) >= 0 {
		return "", fmt.Errorf("path %q contains a NUL byte", spec)
	}
	if filepath.IsAbs(spec) {
		return filepath.Clean(spec), nil
	}
	return filepath.Join(dir, spec), nil
}

// vuFor returns the VU whose module graph is being evaluated on rt.
func (p *Program) vuFor(rt *sobek.Runtime) *VU {
	p.initMu.Lock()
	defer p.initMu.Unlock()
	return p.initVUs[rt]
}

func (p *Program) setInitVU(rt *sobek.Runtime, vu *VU) {
	p.initMu.Lock()
	defer p.initMu.Unlock()
	if vu == nil {
		delete(p.initVUs, rt)
		return
	}
	p.initVUs[rt] = vu
}

// readFile serves open(): files are read once per Program and shared.
func (p *Program) readFile(path string) ([]byte, error) {
	p.fileMu.Lock()
	defer p.fileMu.Unlock()
	if b, ok := p.fileData[path]; ok {
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p.fileData[path] = b
	return b, nil
}

// scenarioStart answers exec.scenario.startTime.
func (p *Program) scenarioStart(name string, now time.Time) time.Time {
	if p.cfg.ScenarioInfo != nil {
		t, _ := p.cfg.ScenarioInfo(name)
		return t
	}
	p.scenMu.Lock()
	defer p.scenMu.Unlock()
	t, ok := p.scenSeen[name]
	if !ok {
		p.scenSeen[name] = now
		t = now
	}
	return t
}

// localRegistry is used when Config.Registry is nil.
type localRegistry struct {
	mu sync.Mutex
	m  map[string]*xk6ext.Metric
}

func newLocalRegistry() *localRegistry { return &localRegistry{m: make(map[string]*xk6ext.Metric)} }

func (r *localRegistry) NewMetric(name string, t xk6ext.MetricType, vt xk6ext.ValueType) (*xk6ext.Metric, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.m[name]; ok {
		if m.Type != t || m.ValueType != vt {
			return nil, fmt.Errorf("metric %q already declared as %s (%s)", name, m.Type, m.ValueType)
		}
		return m, nil
	}
	m := &xk6ext.Metric{Name: name, Type: t, ValueType: vt}
	r.m[name] = m
	return m, nil
}
