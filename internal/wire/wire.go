// Package wire converts the Result of package result (and any of its
// parts) to and from the form its JSON document is encoded in. A part of
// the Result holds its times as time.Duration, with a `unit` tag where
// the JSON has float seconds ("s") or milliseconds ("ms", "us");
// encoding/json would write those as integer nanoseconds (and the start,
// a time.Time the JSON holds in Unix nanoseconds, as text). So a value is
// converted (To) to a type made from its own by reflection, the same
// fields and tags with float64 for each such Duration and int64 for each
// time.Time, and that is what encoding/json reads and writes (New, From):
// a field is declared once, its JSON unit beside it.
package wire

import (
	"encoding/json"
	"reflect"
	"sync"
)

var (
	wireTypes       sync.Map // reflect.Type → reflect.Type
	marshalerType   = reflect.TypeFor[json.Marshaler]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
)

// wireType is t with float64 for every Duration that has a unit tag and
// int64 (Unix nanoseconds, 0 for the zero Time) for every time.Time, in
// structs at any depth; t itself when it has none.
func wireType(t reflect.Type) reflect.Type {
	if w, ok := wireTypes.Load(t); ok {
		return w.(reflect.Type)
	}
	w := t
	switch t.Kind() {
	case reflect.Pointer:
		if e := wireType(t.Elem()); e != t.Elem() {
			w = reflect.PointerTo(e)
		}
	case reflect.Slice:
		if e := wireType(t.Elem()); e != t.Elem() {
			w = reflect.SliceOf(e)
		}
	case reflect.Map:
		if e := wireType(t.Elem()); e != t.Elem() {
			w = reflect.MapOf(t.Key(), e)
		}
	case reflect.Struct:
		if t == timeType {
			break // a field of its own: its parent makes it int64
		}
		fields := make([]reflect.StructField, t.NumField())
		// A struct with JSON methods of its own (Result) is always remade:
		// its methods call back into the wire form.
		changed := t.Implements(marshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
		for i := range fields {
			f := t.Field(i)
			ft := wireType(f.Type)
			switch {
			case f.Type == durationType && f.Tag.Get("unit") != "":
				ft = reflect.TypeFor[float64]()
			case f.Type == timeType:
				ft = reflect.TypeFor[int64]() // Unix nanoseconds (start_unix_nano)
			}
			changed = changed || ft != f.Type
			fields[i] = reflect.StructField{Name: f.Name, Type: ft, Tag: f.Tag, Anonymous: f.Anonymous}
		}
		if changed {
			w = reflect.StructOf(fields)
		}
	}
	wireTypes.Store(t, w)
	return w
}

// To is a pointer to v (a pointer) in its wire form.
func To(v any) any {
	src := reflect.ValueOf(v).Elem()
	w := reflect.New(wireType(src.Type()))
	convert(w.Elem(), src, "")
	return w.Interface()
}

// From sets *v (a pointer) from w, a pointer to its wire form.
func From(v, w any) {
	convert(reflect.ValueOf(v).Elem(), reflect.ValueOf(w).Elem(), "")
}

// New is a new zero value of v's (a pointer's) wire form, for decoding.
func New(v any) any {
	return reflect.New(wireType(reflect.TypeOf(v).Elem())).Interface()
}
