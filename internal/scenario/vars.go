package scenario

import (
	"fmt"
	"strings"

	"github.com/hail-loadgen/hail/internal/scenario/template"
	"gopkg.in/yaml.v3"
)

// resolveVars expands the file's variables whose values are templates —
// {{var.OTHER}}, {{env.NAME}} and {{"text"}} — once, at load time, each
// after the variables it refers to. A variable that refers to itself,
// directly or through others, is an error at the reference that closes the
// cycle (it was sent literally before); so is an expression that changes
// per request ({{uuid}}, {{counter}}, ...): variables are fixed. Values
// without "{{", and --var values, are taken as they are.
func (l *loader) resolveVars() error {
	node := l.nodes["variables"]
	if node == nil {
		return nil
	}
	scalars := map[string]*yaml.Node{} // template-valued scalars of the file, not replaced by --var
	var order []string
	lists := map[string][]*yaml.Node{}
	var listOrder []string
	_ = l.fields(node, "variables", nil, func(key string, _, v *yaml.Node) error {
		if _, replaced := l.o.Vars[key]; replaced {
			return nil
		}
		switch v.Kind {
		case yaml.ScalarNode:
			if strings.Contains(v.Value, "{{") {
				scalars[key] = v
				order = append(order, key)
			}
		case yaml.SequenceNode:
			items, _ := l.list(v, "variables."+key)
			lists[key] = items
			listOrder = append(listOrder, key)
		}
		return nil
	})
	state := map[string]int{} // 1: being resolved, 2: done
	var path []string
	var visit func(name string) error
	visit = func(name string) error {
		state[name] = 1
		path = append(path, name)
		n := scalars[name]
		for _, e := range template.Exprs(n.Value) {
			ref := e.VarRef()
			if _, ok := scalars[ref]; !ok {
				continue
			}
			switch state[ref] {
			case 1:
				return l.errIn(n, &template.Error{Offset: e.Offset, Msg: cycleMsg(path, ref)}, "variables."+name)
			case 0:
				if err := visit(ref); err != nil {
					return err
				}
			}
		}
		s, err := l.fixedValue(n.Value, "variables."+name, n)
		if err != nil {
			return err
		}
		l.env.Vars[name] = template.Value{Text: s}
		state[name] = 2
		path = path[:len(path)-1]
		return nil
	}
	for _, name := range order {
		if state[name] == 0 {
			if err := visit(name); err != nil {
				return err
			}
		}
	}
	for _, name := range listOrder {
		vals := l.env.Vars[name].List
		for i, it := range lists[name] {
			if !strings.Contains(it.Value, "{{") {
				continue
			}
			s, err := l.fixedValue(it.Value, "variables."+name, it)
			if err != nil {
				return err
			}
			vals[i] = s
		}
	}
	return nil
}

// fixedValue expands src, the value of node n, which may use only what is
// fixed at load time.
func (l *loader) fixedValue(src, what string, n *yaml.Node) (string, error) {
	return l.fixedText(n, src, what, func(expr string, off int) error {
		return l.errIn(n, &template.Error{Offset: off, Msg: fmt.Sprintf("{{%s}} changes with every request, and variables are fixed when the file is loaded: write it where the variable is used",
			strings.TrimSpace(expr))}, what)
	})
}

// fixedText expands src, the text of node n, which may use variables,
// environment variables and literals but nothing that varies per request;
// varies is the error for the first expression (its text, at offset off
// of src) that does.
func (l *loader) fixedText(n *yaml.Node, src, what string, varies func(expr string, off int) error) (string, error) {
	env := *l.env
	env.Refs, env.Lasts, env.Where = nil, nil, what
	s, e, err := template.Fixed(src, &env)
	if err != nil {
		return "", l.errIn(n, err, what)
	}
	if e != nil {
		return "", varies(e.Text, e.Offset)
	}
	return s, nil
}

// cycleMsg describes the cycle that a reference to ref closes, path being
// the variables being resolved, outermost first.
func cycleMsg(path []string, ref string) string {
	name := path[len(path)-1]
	if ref == name {
		return fmt.Sprintf("{{var.%s}} refers to %s itself: a variable cannot contain itself", ref, ref)
	}
	from := 0
	for i, p := range path {
		if p == ref {
			from = i
		}
	}
	cycle := append(append([]string(nil), path[from:]...), ref)
	return fmt.Sprintf("{{var.%s}} closes a cycle (%s): variables cannot refer to each other in a circle", ref, strings.Join(cycle, " → "))
}
