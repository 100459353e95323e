package vm

import (
	"fmt"
	"sort"
	"sync"

	"github.com/grafana/sobek"
)

// nativeModule is the sobek module record of a Go module ("k6", "k6/x/tokenstorm"…).
// One record per Program is shared by all VUs; each VU has its own instance, built
// before the script's own code runs and looked up when sobek evaluates the record.
type nativeModule struct {
	p    *Program
	spec string
	core bool
	// static lists the exports of core modules, so a misspelt named import is a syntax
	// error at Compile time. Config modules are open: any name resolves, and their
	// names are learnt from the first instance (for `import * as ns`).
	static map[string]bool

	mu    sync.Mutex
	names []string
}

var _ sobek.ModuleRecord = (*nativeModule)(nil)

func (p *Program) newNative(spec string, kind specKind) *nativeModule {
	nm := &nativeModule{p: p, spec: spec, core: kind == specCore}
	if nm.core {
		nm.static = map[string]bool{"default": true}
		for _, n := range coreExportNames[spec] {
			nm.static[n] = true
		}
		nm.names = append([]string{"default"}, coreExportNames[spec]...)
	}
	return nm
}

// GetExportedNames implements sobek.ModuleRecord.
func (m *nativeModule) GetExportedNames(callback func([]string), _ ...sobek.ModuleRecord) bool {
	m.mu.Lock()
	names := append([]string(nil), m.names...)
	m.mu.Unlock()
	callback(names)
	return true
}

// ResolveExport implements sobek.ModuleRecord.
func (m *nativeModule) ResolveExport(name string, _ ...sobek.ResolveSetElement) (*sobek.ResolvedBinding, bool) {
	if m.static != nil && !m.static[name] {
		return nil, false
	}
	return &sobek.ResolvedBinding{Module: m, BindingName: name}, false
}

// Link implements sobek.ModuleRecord.
func (m *nativeModule) Link() error { return nil }

// Evaluate implements sobek.ModuleRecord: it hands sobek the VU's instance, built by
// NewVU before evaluation started.
func (m *nativeModule) Evaluate(rt *sobek.Runtime) *sobek.Promise {
	p, resolve, reject := rt.NewPromise()
	vu := m.p.vuFor(rt)
	var inst *nativeInstance
	if vu != nil {
		inst = vu.natives[m]
	}
	if inst == nil {
		_ = reject(fmt.Errorf("module %q evaluated outside VU initialisation", m.spec))
		return p
	}
	_ = resolve(inst)
	return p
}

func (m *nativeModule) learn(names []string) {
	if m.core {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.names == nil {
		m.names = names
	}
}

// nativeInstance is one VU's view of a native module.
type nativeInstance struct {
	values map[string]sobek.Value
}

// GetBindingValue implements sobek.ModuleInstance.
func (i *nativeInstance) GetBindingValue(name string) sobek.Value {
	if v, ok := i.values[name]; ok {
		return v
	}
	return sobek.Undefined()
}

// instantiate builds the VU's instance of m.
func (vu *VU) instantiate(m *nativeModule) (*nativeInstance, error) {
	var ex Exports
	if m.core {
		ex = vu.coreModule(m.spec)
	} else {
		var err error
		ex, err = vu.p.cfg.Modules[m.spec](vu)
		if err != nil {
			return nil, fmt.Errorf("module %q: %w", m.spec, err)
		}
	}
	inst := &nativeInstance{values: make(map[string]sobek.Value, len(ex.Named)+1)}
	names := make([]string, 0, len(ex.Named)+1)
	var def *sobek.Object
	if ex.Default == nil {
		def = vu.rt.NewObject()
	}
	for name, v := range ex.Named {
		val := vu.rt.ToValue(v)
		inst.values[name] = val
		names = append(names, name)
		if def != nil {
			_ = def.Set(name, val)
		}
	}
	if def != nil {
		inst.values["default"] = def
	} else {
		inst.values["default"] = vu.rt.ToValue(ex.Default)
	}
	names = append(names, "default")
	sort.Strings(names)
	m.learn(names)
	return inst, nil
}
