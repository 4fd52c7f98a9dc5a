package grpccall

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// SplitData reads -d's JSON: an object is one message, an array a list of
// messages (a stream's, or payloads used in turn by unary calls). The
// messages are returned as their JSON text. A template's data is split
// for every call, so valid data is scanned once; syntaxCheck's parse,
// which places the error, runs only for data that is not valid.
func SplitData(data []byte) ([]json.RawMessage, error) {
	d := bytes.TrimSpace(data)
	if len(d) == 0 {
		return []json.RawMessage{json.RawMessage("{}")}, nil
	}
	if d[0] == '[' {
		var list []json.RawMessage
		if err := json.Unmarshal(d, &list); err != nil {
			if serr := syntaxCheck(d); serr != nil {
				return nil, serr
			}
			return nil, fmt.Errorf("not a JSON array of messages: %v", err)
		}
		if len(list) == 0 {
			return nil, fmt.Errorf("an empty array: expected at least one message")
		}
		return list, nil
	}
	if !json.Valid(d) {
		if err := syntaxCheck(d); err != nil {
			return nil, err
		}
	}
	return []json.RawMessage{json.RawMessage(d)}, nil
}

// syntaxCheck reports a JSON syntax error with its line and column.
func syntaxCheck(d []byte) error {
	var v any
	err := json.Unmarshal(d, &v)
	if err == nil {
		return nil
	}
	if se, ok := err.(*json.SyntaxError); ok {
		line := 1 + bytes.Count(d[:se.Offset], []byte("\n"))
		col := int(se.Offset) - bytes.LastIndexByte(d[:se.Offset], '\n') - 1
		return fmt.Errorf("not valid JSON at line %d, column %d: %v", line, col, se)
	}
	return fmt.Errorf("not valid JSON: %v", err)
}

// Encode turns one message's JSON into protobuf bytes for md. A value that
// does not fit the message is an error naming the field's path
// ("items[2].cpus: expected an integer (int32), found a string").
// protojson parses the data first: only data it rejects is parsed again,
// by explain, for that message.
func Encode(md protoreflect.MessageDescriptor, data []byte) ([]byte, error) {
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(data, m); err != nil {
		if cerr := explain(md, data); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("does not fit %s: %v", md.FullName(), strings.TrimPrefix(err.Error(), "proto: "))
	}
	return proto.MarshalOptions{Deterministic: true}.Marshal(m)
}

// explain is why data does not fit md, named by the field's path, or nil
// when check finds nothing (protojson's own error then stands). check
// accepts all that protojson accepts (FuzzEncode holds it to that), so
// data that protojson takes never needs it.
func explain(md protoreflect.MessageDescriptor, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return check(md, v, "")
}

// check walks v beside md and names the first field that does not fit.
// Well-known types are left to protojson, which knows their JSON forms.
func check(md protoreflect.MessageDescriptor, v any, path string) error {
	if strings.HasPrefix(string(md.FullName()), "google.protobuf.") {
		return nil
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("%s: expected a JSON object (message %s), found %s", orTop(path), md.FullName(), kindOf(v))
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fd := md.Fields().ByJSONName(k)
		if fd == nil {
			fd = md.Fields().ByTextName(k)
		}
		p := join(path, k)
		if fd == nil {
			return fmt.Errorf("%s: %s has no field %q; its fields are %s", p, md.FullName(), k, fieldNames(md))
		}
		if err := checkField(fd, obj[k], p); err != nil {
			return err
		}
	}
	return nil
}

