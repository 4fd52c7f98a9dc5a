// An llm step: llm: {model, api, prompt, input_tokens, output_tokens,
// exact, slo, conversation, max_context_tokens} beside an HTTP step's
// target (path, url, target) and headers: a streaming POST to an
// OpenAI-compatible endpoint, built and measured as hail llm's requests
// are (package llm, package stream). See llm.go for how its requests are
// built.

package scenario

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/dataset"
	"github.com/hail-loadgen/hail/internal/llm"
	"github.com/hail-loadgen/hail/internal/scenario/template"
	"github.com/hail-loadgen/hail/internal/stream"
)

var (
	llmStepKeys = []string{"model", "api", "prompt", "dataset", "dataset_order", "input_tokens", "output_tokens", "exact", "slo", "conversation", "max_context_tokens"}
	// llmOnlyHTTP are step keys an llm step's prompt (a streaming POST)
	// replaces.
	llmOnlyHTTP = []string{"method", "body", "body_json", "body_file", "body_lines", "grpc"}
)

// llmRequest compiles an llm step: its target and headers as an HTTP
// step's (a POST, with JSON and event-stream headers), and what it asks
// of the model.
func (l *loader) llmRequest(st *Step, it *yaml.Node, n stepFields, env *template.Env) (string, error) {
	what := st.Name + ".llm"
	for _, k := range llmOnlyHTTP {
		if n.keys[k] != nil {
			return "", l.errAt(n.keys[k], "%s: an llm step's request is its prompt, a streaming POST: expected no %s", st.Name, k)
		}
	}
	vals := map[string]*yaml.Node{}
	if err := l.fields(n.vals["llm"], what, llmStepKeys, func(key string, k, v *yaml.Node) error {
		vals[key] = v
		return nil
	}); err != nil {
		return "", err
	}
	st.Method, st.sendsCL = "POST", true
	target, host, err := l.stepTarget(st, it, n, env)
	if err != nil {
		return "", err
	}
	if h := n.vals["headers"]; h != nil {
		if err := l.fields(h, st.Name+".headers", nil, func(key string, k, _ *yaml.Node) error {
			if strings.EqualFold(key, "content-type") || strings.EqualFold(key, "accept") {
				return l.errAt(k, "%s.headers: an llm step sends Content-Type: application/json and Accept: text/event-stream itself: expected other headers, found %s", st.Name, key)
			}
			return nil
		}); err != nil {
			return "", err
		}
	}
	if err := l.stepHeaders(st, n, target, host, env); err != nil {
		return "", err
	}
	st.head = template.Concat(st.head, template.Text("Content-Type: application/json\r\nAccept: text/event-stream\r\n"))
	ls := &llmStep{conv: -1, index: l.stepIdx[st.Name]}
	st.llm = ls
	if err := l.llmSpec(st, ls, n, vals, what); err != nil {
		return "", err
	}
	if v := vals["prompt"]; v != nil {
		src, err := l.str(v, what+".prompt")
		if err != nil {
			return "", err
		}
		if ls.prompt, err = template.CompileJSON(src, env, false); err != nil {
			return "", l.errIn(v, err, what+".prompt")
		}
		if vals["input_tokens"] != nil {
			return "", l.errAt(vals["input_tokens"], "%s: input_tokens is the length of a made-up prompt: give prompt or input_tokens, not both", what)
		}
	}
	if err := l.llmDataset(ls, vals, what); err != nil {
		return "", err
	}
	if v := vals["slo"]; v != nil {
		s, err := l.str(v, what+".slo")
		if err != nil {
			return "", err
		}
		if ls.slo, err = stream.ParseSLO(s); err != nil {
			return "", l.errAt(v, "%s.slo: %v", what, err)
		}
	}
	if err := l.llmConversation(st, ls, vals, what); err != nil {
		return "", err
	}
	l.anyLLM = true
	return host, nil
}

// llmSpec reads what every request of the step asks of the model: its
// API (from the path by default), model, lengths and exactness.
func (l *loader) llmSpec(st *Step, ls *llmStep, n stepFields, vals map[string]*yaml.Node, what string) error {
	api, fromPath := llm.APIFromPath(strings.SplitN(st.Target, "?", 2)[0])
	if v := vals["api"]; v != nil {
		a, err := l.str(v, what+".api")
		if err != nil {
			return err
		}
		if a != string(llm.Completions) && a != string(llm.Chat) {
			return l.errAt(v, "%s.api: expected completions or chat, found %q", what, a)
		}
		if fromPath && a != string(api) {
			return l.errAt(v, "%s.api: %s, but the step's path %s is the %s API: drop api or change the path", what, a, st.Target, api)
		}
		api = llm.API(a)
	} else if !fromPath {
		k := n.keys["path"]
		if k == nil {
			k = n.keys["url"]
		}
		return l.errAt(k, "%s: the path %q names no API: end it in /v1/completions or /v1/chat/completions, or give api: completions or chat", st.Name, st.Target)
	}
	spec := &llm.Spec{API: api, Seed: l.s.seed}
	mv := vals["model"]
	if mv == nil {
		return l.errAt(n.vals["llm"], "%s: expected a model (model: NAME, as the server lists it at /v1/models), found none", what)
	}
	m, err := l.str(mv, what+".model")
	if err != nil {
		return err
	}
	if strings.Contains(m, "{{") {
		return l.errAt(mv, "%s.model: expected the model's name as the server lists it (a model is not a template), found %q", what, m)
	}
	spec.Model = m
	for _, x := range []struct {
		key, def string
		dst      *llm.Lengths
	}{{"input_tokens", "128", &spec.Input}, {"output_tokens", "128", &spec.Output}} {
		src := x.def
		if v := vals[x.key]; v != nil {
			if src, err = l.str(v, what+"."+x.key); err != nil {
				return err
			}
		}
		if *x.dst, err = llm.ParseLengths(src); err != nil {
			return l.errAt(vals[x.key], "%s.%s: %v", what, x.key, err)
		}
	}
	if v := vals["exact"]; v != nil {
		if spec.Exact, err = l.boolean(v, what+".exact"); err != nil {
			return err
		}
	}
	if err := spec.Init(); err != nil {
		return l.errAt(mv, "%s.model: %v", what, err)
	}
	ls.spec = spec
	return nil
}

