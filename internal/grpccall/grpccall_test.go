package grpccall

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

func shop(t testing.TB) Source {
	t.Helper()
	src, err := FromProto([]string{"testdata/shop.proto"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestParseCall(t *testing.T) {
	for _, tc := range []struct{ in, svc, m string }{
		{"shop.v1.Orders/Place", "shop.v1.Orders", "Place"},
		{"shop.v1.Orders.Place", "shop.v1.Orders", "Place"},
		{"/shop.v1.Orders/Place", "shop.v1.Orders", "Place"},
		{"Orders/Place", "Orders", "Place"},
	} {
		svc, m, err := ParseCall(tc.in)
		if err != nil || svc != tc.svc || m != tc.m {
			t.Errorf("ParseCall(%q) = %q %q %v", tc.in, svc, m, err)
		}
	}
	for _, bad := range []string{"", "Place", "shop.v1.Orders/", "/Place", "a b/C", "shop..Orders/Place", "shop.v1.Orders/Pl-ace"} {
		if _, _, err := ParseCall(bad); err == nil {
			t.Errorf("ParseCall(%q) accepted", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	src := shop(t)
	m, err := Resolve(src, "shop.v1.Orders/Watch")
	if err != nil {
		t.Fatal(err)
	}
	if m.Path() != "/shop.v1.Orders/Watch" || m.Kind() != "server streaming" || m.ClientStreams() {
		t.Errorf("method %s %s", m.Path(), m.Kind())
	}
	if _, err := Resolve(src, "shop.v1.Nope/Place"); err == nil || !strings.Contains(err.Error(), "has no service shop.v1.Nope; it has shop.v1.Orders") {
		t.Errorf("unknown service: %v", err)
	}
	if _, err := Resolve(src, "shop.v1.Orders/Cancel"); err == nil || !strings.Contains(err.Error(), "its methods are Place, Watch") {
		t.Errorf("unknown method: %v", err)
	}
}

func order(t testing.TB) protoreflect.MessageDescriptor {
	m, err := Resolve(shop(t), "shop.v1.Orders/Place")
	if err != nil {
		t.Fatal(err)
	}
	return m.Desc.Input()
}

// Encode accepts what protojson accepts and names the path of what does
// not fit.
func TestEncode(t *testing.T) {
	md := order(t)
	good := `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"},{"sku":"b","qty":"3","size":1}],
		"tags":{"x":"5","y":7},"at":"2026-01-02T03:04:05Z","gift":true,"total":9.5,"priority":4,"note":"aGk=","customer_name":"c","customerName":"d"}`
	b, err := Encode(md, []byte(strings.Replace(good, `,"customerName":"d"`, "", 1)))
	if err != nil {
		t.Fatal(err)
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b, m); err != nil {
		t.Fatal(err)
	}
	lines := m.Get(md.Fields().ByName("lines")).List()
	if lines.Len() != 2 || lines.Get(1).Message().Get(md.Fields().ByName("lines").Message().Fields().ByName("qty")).Int() != 3 {
		t.Errorf("decoded %v", m)
	}
	for _, tc := range []struct{ in, want string }{
		{`{"lines":[{"sku":"a"},{"qty":"x"}]}`, `lines[1].qty: expected an integer (int32), found a string "x"`},
		{`{"lines":[{"size":"HUGE"}]}`, `lines[0].size: shop.v1.Size has no value "HUGE"; its values are SIZE_UNSPECIFIED, SMALL, LARGE`},
		{`{"lines":{"sku":"a"}}`, `lines: expected a JSON array (a repeated field), found an object`},
		{`{"tags":{"x":"y"}}`, `tags["x"]: expected an integer (int64), found a string "y"`},
		{`{"priority":-1}`, `priority: -1 is out of range for uint32`},
		{`{"priority":1.5}`, `priority: expected an integer (uint32), found 1.5`},
		{`{"gift":"yes"}`, `gift: expected true or false (bool), found a string "yes"`},
		{`{"ids":"x"}`, `ids: shop.v1.Order has no field "ids"; its fields are id, lines, tags, at, gift, total, priority, note, customerName`},
		{`{"lines":[7]}`, `lines[0]: expected a JSON object (message shop.v1.Line), found the number 7`},
		{`[1]`, `the message: expected a JSON object`},
		{`{"at":"yesterday"}`, `does not fit shop.v1.Order`},
		{`{"id":"a","customerName":"b","customer_name":"c"}`, `does not fit shop.v1.Order`},
	} {
		_, err := Encode(md, []byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Encode(%s) = %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestSplitData(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{``, 1, ""}, {`{"a":1}`, 1, ""}, {` [ {"a":1}, {"a":2} ] `, 2, ""},
		{`[]`, 0, "empty array"}, {"{\n\"a\":}", 0, "line 2, column 5"}, {`{} {}`, 0, "not valid JSON"},
	} {
		msgs, err := SplitData([]byte(tc.in))
		if tc.want != "" {
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("SplitData(%q) = %v, want %q", tc.in, err, tc.want)
			}
			continue
		}
		if err != nil || len(msgs) != tc.n {
			t.Errorf("SplitData(%q) = %d messages, %v", tc.in, len(msgs), err)
		}
	}
}

func TestFramesAndJSON(t *testing.T) {
	md := order(t)
	a, _ := Encode(md, []byte(`{"id":"first","customer_name":"Ann"}`))
	b, _ := Encode(md, []byte(`{"id":"second"}`))
	body := AppendFrame(AppendFrame(nil, a), b)
	msgs, rest := Messages(append(body, 0, 0, 0))
	if len(msgs) != 2 || !bytes.Equal(msgs[0], a) || len(rest) != 3 {
		t.Fatalf("Messages: %d, rest %d", len(msgs), len(rest))
	}
	first, ok := FirstMessage(body)
	if !ok || !bytes.Equal(first, a) {
		t.Fatal("FirstMessage")
	}
	if _, ok := FirstMessage(body[:len(a)+4]); ok {
		t.Error("FirstMessage of a truncated frame")
	}
	var buf bytes.Buffer
	if err := ToJSON(&buf, md, first); err != nil || !strings.Contains(buf.String(), `"customerName":"Ann"`) {
		t.Errorf("ToJSON: %s %v", buf.String(), err)
	}
}

func TestProtoErrorsAndProtoset(t *testing.T) {
	if _, err := FromProto([]string{"testdata/missing.proto"}, nil); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.proto")
	os.WriteFile(bad, []byte("syntax = \"proto3\";\nmessage A { int32 x = ; }\n"), 0o644)
	if _, err := FromProto([]string{bad}, nil); err == nil || !strings.Contains(err.Error(), "bad.proto:2") {
		t.Errorf("syntax error: %v", err)
	}
	imp := filepath.Join(dir, "imp.proto")
	os.WriteFile(imp, []byte("syntax = \"proto3\";\nimport \"other/dep.proto\";\n"), 0o644)
	if _, err := FromProto([]string{imp}, nil); err == nil || !strings.Contains(err.Error(), "-i") {
		t.Errorf("missing import: %v", err)
	}
	md := order(t)
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{protodesc.ToFileDescriptorProto(md.ParentFile())}}
	b, _ := proto.Marshal(set)
	ps := filepath.Join(dir, "shop.protoset")
	os.WriteFile(ps, b, 0o644)
	src, err := FromProtoset(ps, 0) // timestamp.proto is not in the set: the built-in well-known types fill in
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Resolve(src, "shop.v1.Orders/Place"); err != nil {
		t.Error(err)
	}
	missing := filepath.Join(dir, "missing.protoset")
	if _, err := FromProtoset(missing, 0); err == nil || err.Error() != "--protoset "+missing+": no such file or directory" {
		t.Errorf("missing protoset: %v", err)
	}
	os.WriteFile(ps, []byte("not a protoset"), 0o644)
	if _, err := FromProtoset(ps, 0); err == nil || !strings.Contains(err.Error(), "FileDescriptorSet") {
		t.Errorf("garbage protoset: %v", err)
	}
}

// FuzzEncode: any JSON either encodes or is an error; nothing panics. And
// check accepts all that protojson accepts: Encode asks it only about data
// that protojson rejects.
func FuzzEncode(f *testing.F) {
	md := order(f)
	for _, s := range []string{`{"id":"x"}`, `{"lines":[{"qty":1,"size":"SMALL"}]}`, `{"tags":{"a":"1"}}`, `[{"id":1}]`, `{"at":"2026-01-01T00:00:00Z"}`, `{"priority":1e30}`,
		`{"priority":"4294967295","tags":{"a":"-9223372036854775808","b":9223372036854775807,"c":"1e2","d":15e-1}}`,
		`{"lines":[{"qty":-2147483648,"size":2},{"qty":"2147483647","size":null}],"total":"NaN"}`,
		`{"total":"-Infinity","note":null,"gift":false,"at":null,"customerName":"a"}`, `{"total":"1e-400","priority":0.0}`,
		`{"total":1e400}`, `{"priority":-0}`, `{"tags":{"x":null}}`, `{"lines":[null]}`, `{"customer_name":"a","id":"\ud800"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs, err := SplitData(data)
		if err != nil {
			return
		}
		for _, m := range msgs {
			if b, err := Encode(md, m); err == nil {
				if err := proto.Unmarshal(b, dynamicpb.NewMessage(md)); err != nil {
					t.Fatalf("encoded bytes do not decode: %v", err)
				}
				if err := explain(md, m); err != nil {
					t.Fatalf("protojson accepts %s, check rejects it: %v", m, err)
				}
			}
		}
	})
}

// FuzzMessages: framing never reads past the body.
func FuzzMessages(f *testing.F) {
	f.Add(AppendFrame(nil, []byte("abc")))
	f.Add([]byte{0, 0, 0, 0, 9, 1})
	f.Add([]byte{0, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, body []byte) {
		msgs, rest := Messages(body)
		n := len(rest)
		for _, m := range msgs {
			n += 5 + len(m)
		}
		if n != len(body) {
			t.Fatalf("frames and rest cover %d of %d bytes", n, len(body))
		}
		if m, ok := FirstMessage(body); ok != (len(msgs) > 0 && body[0] == 0) || ok && !bytes.Equal(m, msgs[0]) {
			t.Fatalf("FirstMessage disagrees with Messages")
		}
	})
}

func TestSplitBinary(t *testing.T) {
	md := order(t)
	a, _ := Encode(md, []byte(`{"id":"a","lines":[{"sku":"x"}]}`))
	b, _ := Encode(md, []byte(`{"id":"bb"}`))
	var delimited []byte
	for _, m := range [][]byte{a, b} {
		delimited = protowire.AppendVarint(delimited, uint64(len(m)))
		delimited = append(delimited, m...)
	}
	msgs, err := SplitBinary(md, delimited)
	if err != nil || len(msgs) != 2 || !bytes.Equal(msgs[1], b) {
		t.Errorf("delimited: %d messages, %v", len(msgs), err)
	}
	msgs, err = SplitBinary(md, a)
	if err != nil || len(msgs) != 1 || !bytes.Equal(msgs[0], a) {
		t.Errorf("single: %d messages, %v", len(msgs), err)
	}
	if _, err := SplitBinary(md, []byte{0xff, 0xff, 0xff}); err == nil {
		t.Error("garbage accepted")
	}
}

// A map entry (field 3, tags) whose key is followed by a second key of
// another wire type makes protobuf-go's decoder panic on a dynamic message
// (found by FuzzCheckWire): -B's check and a capture's decoding say it does
// not decode instead.
func TestMalformedMapEntry(t *testing.T) {
	md := order(t)
	bad := []byte("\x1a\x07\n\x00\r0000")
	if _, err := SplitBinary(md, bad); err == nil {
		t.Error("SplitBinary accepted a malformed map entry")
	}
	if err := ToJSON(io.Discard, md, bad); err == nil || !strings.Contains(err.Error(), "does not decode") {
		t.Errorf("ToJSON: %v, want a message that does not decode", err)
	}
}

func TestTimeout(t *testing.T) {
	for d, want := range map[time.Duration]string{
		20 * time.Second: "20S", 100 * time.Millisecond: "100m", 1500 * time.Microsecond: "1500u",
		time.Nanosecond: "1n", 200 * time.Hour: "200H", 30 * time.Minute: "30M",
		100*time.Second + time.Nanosecond: "100001m",
	} {
		if got := Timeout(d); got != want {
			t.Errorf("Timeout(%v) = %s, want %s", d, got, want)
		}
	}
}

// BenchmarkEncode is a templated gRPC call's per-call work: the expanded
// data split into messages, then one encoded.
func BenchmarkEncode(b *testing.B) {
	md := order(b)
	for _, bc := range []struct{ name, data string }{
		{"object", `{"id":"o1","lines":[{"sku":"a","qty":2,"size":"LARGE"},{"sku":"b","qty":"3","size":1}],"tags":{"x":"5","y":7},"at":"2026-01-02T03:04:05Z","gift":true,"total":9.5,"priority":4,"note":"aGk=","customer_name":"c"}`},
		{"array", `[{"id":"o1","lines":[{"sku":"a","qty":2}]},{"id":"o2","gift":true,"tags":{"x":"5"}}]`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			data := []byte(bc.data)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				msgs, err := SplitData(data)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Encode(md, msgs[i%len(msgs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
