package hail

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/report"
)

// Every field of the internal report, filled, comes back unchanged through
// package hail's Result: a field the report gains (a new section of the
// JSON) without its twin here fails this test, naming it.
func TestResultCoversTheReport(t *testing.T) {
	t.Parallel()
	var in report.Result
	fill(reflect.ValueOf(&in).Elem(), 0)
	back := toReport(fromReport(&in))
	if diffs := diff(reflect.ValueOf(in), reflect.ValueOf(*back), "Result"); len(diffs) > 0 {
		t.Errorf("fields of internal/report's Result lost on the way through hail.Result (add them to result*.go with the same json key):\n  %s",
			strings.Join(diffs, "\n  "))
	}
}

// Every field of package hail's Result has a twin in the report, so none
// is silently always zero.
func TestResultHasNoFieldOfItsOwn(t *testing.T) {
	t.Parallel()
	var out Result
	fill(reflect.ValueOf(&out).Elem(), 0)
	back := fromReport(toReport(&out))
	if diffs := diff(reflect.ValueOf(out), reflect.ValueOf(*back), "Result"); len(diffs) > 0 {
		t.Errorf("fields of hail.Result with no twin in internal/report's Result:\n  %s", strings.Join(diffs, "\n  "))
	}
}

// fill sets every field reachable from v to a value that is not its zero
// and survives the conversion's units: whole seconds and a half, small
// whole numbers, one-entry maps and slices.
func fill(v reflect.Value, depth int) {
	if depth > 12 {
		return
	}
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(7)
	case reflect.Uint64, reflect.Uint32, reflect.Uint:
		v.SetUint(7)
	case reflect.Float64:
		v.SetFloat(1.5)
	case reflect.String:
		v.SetString("s")
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k := reflect.New(v.Type().Key()).Elem()
		fill(k, depth+1)
		e := reflect.New(v.Type().Elem()).Elem()
		if e.Kind() == reflect.Interface {
			e.Set(reflect.ValueOf("s"))
		} else {
			fill(e, depth+1)
		}
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Unix(0, 7)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}

// diff lists the paths at which a and b differ.
func diff(a, b reflect.Value, path string) []string {
	if a.Kind() == reflect.Struct && a.Type() != reflect.TypeFor[time.Time]() {
		var out []string
		for i := range a.NumField() {
			if a.Type().Field(i).IsExported() {
				out = append(out, diff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name)...)
			}
		}
		return out
	}
	if a.Kind() == reflect.Slice && a.Len() == b.Len() {
		var out []string
		for i := range a.Len() {
			out = append(out, diff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i))...)
		}
		return out
	}
	if a.Kind() == reflect.Pointer && !a.IsNil() && !b.IsNil() {
		return diff(a.Elem(), b.Elem(), path)
	}
	if !reflect.DeepEqual(a.Interface(), b.Interface()) {
		return []string{fmt.Sprintf("%s: %v became %v", path, a.Interface(), b.Interface())}
	}
	return nil
}
