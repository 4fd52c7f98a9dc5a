package wire

// convert copies a value of one type into another that holds the same
// JSON document, field by field, matching fields by their JSON key: a
// Result and the form its JSON is encoded in (wire.go). A Duration field
// converts from and to:
//
//   - float64: seconds, or the unit its `unit` tag names ("s", "ms",
//     "us"), written as time.Duration.Seconds writes seconds
//     (internal/report's Build writes every time so), so a value read
//     from the JSON reads back exactly;
//   - int64: nanoseconds (the JSON's *_ns keys).
//
// A time.Time converts from and to int64 Unix nanoseconds (0 is the zero
// Time).

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"time"
)

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
)

// unitNS is how many nanoseconds one unit of a float64 time holds.
var unitNS = map[string]float64{"": 1e9, "s": 1e9, "ms": 1e6, "us": 1e3}

// convert sets dst (settable) to src's value; unit is the unit of a
// float64 time between them ("" for seconds).
func convert(dst, src reflect.Value, unit string) {
	dt, st := dst.Type(), src.Type()
	switch {
	case dt == st:
		dst.Set(src)
	case dt == durationType && st.Kind() == reflect.Float64:
		dst.SetInt(int64(math.Round(src.Float() * unitNS[unit])))
	case st == durationType && dt.Kind() == reflect.Float64:
		d := time.Duration(src.Int())
		if unit == "" || unit == "s" {
			dst.SetFloat(d.Seconds())
		} else {
			dst.SetFloat(float64(d) / unitNS[unit])
		}
	case dt == durationType && st.Kind() == reflect.Int64, st == durationType && dt.Kind() == reflect.Int64:
		dst.SetInt(src.Int())
	case dt == timeType && st.Kind() == reflect.Int64:
		if ns := src.Int(); ns != 0 {
			dst.Set(reflect.ValueOf(time.Unix(0, ns)))
		}
	case st == timeType && dt.Kind() == reflect.Int64:
		if t := src.Interface().(time.Time); !t.IsZero() {
			dst.SetInt(t.UnixNano())
		}
	case dt.Kind() == reflect.Pointer && st.Kind() == reflect.Pointer:
		if !src.IsNil() {
			dst.Set(reflect.New(dt.Elem()))
			convert(dst.Elem(), src.Elem(), unit)
		}
	case dt.Kind() == reflect.Slice && st.Kind() == reflect.Slice:
		if !src.IsNil() {
			dst.Set(reflect.MakeSlice(dt, src.Len(), src.Len()))
			for i := range src.Len() {
				convert(dst.Index(i), src.Index(i), unit)
			}
		}
	case dt.Kind() == reflect.Struct && st.Kind() == reflect.Struct:
		for _, f := range fieldPairs(dt, st) {
			convert(dst.Field(f.dst), src.Field(f.src), f.unit)
		}
	default:
		panic(fmt.Sprintf("wire: no conversion from %v to %v", st, dt))
	}
}

// fieldPair is a field of one struct type and its twin in another.
type fieldPair struct {
	dst, src int
	unit     string
}

var pairCache sync.Map // [2]reflect.Type → []fieldPair

// fieldPairs matches the fields of dt and st by JSON key.
func fieldPairs(dt, st reflect.Type) []fieldPair {
	key := [2]reflect.Type{dt, st}
	if v, ok := pairCache.Load(key); ok {
		return v.([]fieldPair)
	}
	var out []fieldPair
	for i := range dt.NumField() {
		k := jsonKey(dt.Field(i))
		if k == "" {
			continue
		}
		for j := range st.NumField() {
			if jsonKey(st.Field(j)) == k {
				unit := dt.Field(i).Tag.Get("unit")
				if unit == "" {
					unit = st.Field(j).Tag.Get("unit")
				}
				out = append(out, fieldPair{dst: i, src: j, unit: unit})
				break
			}
		}
	}
	pairCache.Store(key, out)
	return out
}

// jsonKey is the JSON key of f ("" for an unexported or untagged field).
// An untagged embedded struct, whose fields JSON flattens into its
// parent's, is matched with its twin by type name.
func jsonKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	if f.Anonymous && f.Tag.Get("json") == "" {
		return "embedded " + f.Name
	}
	k, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if k == "-" {
		return ""
	}
	return k
}