func checkField(fd protoreflect.FieldDescriptor, v any, path string) error {
	if v == nil {
		return nil // null: the field's default
	}
	switch {
	case fd.IsMap():
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: expected a JSON object (a map), found %s", path, kindOf(v))
		}
		for k, e := range obj {
			if err := checkValue(fd.MapValue(), e, path+"["+strconv.Quote(k)+"]"); err != nil {
				return err
			}
		}
		return nil
	case fd.IsList():
		list, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: expected a JSON array (a repeated field), found %s", path, kindOf(v))
		}
		for i, e := range list {
			if err := checkValue(fd, e, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	return checkValue(fd, v, path)
}

// checkValue checks one value of a field (an element, for repeated fields).
func checkValue(fd protoreflect.FieldDescriptor, v any, path string) error {
	if v == nil {
		return nil
	}
	want := func(what string) error {
		return fmt.Errorf("%s: expected %s (%s), found %s", path, what, kindName(fd), kindOf(v))
	}
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return check(fd.Message(), v, path)
	case protoreflect.StringKind, protoreflect.BytesKind:
		if _, ok := v.(string); !ok {
			return want("a string")
		}
	case protoreflect.BoolKind:
		if _, ok := v.(bool); !ok {
			return want("true or false")
		}
	case protoreflect.EnumKind:
		switch x := v.(type) {
		case string:
			if fd.Enum().Values().ByName(protoreflect.Name(x)) == nil {
				var names []string
				for i := 0; i < fd.Enum().Values().Len(); i++ {
					names = append(names, string(fd.Enum().Values().Get(i).Name()))
				}
				return fmt.Errorf("%s: %s has no value %q; its values are %s", path, fd.Enum().FullName(), x, strings.Join(names, ", "))
			}
		case json.Number:
		default:
			return want("an enum name or number")
		}
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		switch x := v.(type) {
		case json.Number:
		case string:
			if _, err := strconv.ParseFloat(x, 64); err != nil && x != "NaN" && x != "Infinity" && x != "-Infinity" {
				return want("a number")
			}
		default:
			return want("a number")
		}
	default: // the integer kinds
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			if _, err := strconv.ParseFloat(x, 64); err != nil {
				return want("an integer")
			}
			s = x
		default:
			return want("an integer")
		}
		if err := checkInt(fd.Kind(), s); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
	}
	return nil
}

// checkInt checks an integer's text against its kind's range.
func checkInt(k protoreflect.Kind, s string) error {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) {
		return fmt.Errorf("expected an integer (%s), found %s", k, s)
	}
	var lo, hi float64
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		lo, hi = math.MinInt32, math.MaxInt32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		lo, hi = 0, math.MaxUint32
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		lo, hi = 0, math.MaxUint64
	default:
		lo, hi = math.MinInt64, math.MaxInt64
	}
	if f < lo || f > hi {
		return fmt.Errorf("%s is out of range for %s", s, k)
	}
	return nil
}

func kindName(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		return "enum " + string(fd.Enum().FullName())
	case protoreflect.MessageKind:
		return "message " + string(fd.Message().FullName())
	}
	return fd.Kind().String()
}

func kindOf(v any) string {
	switch x := v.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string " + strconv.Quote(x)
	case json.Number:
		return "the number " + x.String()
	case bool:
		return "a boolean"
	}
	return "null"
}

func fieldNames(md protoreflect.MessageDescriptor) string {
	var names []string
	for i := 0; i < md.Fields().Len(); i++ {
		names = append(names, md.Fields().Get(i).JSONName())
	}
	return listOrNone(names)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func orTop(path string) string {
	if path == "" {
		return "the message"
	}
	return path
}

// PrefixLen is the length of a gRPC message's prefix: a compressed flag
// and a 4-byte length.
const PrefixLen = 5

// FrameInPlace frames the message in b[PrefixLen:] by writing its prefix
// into b[:PrefixLen] (room left before it: bodyfile.Map), and returns b:
// a large message is framed where it is, not copied.
func FrameInPlace(b []byte) []byte {
	b[0] = 0
	binary.BigEndian.PutUint32(b[1:PrefixLen], uint32(len(b)-PrefixLen))
	return b
}

// AppendFrame appends msg as one gRPC length-prefixed message
// (uncompressed).
func AppendFrame(dst, msg []byte) []byte {
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(msg)))
	return append(dst, msg...)
}

