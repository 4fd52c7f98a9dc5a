package grpccall

import (
	"bytes"
	"encoding/json"
	"io"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// sameAsToJSON checks what a Decoder made of payload against ToJSON: what
// it writes is protojson's output without white space, byte for byte, and
// it never writes what ToJSON refuses.
func sameAsToJSON(t *testing.T, md protoreflect.MessageDescriptor, d *Decoder, payload []byte) (direct bool) {
	t.Helper()
	got, ok := d.AppendJSON([]byte("prefix"), payload)
	if string(got[:6]) != "prefix" {
		t.Fatalf("%x: AppendJSON changed what dst held", payload)
	}
	var want bytes.Buffer
	err := ToJSON(&want, md, payload)
	if !ok {
		if len(got) != 6 {
			t.Fatalf("%x: gave up but appended %q", payload, got[6:])
		}
		return false
	}
	if err != nil {
		t.Fatalf("%x: the Decoder writes %s where ToJSON fails: %v", payload, got[6:], err)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, want.Bytes()); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[6:], compact.Bytes()) {
		t.Fatalf("%x:\n got  %s\n want %s", payload, got[6:], compact.Bytes())
	}
	return true
}

// wire is the protobuf encoding of js (protojson) for md.
func wire(t testing.TB, md protoreflect.MessageDescriptor, js string) []byte {
	t.Helper()
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(js), m); err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecoder(t *testing.T) {
	all := input(t, "testdata/kinds.proto", "kinds.v1.Kinds/Echo")
	legacy := input(t, "testdata/legacy.proto", "legacy.v1.Old/Call")
	ord := order(t)
	for _, tc := range []struct {
		md     protoreflect.MessageDescriptor
		js     string
		direct bool
	}{
		{all, `{}`, true},
		{all, `{"i32":-5,"i64":"-9223372036854775808","u32":4294967295,"u64":"18446744073709551615","s32":-3,"s64":"-4","f32":7,"f64":"8","sf32":-9,"sf64":-10}`, true},
		{all, `{"fl":1.5,"db":-2250,"b":true,"s":"h\u00e9llo \"q\" \\ \n\t\u0001 <&>","by":"aGk=","color":"BLUE"}`, true},
		{all, `{"fl":1e-7,"db":1e21}`, true},
		{all, `{"fl":3.4e38,"db":"NaN"}`, true},
		{all, `{"db":"-Infinity","fl":"Infinity"}`, true},
		{all, `{"inner":{"name":"a","ns":[1,2,3],"next":{"name":"b"}}}`, true},
		{all, `{"inner":{}}`, true},
		{all, `{"packed":["1",2,-3],"names":["x","y"],"inners":[{"name":"a"},{}],"colors":["RED",2,7],"dbs":[1.5,"NaN"]}`, true},
		{all, `{"byName":{"b":{"name":"x"},"a":{}},"byNum":{"10":"ten","-2":"two","1":""},"byFlag":{"true":"5","false":0}}`, true},
		{all, `{"byBig":{"18446744073709551615":"aGk=","2":""}}`, true},
		{all, `{"opt":0,"pickS":""}`, true},
		{all, `{"pickM":{"name":"z"}}`, true},
		{all, `{"unpacked":[1,2,3],"custom":"c"}`, true},
		{all, `{"color":7}`, true},
		{all, `{"wait":"1.5s"}`, false},
		{legacy, `{"shade":"DARK","shades":["DARK","LIGHT"],"text":"","n":0,"ns":[1],"loose":[2,3]}`, true},
		{legacy, `{"g":{"x":1}}`, false},
		{ord, `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"}],"tags":{"x":"5","y":7},"gift":true,"total":9.5,"priority":4,"note":"aGk=","customerName":"c"}`, true},
		{ord, `{"id":"o1","at":"2026-01-02T03:04:05Z"}`, false},
	} {
		d := NewDecoder(tc.md)
		if direct := sameAsToJSON(t, tc.md, d, wire(t, tc.md, tc.js)); direct != tc.direct {
			t.Errorf("%s: written by the Decoder %v, want %v", tc.js, direct, tc.direct)
		}
	}
	// What protobuf decoders meet beyond what Marshal writes: fields out of
	// order, unknown fields, zero values of implicit fields, wrong wire
	// types, a scalar sent twice (the last wins), a packed run and loose
	// values of one field.
	d := NewDecoder(all)
	var b []byte
	b = protowire.AppendTag(b, 14, protowire.BytesType)
	b = protowire.AppendString(b, "second")
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, 0)
	b = protowire.AppendTag(b, 99, protowire.VarintType)
	b = protowire.AppendVarint(b, 5)
	b = protowire.AppendTag(b, 13, protowire.BytesType) // bool as bytes: unknown
	b = protowire.AppendString(b, "x")
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 1)
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, 2)
	b = protowire.AppendTag(b, 18, protowire.VarintType)
	b = protowire.AppendVarint(b, 7)
	b = protowire.AppendTag(b, 18, protowire.BytesType)
	b = protowire.AppendBytes(b, protowire.AppendVarint(protowire.AppendVarint(nil, 8), 9))
	b = protowire.AppendTag(b, 18, protowire.VarintType)
	b = protowire.AppendVarint(b, 10)
	if !sameAsToJSON(t, all, d, b) {
		t.Error("hand-made bytes: left to ToJSON")
	}
	// Malformed bytes are left to ToJSON, which fails.
	if _, ok := d.AppendJSON(nil, []byte{0x0a, 0x05, 'a'}); ok {
		t.Error("truncated bytes written")
	}
}

