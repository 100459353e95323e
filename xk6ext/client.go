package xk6ext

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/grafana/sobek"

	"github.com/tokenstorm/tokenstorm/llm"
	"github.com/tokenstorm/tokenstorm/tokens"
)

// Defaults of the JavaScript Client, which differ from llm.Config's zero values where a
// script's expectations do.
const (
	DefaultKeepText        = true // scripts usually look at the text; the Go zero value keeps none
	DefaultConnectionReuse = true // as k6: connections are kept per VU across iterations
	DefaultIncludeUsage    = true // ask OpenAI servers for the usage chunk
	DefaultDialect         = llm.OpenAIChat
	// DefaultClientCache bounds the llm.Clients one VU keeps for reuse across
	// iterations; clients beyond it are closed when their iteration ends.
	DefaultClientCache = 32
)

// insecureTLS is the TLS configuration of WithInsecureSkipTLSVerify; read-only.
var insecureTLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // the user asked for it, as in k6

// ErrInitContext is thrown for a request made in the init context, which k6 forbids too:
// init code runs once per VU and is not measured.
var ErrInitContext = errors.New("tokenstorm: requests cannot be made in the init context; make them in the default function, setup() or teardown()")

// jsClient is the state behind one `new storm.Client(...)`.
type jsClient struct {
	m    *ModuleInstance
	cfg  llm.Config // Dialect is the client's own; chat/complete may pick a sibling
	tags map[string]string
	slo  tokens.SLO
	// clients holds the llm.Client for each dialect this script object has used.
	clients map[llm.Dialect]*llm.Client
}

func (m *ModuleInstance) addClient(o *sobek.Object) {
	if err := o.Set("Client", m.newClient); err != nil {
		panic(err)
	}
}