// llmConversation reads the step's conversation: its name (the llm steps
// of one flow that name it share it) and the bound of its history.
func (l *loader) llmConversation(st *Step, ls *llmStep, vals map[string]*yaml.Node, what string) error {
	v := vals["conversation"]
	if mc := vals["max_context_tokens"]; mc != nil {
		if v == nil {
			return l.errAt(mc, "%s.max_context_tokens bounds a conversation's history: add conversation: NAME, or drop it", what)
		}
		c, err := l.integer(mc, what+".max_context_tokens", 1, 1<<24)
		if err != nil {
			return err
		}
		ls.maxContext = int(c)
	}
	if v == nil {
		return nil
	}
	if ls.spec.Data != nil {
		return l.errAt(v, "%s.conversation: a conversation's turns are the steps' prompts: expected prompt or input_tokens, not a dataset", what)
	}
	name, err := l.str(v, what+".conversation")
	if err != nil {
		return err
	}
	if !nameRE.MatchString(name) {
		return l.errAt(v, "%s.conversation: expected letters, digits, _ . or - (no spaces), found %q", what, name)
	}
	if ls.spec.API != llm.Chat {
		return l.errAt(v, "%s.conversation: a conversation's turns are chat messages: use the chat API (…/v1/chat/completions)", what)
	}
	id, ok := l.convIdx[name]
	if !ok {
		id = len(l.convIdx)
		l.convIdx[name] = id
	}
	ls.conv, ls.convName = id, name
	return nil
}

// llmDataset opens the step's dataset, as hail llm's --dataset takes it
// (random, shared-prefix:groups=G,prefix=P, jsonl:FILE, sharegpt:FILE;
// files relative to the scenario's), in its dataset_order (shuffle by
// default, by the file's seed).
func (l *loader) llmDataset(ls *llmStep, vals map[string]*yaml.Node, what string) error {
	v, ov := vals["dataset"], vals["dataset_order"]
	if v == nil {
		if ov != nil {
			return l.errAt(ov, "%s.dataset_order is the order of a dataset's records: add dataset: jsonl:FILE or sharegpt:FILE, or drop it", what)
		}
		return nil
	}
	src, err := l.str(v, what+".dataset")
	if err != nil {
		return err
	}
	spec, err := dataset.ParseSpec(src)
	if err != nil {
		return l.errAt(v, "%s.dataset: %v", what, err)
	}
	switch {
	case ls.prompt != nil:
		return l.errAt(v, "%s: the prompts are the dataset's or the prompt template's: give dataset or prompt, not both", what)
	case spec.Kind == dataset.Azure:
		return l.errAt(v, "%s.dataset: a trace sets its requests' arrival times, which a scenario's steps do not follow: use hail llm --dataset %s", what, src)
	case spec.Kind == dataset.Random:
		return nil
	}
	var order dataset.Order
	if ov != nil {
		o, err := l.str(ov, what+".dataset_order")
		if err != nil {
			return err
		}
		if !spec.File() {
			return l.errAt(ov, "%s.dataset_order: only a jsonl or sharegpt dataset has an order to choose", what)
		}
		if order, err = dataset.ParseOrder(o); err != nil {
			return l.errAt(ov, "%s.dataset_order: %v", what, err)
		}
	}
	if spec.File() {
		spec.Path = l.path(spec.Path)
	}
	d, err := dataset.Open(spec, dataset.Options{Order: order, Seed: l.s.Settings.Seed})
	if err != nil {
		return l.errAt(v, "%s.dataset: %v", what, err)
	}
	if d.Chat && ls.spec.API == llm.Completions {
		d.Close()
		return l.errAt(v, "%s.dataset: %s holds chats (\"messages\"), which the completions API cannot send: use the chat API (…/v1/chat/completions)", what, src)
	}
	ls.spec.Data = d
	if err := ls.spec.Init(); err != nil {
		return l.errAt(v, "%s.dataset: %v", what, err)
	}
	return nil
}
