// Pools: the pools section (capacity, seed values from the file or another
// file) and the registry of pool names that captures and templates share.

package scenario

import (
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/scenario/values"
)

func (l *loader) addPool(name string) int {
	if i, ok := l.poolIdx[name]; ok {
		return i
	}
	l.poolIdx[name] = len(l.s.Pools)
	l.s.Pools = append(l.s.Pools, values.NewPool(name, 0))
	l.poolUsed = append(l.poolUsed, false)
	l.seeded = append(l.seeded, false)
	return len(l.s.Pools) - 1
}

// pools reads pool declarations: capacity and seed values.
func (l *loader) pools() error {
	n, ok := l.nodes["pools"]
	if !ok {
		return nil
	}
	return l.fields(n, "pools", nil, func(name string, k, v *yaml.Node) error {
		if !nameRE.MatchString(name) {
			return l.errAt(k, "pools: name %q: expected letters, digits, _ . or -", name)
		}
		_, captured := l.poolIdx[name]
		max := 0
		var vals []string
		what := "pools." + name
		if err := l.fields(v, what, poolKeys, func(key string, k, v *yaml.Node) error {
			switch key {
			case "max":
				n, err := l.integer(v, what+".max", 1, 100_000_000)
				max = int(n)
				return err
			case "values":
				items, err := l.list(v, what+".values")
				if err != nil {
					return err
				}
				for _, it := range items {
					s, err := l.str(it, what+".values")
					if err != nil {
						return err
					}
					vals = append(vals, s)
				}
			case "file":
				p, err := l.str(v, what+".file")
				if err != nil {
					return err
				}
				lines, err := bodyfile.Lines(l.path(p), l.o.FileLimit)
				if err != nil {
					return l.errAt(v, "%s.file: %v", what, err)
				}
				for _, line := range lines {
					if s := strings.TrimSpace(string(line)); s != "" {
						vals = append(vals, s)
					}
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if !captured && len(vals) == 0 {
			return l.errAt(k, "pools.%s: nothing fills this pool: expected values or a file, or a step that captures into %s", name, name)
		}
		i := l.addPool(name)
		l.s.Pools[i] = values.NewPool(name, max)
		for j, s := range vals {
			l.s.Pools[i].Put(s, j)
		}
		l.seeded[i] = l.seeded[i] || len(vals) > 0
		return nil
	})
}
