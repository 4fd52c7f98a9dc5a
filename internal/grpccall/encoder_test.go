package grpccall

import (
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// input is the input message of call in a test .proto file.
func input(t testing.TB, file, call string) protoreflect.MessageDescriptor {
	t.Helper()
	src, err := FromProto([]string{file}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Resolve(src, call)
	if err != nil {
		t.Fatal(err)
	}
	return m.Desc.Input()
}

// sameAsEncode checks what an Encoder made of data against Encode: an
// Encoder never accepts what Encode rejects, and what it accepts decodes
// to the message Encode's bytes decode to.
func sameAsEncode(t *testing.T, md protoreflect.MessageDescriptor, e *Encoder, data []byte) (direct bool) {
	t.Helper()
	got, ok := e.Append([]byte("prefix"), data)
	if string(got[:6]) != "prefix" {
		t.Fatalf("%s: Append changed what dst held", data)
	}
	want, err := Encode(md, data)
	if !ok {
		if len(got) != 6 {
			t.Fatalf("%s: gave up but appended %d bytes", data, len(got)-6)
		}
		return false
	}
	if err != nil {
		t.Fatalf("%s: the Encoder accepts what Encode rejects: %v", data, err)
	}
	a, b := dynamicpb.NewMessage(md), dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(got[6:], a); err != nil {
		t.Fatalf("%s: the Encoder's bytes do not decode: %v", data, err)
	}
	if err := proto.Unmarshal(want, b); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(a, b) {
		t.Fatalf("%s: the Encoder's message differs from Encode's:\n got  %v\n want %v", data, a, b)
	}
	return true
}

func TestEncoder(t *testing.T) {
	all := input(t, "testdata/kinds.proto", "kinds.v1.Kinds/Echo")
	legacy := input(t, "testdata/legacy.proto", "legacy.v1.Old/Call")
	ord := order(t)
	for _, tc := range []struct {
		md     protoreflect.MessageDescriptor
		data   string
		direct bool // the Encoder handles it (else Encode does)
	}{
		{all, `{}`, true},
		{all, ` { "i32" : -5 , "i64":"-9223372036854775808", "u32":4294967295, "u64":"18446744073709551615" } `, true},
		{all, `{"s32":-3,"s64":"-4","f32":7,"f64":"8","sf32":-9,"sf64":-10,"fl":1.5,"db":"-2.25e3","b":true}`, true},
		{all, `{"i32":0,"s":"","b":false,"color":"COLOR_UNSPECIFIED","fl":0,"by":""}`, true},
		{all, `{"s":"h\u00e9llo \"q\" \\ \n\t","by":"aGk=","color":"BLUE"}`, true},
		{all, `{"by":"aGk","color":2}`, true},
		{all, `{"by":"-_-_"}`, true},
		{all, `{"inner":{"name":"a","ns":[1,2,3],"next":{"name":"b"}}}`, true},
		{all, `{"inner":{}}`, true},
		{all, `{"packed":["1",2,-3],"names":["x","y"],"inners":[{"name":"a"},{}],"colors":["RED",2],"dbs":[1.5,"NaN","-Infinity"]}`, true},
		{all, `{"byName":{"a":{"name":"x"},"b":{}},"byNum":{"1":"one","-2":"two"},"byFlag":{"true":"5","false":0}}`, true},
		{all, `{"by_name":{"a":{"name":"x"}},"by_big":{"18446744073709551615":"aGk="}}`, true},
		{all, `{"opt":0,"pickS":""}`, true},
		{all, `{"pick_m":{"name":"z"}}`, true},
		{all, `{"unpacked":[1,2,3],"custom":"c"}`, true},
		{all, `{"i32":null,"inner":null,"packed":null,"byName":null}`, true},
		{all, `{"s":"` + string(make([]byte, 0)) + `long: ` + string(bytesOf('x', 300)) + `"}`, true},
		{all, `{"inner":{"name":"` + string(bytesOf('y', 20000)) + `"}}`, true},
		// Left to Encode: it accepts some and names what does not fit.
		{all, `{"i32":1.0}`, false},
		{all, `{"i32":1e2}`, false},
		{all, `{"i32":2147483648}`, false},
		{all, `{"u32":-1}`, false},
		{all, `{"fl":1e39}`, false},
		{all, `{"db":-0}`, false},
		{all, `{"db":1e400}`, false},
		{all, `{"s":"\ud83d\ude00"}`, true}, // a surrogate pair: one rune
		{all, `{"s":"\ud83d"}`, false},      // a lone surrogate: protojson refuses it
		{all, `{"s":"\ude00\ud83d"}`, false},
		{all, `{"s":"a","s":"b"}`, false},
		{all, `{"s":"a","S":"b"}`, false},
		{all, `{"pickS":"a","pickM":{}}`, false},
		{all, `{"pickS":null}`, false},
		{all, `{"wait":"1.5s"}`, false},
		{all, `{"nope":1}`, false},
		{all, `{"color":"GREEN"}`, false},
		{all, `{"byNum":{"x":"1"}}`, false},
		{all, `{"byNum":{"1":"a","1":"b"}}`, false},
		{all, `{"packed":[1,null]}`, false},
		{all, `{"b":"true"}`, false},
		{all, `{"by":"a b"}`, false},
		{all, `{"s":"a"} x`, false},
		{all, `[{"s":"a"}]`, false},
		{all, `{"s":"a",}`, false},
		{all, `{"i32":01}`, false},
		{all, `{"s\u0073":"x"}`, false},
		{legacy, `{"shade":"DARK","shades":[1,"LIGHT"],"text":"","n":0,"ns":[1],"loose":[2,3]}`, true},
		{legacy, `{"shade":3}`, false},
		{legacy, `{"g":{"x":1}}`, false},
		{ord, `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"}],"tags":{"x":"5","y":7},"gift":true,"total":9.5,"priority":4,"note":"aGk=","customer_name":"c"}`, true},
		{ord, `{"id":"o1","at":"2026-01-02T03:04:05Z"}`, false},
	} {
		e := NewEncoder(tc.md)
		if direct := sameAsEncode(t, tc.md, e, []byte(tc.data)); direct != tc.direct {
			t.Errorf("%s: handled by the Encoder %v, want %v", tc.data, direct, tc.direct)
		}
	}
}

func bytesOf(c byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = c
	}
	return b
}

// The Encoder allocates nothing.
func TestEncoderAllocs(t *testing.T) {
	e := NewEncoder(order(t))
	data := []byte(`{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"},{"sku":"b","qty":"3","size":1}],"tags":{"x":"5","y":7},"gift":true,"total":9.5,"priority":4,"note":"aGk=","customer_name":"c\n"}`)
	dst := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := e.Append(dst[:0], data); !ok {
			t.Fatal("gave up")
		}
	}); n != 0 {
		t.Errorf("%v allocations per Append", n)
	}
}

