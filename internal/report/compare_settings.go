package report

// The settings that differ between compared runs: each run's configuration
// flattened to its leaves ("scenario.stages[1].connections"), and the
// leaves whose values are not the same in every run, a value per side.

import (
	"encoding/json"
	"fmt"
	"github.com/hail-loadgen/hail/result"
	"slices"
	"sort"
	"strings"
)

// SettingDiff is one configuration field whose value differs between the
// compared runs.
type SettingDiff struct {
	// Field is the flattened key: "rate", "scenario.stages[1].connections".
	Field string
	// Values are the sides' values, in their order: "—" where the field is
	// absent, and "a / b" when a side's runs differ among themselves.
	Values []string
}

// maxSettingValue bounds a value as the table prints it.
const maxSettingValue = 48

// settingDiffs finds the fields whose values differ between the runs of
// sides.
func settingDiffs(sides [][]*result.Result) []SettingDiff {
	var flat [][]map[string]string
	keys := map[string]bool{}
	for _, runs := range sides {
		var side []map[string]string
		for _, r := range runs {
			m := map[string]string{}
			flatten("", r.Hail.Config, m)
			for k := range m {
				keys[k] = true
			}
			side = append(side, m)
		}
		flat = append(flat, side)
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []SettingDiff
	for _, k := range sorted {
		seen := map[string]bool{}
		d := SettingDiff{Field: k}
		for _, side := range flat {
			var vals []string
			for _, m := range side {
				v, ok := m[k]
				if !ok {
					v = "—"
				}
				seen[v] = true
				if !slices.Contains(vals, v) {
					vals = append(vals, v)
				}
			}
			d.Values = append(d.Values, strings.Join(vals, " / "))
		}
		if len(seen) > 1 {
			out = append(out, d)
		}
	}
	return out
}

// flatten puts the leaves of v into out under their paths from prefix:
// maps by key ("a.b"), lists by index ("a[2]"), each leaf as compact JSON
// (strings unquoted), cut to maxSettingValue characters.
func flatten(prefix string, v any, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			p := k
			if prefix != "" {
				p = prefix + "." + k
			}
			flatten(p, e, out)
		}
		return
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
		return
	case []map[string]any: // a configuration not yet through JSON
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
		return
	case []string:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
		return
	case map[string]string:
		for k, e := range x {
			flatten(prefix+"."+k, e, out)
		}
		return
	case nil:
		out[prefix] = "null"
		return
	}
	s, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		s = string(b)
	}
	if r := []rune(s); len(r) > maxSettingValue {
		s = string(r[:maxSettingValue-1]) + "…"
	}
	out[prefix] = s
}

// countPrefixed counts the differing settings under key ("scenario":
// "scenario.…").
func countPrefixed(settings []SettingDiff, key string) int {
	n := 0
	for _, s := range settings {
		if s.Field == key || strings.HasPrefix(s.Field, key+".") || strings.HasPrefix(s.Field, key+"[") {
			n++
		}
	}
	return n
}
