package vm

import (
	"fmt"
	"sync"

	"github.com/grafana/sobek"
)

// sharedStore holds the SharedArrays of a Program: each is built once per run, by the
// first VU whose init code constructs it, and kept as one JSON document per element.
// Every VU sees a read-only array whose elements are parsed from that JSON on access
// and deep-frozen: a copy per access, as k6 documents ("k6 gives a copy of that
// element"), so no JS object is shared between runtimes.
type sharedStore struct {
	mu     sync.Mutex
	arrays map[string]*sharedData
}

type sharedData struct {
	mu    sync.Mutex
	done  bool
	err   error
	items []string
}

func (s *sharedStore) get(name string) *sharedData {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.arrays == nil {
		s.arrays = make(map[string]*sharedData)
	}
	d, ok := s.arrays[name]
	if !ok {
		d = &sharedData{}
		s.arrays[name] = d
	}
	return d
}

// sharedArrayConstructor is `new SharedArray(name, fn)`.
func (vu *VU) sharedArrayConstructor(call sobek.ConstructorCall) *sobek.Object {
	rt := vu.rt
	if !vu.inInit {
		panic(rt.NewGoError(fmt.Errorf("new SharedArray must be called in the init context")))
	}
	nameV := call.Argument(0)
	if sobek.IsUndefined(nameV) || nameV.String() == "" {
		panic(rt.NewTypeError("SharedArray: a name is required"))
	}
	fn, ok := sobek.AssertFunction(call.Argument(1))
	if !ok {
		panic(rt.NewTypeError("SharedArray: the second argument must be a function returning an array"))
	}
	d := vu.p.shared.get(nameV.String())
	d.mu.Lock()
	if !d.done {
		d.done = true
		d.items, d.err = vu.buildShared(fn)
	}
	d.mu.Unlock()
	if d.err != nil {
		panic(rt.NewGoError(fmt.Errorf("SharedArray %q: %w", nameV.String(), d.err)))
	}
	return rt.NewDynamicArray(&sharedArray{vu: vu, data: d})
}

func (vu *VU) buildShared(fn sobek.Callable) ([]string, error) {
	rt := vu.rt
	v, err := fn(sobek.Undefined())
	if err != nil {
		return nil, errorFromJS(err)
	}
	o, ok := v.(*sobek.Object)
	if !ok || o.ClassName() != "Array" {
		return nil, fmt.Errorf("the function must return an array")
	}
	n := int(o.Get("length").ToInteger())
	items := make([]string, n)
	for i := 0; i < n; i++ {
		s, err := vu.jsonStr(sobek.Undefined(), o.Get(fmt.Sprint(i)))
		if err != nil {
			return nil, errorFromJS(err)
		}
		if sobek.IsUndefined(s) {
			items[i] = "null"
			continue
		}
		items[i] = s.String()
	}
	_ = rt
	return items, nil
}

// sharedArray is one VU's read-only view of a sharedData.
type sharedArray struct {
	vu   *VU
	data *sharedData
}

func (a *sharedArray) Len() int { return len(a.data.items) }

func (a *sharedArray) Get(i int) sobek.Value {
	if i < 0 || i >= len(a.data.items) {
		return sobek.Undefined()
	}
	rt := a.vu.rt
	v, err := a.vu.jsonPars(sobek.Undefined(), rt.ToValue(a.data.items[i]))
	if err != nil {
		panic(err)
	}
	v, err = a.vu.freeze(sobek.Undefined(), v)
	if err != nil {
		panic(err)
	}
	return v
}

func (a *sharedArray) Set(int, sobek.Value) bool { return false }
func (a *sharedArray) SetLen(int) bool           { return false }