// FuzzEncoder: whatever the Encoder accepts, Encode accepts, and both
// make the same message.
func FuzzEncoder(f *testing.F) {
	all := input(f, "testdata/kinds.proto", "kinds.v1.Kinds/Echo")
	legacy := input(f, "testdata/legacy.proto", "legacy.v1.Old/Call")
	ord := order(f)
	for _, s := range []string{`{"i32":-5,"u64":"18446744073709551615","fl":1.5,"db":"NaN","s":"a\u00e9","by":"aGk=","color":"BLUE"}`,
		`{"inner":{"name":"a","ns":[1,2],"next":{}},"packed":["1",2],"byName":{"a":{}},"byNum":{"-1":"x"},"byFlag":{"true":1}}`,
		`{"opt":0,"pickS":"","unpacked":[1],"custom":"c","by_big":{"1":"-_"}}`, `{"shade":"DARK","shades":[1],"ns":[1],"loose":[2]}`,
		`{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"}],"tags":{"x":"5"},"total":9.5,"note":"aGk="}`} {
		f.Add(0, []byte(s))
		f.Add(1, []byte(s))
		f.Add(2, []byte(s))
	}
	mds := []protoreflect.MessageDescriptor{all, legacy, ord}
	encs := []*Encoder{NewEncoder(all), NewEncoder(legacy), NewEncoder(ord)}
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		i := (which%3 + 3) % 3
		sameAsEncode(t, mds[i], encs[i], data)
	})
}