// Messages splits a body of framed messages. It stops at an incomplete
// last frame: rest holds it.
func Messages(body []byte) (msgs [][]byte, rest []byte) {
	for len(body) >= 5 {
		n := binary.BigEndian.Uint32(body[1:5])
		if uint64(len(body)-5) < uint64(n) {
			break
		}
		msgs = append(msgs, body[5:5+n])
		body = body[5+n:]
	}
	return msgs, body
}

// FirstMessage is the payload of the first complete message in a framed
// body, and whether there is one. Compressed messages (flag 1) are not
// decoded: hail asks for none.
func FirstMessage(body []byte) ([]byte, bool) {
	if len(body) < 5 || body[0] != 0 {
		return nil, false
	}
	n := binary.BigEndian.Uint32(body[1:5])
	if uint64(len(body)-5) < uint64(n) {
		return nil, false
	}
	return body[5 : 5+n], true
}

// decode decodes data as a message of type md. Data that makes protobuf's
// decoder panic is an error too: in protobuf-go v1.36 a map entry whose key
// is followed by a second key of another wire type ("\x1a\x07\n\x00\r0000"
// for a map field 3) panics in a dynamic message's map, and neither a
// hostile server's reply nor a malformed -B file may end hail with a stack
// trace.
func decode(md protoreflect.MessageDescriptor, data []byte) (m *dynamicpb.Message, err error) {
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("the message does not decode: %v", r)
		}
	}()
	m = dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(data, m); err != nil {
		return nil, err
	}
	return m, nil
}

// ToJSON decodes one message of type md and writes it as protojson (JSON
// names, as protojson writes them) to w, for captures. A payload that does
// not decode, panic included (decode), is an error.
func ToJSON(w io.Writer, md protoreflect.MessageDescriptor, payload []byte) error {
	m, err := decode(md, payload)
	if err != nil {
		return err
	}
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// SplitBinary reads -B's serialized request: messages of type md each
// prefixed by its length as a varint (as ghz and protodelim write them),
// or else one message. Each is checked to decode as md.
func SplitBinary(md protoreflect.MessageDescriptor, data []byte) ([][]byte, error) {
	var msgs [][]byte
	for rest := data; len(rest) > 0; {
		n, k := protowire.ConsumeVarint(rest)
		if k < 0 || uint64(len(rest)-k) < n {
			msgs = nil
			break
		}
		m := rest[k : k+int(n)]
		if checkBinary(md, m) != nil {
			msgs = nil
			break
		}
		msgs, rest = append(msgs, m), rest[k+int(n):]
	}
	if len(msgs) > 0 {
		return msgs, nil
	}
	if err := checkBinary(md, data); err != nil {
		return nil, fmt.Errorf("not a serialized %s (nor length-delimited ones): %v", md.FullName(), err)
	}
	return [][]byte{data}, nil
}

// checkBinary checks that data decodes as md. A large message (a MiB or
// more: a file sent as a bytes field) is checked by its wire format — each
// field's tag, wire type and length, those of md's message fields within
// them — since decoding it would copy its bytes fields.
func checkBinary(md protoreflect.MessageDescriptor, data []byte) error {
	if len(data) < 1<<20 {
		_, err := decode(md, data)
		return err
	}
	return checkWire(md, data, 0)
}

// checkWire walks the fields of a serialized md.
func checkWire(md protoreflect.MessageDescriptor, b []byte, depth int) error {
	if depth > 100 {
		return errors.New("messages nested too deep")
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		if fd := md.Fields().ByNumber(num); fd != nil && typ == protowire.BytesType && fd.Message() != nil && !fd.IsMap() {
			v, _ := protowire.ConsumeBytes(b)
			if err := checkWire(fd.Message(), v, depth+1); err != nil {
				return fmt.Errorf("%s: %v", fd.Name(), err)
			}
		}
		b = b[m:]
	}
	return nil
}