// newClient is the JS constructor `new storm.Client(options)`.
func (m *ModuleInstance) newClient(call sobek.ConstructorCall) *sobek.Object {
	if m.err != nil {
		m.throw(m.err)
	}
	jc, err := m.parseClient(call.Argument(0))
	if err != nil {
		m.throw(err)
	}
	obj := call.This
	bind := func(name string, fn func(sobek.FunctionCall) sobek.Value) {
		_ = obj.DefineDataProperty(name, m.rt.ToValue(fn), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_FALSE)
	}
	bind("chat", func(c sobek.FunctionCall) sobek.Value { return jc.call(c, true) })
	bind("complete", func(c sobek.FunctionCall) sobek.Value { return jc.call(c, false) })
	bind("chatAsync", func(c sobek.FunctionCall) sobek.Value { return jc.callAsync(c, true) })
	bind("completeAsync", func(c sobek.FunctionCall) sobek.Value { return jc.callAsync(c, false) })
	_ = obj.DefineDataProperty("url", m.rt.ToValue(jc.cfg.BaseURL), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	_ = obj.DefineDataProperty("model", m.rt.ToValue(jc.cfg.Model), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	_ = obj.DefineDataProperty("dialect", m.rt.ToValue(string(jc.cfg.Dialect)), sobek.FLAG_FALSE, sobek.FLAG_FALSE, sobek.FLAG_TRUE)
	return nil
}

func validDialect(d llm.Dialect) bool {
	switch d {
	case llm.OpenAIChat, llm.OpenAICompletions, llm.Anthropic, llm.TGI, llm.Ollama:
		return true
	}
	return false
}

func (m *ModuleInstance) parseClient(v sobek.Value) (*jsClient, error) {
	or, err := newOptReader(m.rt, "Client", "", v)
	if err != nil {
		return nil, err
	}
	jc := &jsClient{m: m, clients: map[llm.Dialect]*llm.Client{}}
	cfg := &jc.cfg
	if cfg.BaseURL, err = or.str("url", ""); err != nil {
		return nil, err
	}
	if cfg.Model, err = or.str("model", ""); err != nil {
		return nil, err
	}
	d, err := or.str("dialect", string(DefaultDialect))
	if err != nil {
		return nil, err
	}
	cfg.Dialect = llm.Dialect(d)
	if !validDialect(cfg.Dialect) {
		return nil, or.errf("dialect", "unknown dialect %q (want openai-chat, openai-completions, anthropic, tgi or ollama)", d)
	}
	if cfg.APIKey, err = or.str("apiKey", ""); err != nil {
		return nil, err
	}
	hdr, err := or.stringMap("headers")
	if err != nil {
		return nil, err
	}
	if len(hdr) > 0 {
		cfg.Headers = make(http.Header, len(hdr))
		for k, v := range hdr {
			cfg.Headers.Set(k, v)
		}
	}
	for _, f := range []struct {
		key string
		dst *int64
	}{
		{"timeout", (*int64)(&cfg.Timeout)},
		{"connectTimeout", (*int64)(&cfg.ConnectTimeout)},
		{"firstTokenTimeout", (*int64)(&cfg.FirstTokenTimeout)},
		{"idleTimeout", (*int64)(&cfg.IdleTimeout)},
	} {
		d, _, err := or.duration(f.key)
		if err != nil {
			return nil, err
		}
		*f.dst = int64(d)
	}
	if jc.tags, err = or.stringMap("tags"); err != nil {
		return nil, err
	}
	if jc.slo, err = m.parseSLO(or, "slo", tokens.SLO{}); err != nil {
		return nil, err
	}
	if cfg.KeepText, err = or.boolean("keepText", DefaultKeepText); err != nil {
		return nil, err
	}
	reuse, err := or.boolean("connectionReuse", DefaultConnectionReuse)
	if err != nil {
		return nil, err
	}
	cfg.NoConnectionReuse = !reuse || m.root.noConnectionReuse
	if m.root.insecureTLS {
		// One shared config, so clients with equal options still share a cache key.
		cfg.TLSClientConfig = insecureTLS
	}
	usage, err := or.boolean("includeUsage", DefaultIncludeUsage)
	if err != nil {
		return nil, err
	}
	cfg.NoIncludeUsage = !usage
	if cfg.Encoding, err = or.str("encoding", ""); err != nil {
		return nil, err
	}
	if err := or.unknown(); err != nil {
		return nil, err
	}
	if cfg.BaseURL == "" {
		root, err := m.root.startMock(defaultMockConfig(), false)
		if err != nil {
			return nil, err
		}
		cfg.BaseURL = mockBase(root, cfg.Dialect)
	}
	// Build the client now so configuration errors surface at construction.
	if _, err := jc.client(cfg.Dialect); err != nil {
		return nil, err
	}
	return jc, nil
}

// mockBase is the base URL of the mock for a dialect: OpenAI-style servers are
// addressed by their /v1 root, TGI and Ollama by the server root.
func mockBase(root string, d llm.Dialect) string {
	switch d {
	case llm.TGI, llm.Ollama:
		return root
	}
	return root + "/v1"
}

// parseSLO reads {ttft, tpot, e2e} under key, starting from base (a call's SLO
// overrides the client's field by field).
func (m *ModuleInstance) parseSLO(parent *optReader, key string, base tokens.SLO) (tokens.SLO, error) {
	v := parent.get(key)
	if v == nil {
		return base, nil
	}
	or, err := newOptReader(m.rt, parent.fn, parent.prefix+key+".", v)
	if err != nil {
		return base, err
	}
	for _, f := range []struct {
		key string
		dst *int64
	}{{"ttft", (*int64)(&base.TTFT)}, {"tpot", (*int64)(&base.TPOT)}, {"e2e", (*int64)(&base.E2E)}} {
		d, set, err := or.duration(f.key)
		if err != nil {
			return base, err
		}
		if set {
			*f.dst = int64(d)
		}
	}
	return base, or.unknown()
}

// client returns the llm.Client for dialect d, built on first use.
func (jc *jsClient) client(d llm.Dialect) (*llm.Client, error) {
	if c := jc.clients[d]; c != nil {
		return c, nil
	}
	cfg := jc.cfg
	cfg.Dialect = d
	c, err := jc.m.llmClient(cfg)
	if err != nil {
		return nil, err
	}
	jc.clients[d] = c
	return c, nil
}

// llmClient returns a client for cfg, shared with earlier Client objects of this VU
// that had the same configuration: a script that builds its Client inside the default
// function then still reuses connections across iterations, as k6 VUs do.
func (m *ModuleInstance) llmClient(cfg llm.Config) (*llm.Client, error) {
	key := fmt.Sprintf("%+v", cfg)
	if c := m.clients[key]; c != nil {
		return c, nil
	}
	c, err := llm.NewClient(cfg)
	if err != nil {
		var ce *llm.ConfigError
		if errors.As(err, &ce) {
			return nil, &OptionError{Func: "Client", Field: jsField(ce.Field), Reason: ce.Reason}
		}
		return nil, &OptionError{Func: "Client", Reason: err.Error()}
	}
	if m.clients == nil {
		m.clients = map[string]*llm.Client{}
	}
	if len(m.clients) < DefaultClientCache {
		if err := m.root.addCloser(c.Close); err != nil {
			c.Close()
			return nil, err
		}
		m.clients[key] = c
		return c, nil
	}
	if m.host.InInit() {
		if err := m.root.addCloser(c.Close); err != nil {
			c.Close()
			return nil, err
		}
	} else {
		context.AfterFunc(m.host.Context(), c.Close)
	}
	return c, nil
}

// jsField names an llm.Config field as the JS option that sets it.
func jsField(goField string) string {
	switch goField {
	case "BaseURL":
		return "url"
	case "APIKey":
		return "apiKey"
	case "":
		return ""
	}
	return strings.ToLower(goField[:1]) + goField[1:]
}

// chatDialect and completeDialect map a client's dialect to the one each method
// speaks: an OpenAI-compatible client serves chat() from /chat/completions and
// complete() from /completions.
func chatDialect(d llm.Dialect) (llm.Dialect, bool) {
	switch d {
	case llm.OpenAIChat, llm.OpenAICompletions:
		return llm.OpenAIChat, true
	case llm.Anthropic, llm.Ollama:
		return d, true
	}
	return "", false
}

func completeDialect(d llm.Dialect) (llm.Dialect, bool) {
	switch d {
	case llm.OpenAIChat, llm.OpenAICompletions:
		return llm.OpenAICompletions, true
	case llm.TGI:
		return d, true
	}
	return "", false
}

// callSpec is one parsed chat/complete call.
type callSpec struct {
	client *llm.Client
	req    *llm.Request
	slo    tokens.SLO
	tags   map[string]string
}

// parseCall reads a request object on the VU goroutine. messages, prompt, max_tokens,
// model, stream, headers, tags and slo are the module's keys; every other key goes into
// the request body as given, so any server field (temperature, ignore_eos…) works.
func (jc *jsClient) parseCall(chat bool, v sobek.Value) (*callSpec, error) {
	m := jc.m
	fn := "complete"
	if chat {
		fn = "chat"
	}
	if m.err != nil {
		return nil, m.err
	}
	if m.host.InInit() {
		return nil, ErrInitContext
	}
	d, ok := chatDialect(jc.cfg.Dialect)
	if !chat {
		d, ok = completeDialect(jc.cfg.Dialect)
	}
	if !ok {
		return nil, &OptionError{Func: fn, Reason: fmt.Sprintf("dialect %s has no %s endpoint", jc.cfg.Dialect, fn)}
	}
	c, err := jc.client(d)
	if err != nil {
		return nil, err
	}
	or, err := newOptReader(m.rt, fn, "", v)
	if err != nil {
		return nil, err
	}
	if or.obj == nil {
		return nil, &OptionError{Func: fn, Reason: "needs a request object"}
	}
	spec := &callSpec{client: c, req: &llm.Request{}, tags: jc.tags}
	req := spec.req
	for _, k := range or.keys() {
		switch k {
		case "messages":
			if !chat {
				return nil, or.errf(k, "complete() takes a prompt; use chat() for messages")
			}
			if req.Messages, err = parseMessages(or, k); err != nil {
				return nil, err
			}
		case "prompt":
			if req.Prompt, err = or.str(k, ""); err != nil {
				return nil, err
			}
		case "max_tokens":
			n, _, err := or.integer(k, 0, 0, 1<<31-1)
			if err != nil {
				return nil, err
			}
			req.MaxTokens = int(n)
		case "model":
			if req.Model, err = or.str(k, ""); err != nil {
				return nil, err
			}
		case "stream":
			s, err := or.boolean(k, true)
			if err != nil {
				return nil, err
			}
			req.NoStream = !s
		case "headers":
			h, err := or.stringMap(k)
			if err != nil {
				return nil, err
			}
			req.Headers = make(http.Header, len(h))
			for hk, hv := range h {
				req.Headers.Set(hk, hv)
			}
		case "tags":
			t, err := or.stringMap(k)
			if err != nil {
				return nil, err
			}
			if len(t) > 0 {
				merged := make(map[string]string, len(jc.tags)+len(t))
				for tk, tv := range jc.tags {
					merged[tk] = tv
				}
				for tk, tv := range t {
					merged[tk] = tv
				}
				spec.tags = merged
			}
		case "slo":
			if spec.slo, err = m.parseSLO(or, k, jc.slo); err != nil {
				return nil, err
			}
			continue
		default:
			val := or.get(k)
			if val == nil {
				continue
			}
			if req.Params == nil {
				req.Params = map[string]any{}
			}
			req.Params[k] = val.Export()
		}
	}
	if _, ok := or.seen["slo"]; !ok {
		spec.slo = jc.slo
	}
	switch {
	case chat && len(req.Messages) == 0 && req.Prompt == "":
		return nil, &OptionError{Func: fn, Field: "messages", Reason: "is required (or give a prompt)"}
	case !chat && req.Prompt == "":
		return nil, &OptionError{Func: fn, Field: "prompt", Reason: "is required"}
	}
	return spec, nil
}

func parseMessages(or *optReader, key string) ([]llm.Message, error) {
	v := or.get(key)
	obj, ok := v.(*sobek.Object)
	if v == nil || !ok || obj.ClassName() != "Array" {
		return nil, or.errf(key, "must be an array of {role, content}, got %s", typeName(v))
	}
	n := int(obj.Get("length").ToInteger())
	msgs := make([]llm.Message, 0, n)
	for i := 0; i < n; i++ {
		field := key + "[" + strconv.Itoa(i) + "]"
		e, ok := obj.Get(strconv.Itoa(i)).(*sobek.Object)
		if !ok {
			return nil, or.errf(field, "must be an object {role, content}")
		}
		var msg llm.Message
		for _, p := range []struct {
			name string
			dst  *string
		}{{"role", &msg.Role}, {"content", &msg.Content}} {
			pv := e.Get(p.name)
			var s string
			if pv != nil {
				s, ok = pv.Export().(string)
			}
			if pv == nil || !ok {
				return nil, or.errf(field+"."+p.name, "must be a string, got %s", typeName(pv))
			}
			*p.dst = s
		}
		msgs = append(msgs, msg)
	}
	return msgs, nil
}

// call runs a blocking chat()/complete() on the VU goroutine.
func (jc *jsClient) call(c sobek.FunctionCall, chat bool) sobek.Value {
	spec, err := jc.parseCall(chat, c.Argument(0))
	if err != nil {
		jc.m.throw(err)
	}
	ctx := jc.m.host.Context()
	res := spec.client.Do(ctx, spec.req)
	jc.record(ctx, spec, res)
	return jc.m.resultObject(res, spec.slo)
}

// callAsync starts the request on its own goroutine and returns a Promise the VU's
// event loop settles with the Result. Invalid arguments reject the promise.
func (jc *jsClient) callAsync(c sobek.FunctionCall, chat bool) sobek.Value {
	m := jc.m
	promise, resolve, reject := m.rt.NewPromise()
	spec, err := jc.parseCall(chat, c.Argument(0))
	if err != nil {
		if rerr := reject(jsError(m.rt, err)); rerr != nil {
			m.throw(rerr)
		}
		return m.rt.ToValue(promise)
	}
	enqueue := m.host.RegisterCallback()
	err = m.root.spawn(m.host.Context(), func(ctx context.Context) {
		res := spec.client.Do(ctx, spec.req)
		jc.record(ctx, spec, res)
		enqueue(func() error { return resolve(m.resultObject(res, spec.slo)) })
	})
	if err != nil {
		// The slot must be released exactly once; the rejection runs on the loop.
		enqueue(func() error { return reject(jsError(m.rt, err)) })
	}
	return m.rt.ToValue(promise)
}

// record emits the result's metrics. A request that failed because the iteration or
// the test was stopping is not a measurement of the server, so it is not emitted (k6
// likewise drops requests interrupted by the end of a test).
func (jc *jsClient) record(ctx context.Context, spec *callSpec, res *llm.Result) {
	if !res.OK() && ctx.Err() != nil {
		return
	}
	jc.m.host.Emit(jc.m.metrics.Samples(res, spec.slo, jc.tags, spec.tags)...)
}