// The Decoder allocates nothing.
func TestDecoderAllocs(t *testing.T) {
	md := order(t)
	d := NewDecoder(md)
	payload := wire(t, md, `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"},{"sku":"b"}],"tags":{"x":"5","y":7},"gift":true,"total":9.5,"note":"aGk="}`)
	dst := make([]byte, 0, 1024)
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := d.AppendJSON(dst[:0], payload); !ok {
			t.Fatal("gave up")
		}
	}); n != 0 {
		t.Errorf("%v allocations per AppendJSON", n)
	}
}

// FuzzDecoder: whatever the Decoder writes is ToJSON's output, compacted.
func FuzzDecoder(f *testing.F) {
	all := input(f, "testdata/kinds.proto", "kinds.v1.Kinds/Echo")
	legacy := input(f, "testdata/legacy.proto", "legacy.v1.Old/Call")
	ord := order(f)
	f.Add(0, wire(f, all, `{"i32":-5,"u64":"18446744073709551615","fl":1.5,"db":"NaN","s":"a\u00e9","by":"aGk=","color":"BLUE","inner":{"ns":[1]},"byName":{"a":{}},"byNum":{"-1":"x"},"pickS":""}`))
	f.Add(1, wire(f, legacy, `{"shade":"DARK","shades":["LIGHT"],"ns":[1],"loose":[2]}`))
	f.Add(2, wire(f, ord, `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"}],"tags":{"x":"5"},"total":9.5,"note":"aGk="}`))
	mds := []protoreflect.MessageDescriptor{all, legacy, ord}
	decs := []*Decoder{NewDecoder(all), NewDecoder(legacy), NewDecoder(ord)}
	f.Fuzz(func(t *testing.T, which int, payload []byte) {
		i := (which%3 + 3) % 3
		sameAsToJSON(t, mds[i], decs[i], payload)
	})
}

// A string that a later value replaces is never written, but protobuf's
// decoder checks it all the same: invalid UTF-8 in it fails the message
// (proto3), so the Decoder must not write one (FuzzDecoder's find).
func TestDecoderReplacedInvalidString(t *testing.T) {
	md := order(t)
	d := NewDecoder(md)
	bad := "a\xe1b"
	var twice []byte // customer_name (9) twice, the first invalid
	twice = protowire.AppendTag(twice, 9, protowire.BytesType)
	twice = protowire.AppendString(twice, bad)
	twice = protowire.AppendTag(twice, 9, protowire.BytesType)
	twice = protowire.AppendString(twice, "ok")
	var entry []byte // a tags (3) entry whose key comes twice, the first invalid
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, bad)
	entry = protowire.AppendTag(entry, 1, protowire.BytesType)
	entry = protowire.AppendString(entry, "k")
	entry = protowire.AppendTag(entry, 2, protowire.VarintType)
	entry = protowire.AppendVarint(entry, 5)
	tags := protowire.AppendBytes(protowire.AppendTag(nil, 3, protowire.BytesType), entry)
	for name, b := range map[string][]byte{"field": twice, "map key": tags} {
		if err := ToJSON(io.Discard, md, b); err == nil {
			t.Fatalf("%s: ToJSON takes it: not the case this test is for", name)
		}
		if sameAsToJSON(t, md, d, b) {
			t.Errorf("%s: written", name)
		}
	}
}
