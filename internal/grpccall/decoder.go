package grpccall

import (
	"encoding/base64"
	"math"
	"math/bits"
	"strconv"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Decoder writes one message type's protobuf bytes as JSON for captures
// and checks, as ToJSON does — protojson's field names, value forms and
// field order, without its white space — and without building a message:
// the type's fields are looked up once, when the Decoder is made (a
// scenario's gRPC step makes one for its response type when its file
// loads), and AppendJSON walks the bytes once. It allocates nothing.
//
// It gives up (ok false) on what it does not cover, and the caller calls
// ToJSON: well-known types (Timestamp, Struct, …), groups, proto2 required
// fields, a singular message field sent twice (which merges), two members
// of one oneof, invalid UTF-8, malformed bytes, messages of more than 64
// fields, or more than 64 values at one level. FuzzDecoder holds what it
// writes to protojson's output, byte for byte once compacted.
type Decoder struct {
	root *decMsg
}

type decMsg struct {
	fields []*decField // declaration order (protojson's)
	byNum  map[protowire.Number]int
	giveUp bool // a well-known type, required fields or too many fields
}

type decField struct {
	name     []byte // `"jsonName":`
	num      protowire.Number
	kind     protoreflect.Kind
	list     bool
	implicit bool // no presence: a zero value is not written
	oneof    int  // 1 + the index of its (real) oneof; 0 for none
	msg      *decMsg
	enum     protoreflect.EnumDescriptor
	key, val *decField // a map's entry fields
}

// NewDecoder prepares the writing of md's messages as JSON.
func NewDecoder(md protoreflect.MessageDescriptor) *Decoder {
	return &Decoder{root: newDecMsg(md, map[protoreflect.FullName]*decMsg{})}
}

func newDecMsg(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*decMsg) *decMsg {
	if m := seen[md.FullName()]; m != nil {
		return m
	}
	m := &decMsg{byNum: map[protowire.Number]int{}}
	seen[md.FullName()] = m
	fields := md.Fields()
	m.giveUp = md.FullName().Parent() == "google.protobuf" || fields.Len() > 64 || md.RequiredNumbers().Len() > 0
	if m.giveUp {
		return m
	}
	for i := 0; i < fields.Len(); i++ {
		f := newDecField(fields.Get(i), seen)
		m.byNum[f.num] = len(m.fields)
		m.fields = append(m.fields, f)
	}
	return m
}

func newDecField(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]*decMsg) *decField {
	f := &decField{name: []byte(strconv.Quote(fd.JSONName()) + ":"), num: fd.Number(), kind: fd.Kind(), list: fd.IsList(),
		implicit: !fd.HasPresence() && !fd.IsList() && !fd.IsMap(), enum: fd.Enum()}
	if o := fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
		f.oneof = 1 + o.Index()
	}
	switch {
	case fd.IsMap():
		f.key, f.val = newDecField(fd.MapKey(), seen), newDecField(fd.MapValue(), seen)
	case fd.Kind() == protoreflect.MessageKind:
		f.msg = newDecMsg(fd.Message(), seen)
	}
	return f
}

// AppendJSON appends payload, one message, as JSON to dst. ok is false
// when the Decoder leaves it to ToJSON; dst is then returned as it was.
func (d *Decoder) AppendJSON(dst, payload []byte) ([]byte, bool) {
	out, ok := d.root.write(dst, payload, 0)
	if !ok {
		return dst, false
	}
	return out, true
}

// maxDepth bounds nesting, as protobuf's own decoder does.
const maxDepth = 100

// value is one field value of a message's bytes: its field, wire type and
// what it holds (a varint or fixed value in n, the bytes of a
// length-delimited one in b).
type value struct {
	field int
	wt    protowire.Type
	n     uint64
	b     []byte
}

// write appends the message in b as a JSON object.
func (m *decMsg) write(dst, b []byte, depth int) ([]byte, bool) {
	if m.giveUp || depth > maxDepth {
		return nil, false
	}
	var vals [64]value
	n := 0
	for len(b) > 0 {
		num, v, rest, ok := consumeField(b)
		if !ok {
			return nil, false
		}
		b = rest
		i, known := m.byNum[num]
		if !known || !m.fields[i].accepts(v.wt) {
			continue // unknown (a wrong wire type too): not in protojson's output
		}
		if n == len(vals) {
			return nil, false
		}
		v.field = i
		vals[n] = v
		n++
	}
	list := vals[:n]
	for i := 1; i < len(list); i++ { // stable, by declaration order
		for j := i; j > 0 && list[j].field < list[j-1].field; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	dst = append(dst, '{')
	first := true
	var oneofs uint64
	for i := 0; i < len(list); {
		j := i + 1
		for j < len(list) && list[j].field == list[i].field {
			j++
		}
		f := m.fields[list[i].field]
		if f.oneof > 0 {
			if bit := uint64(1) << (f.oneof % 64); oneofs&bit != 0 {
				return nil, false // two members: the last wins in protobuf; left to ToJSON
			} else {
				oneofs |= bit
			}
		}
		mark := len(dst)
		if !first {
			dst = append(dst, ',')
		}
		dst = append(dst, f.name...)
		var wrote, ok bool
		switch {
		case f.key != nil:
			dst, wrote, ok = f.writeMap(dst, list[i:j], depth)
		case f.list:
			dst, wrote, ok = f.writeList(dst, list[i:j], depth)
		default:
			if f.kind == protoreflect.MessageKind && j-i > 1 {
				return nil, false // a message sent twice merges
			}
			for _, v := range list[i : j-1] {
				if !f.validString(v) {
					return nil, false // protobuf checks a value the last replaces too
				}
			}
			dst, wrote, ok = f.writeOne(dst, list[j-1], depth, f.implicit)
		}
		if !ok {
			return nil, false
		}
		if wrote {
			first = false
		} else {
			dst = dst[:mark]
		}
		i = j
	}
	return append(dst, '}'), true
}

// consumeField reads one field of a message's bytes: its number and
// value, and what follows. ok is false for malformed bytes, a number out
// of range, and groups (left to ToJSON).
func consumeField(b []byte) (protowire.Number, value, []byte, bool) {
	num, wt, k := protowire.ConsumeTag(b)
	if k < 0 || !num.IsValid() {
		return 0, value{}, nil, false
	}
	b = b[k:]
	v := value{wt: wt}
	switch wt {
	case protowire.VarintType:
		v.n, k = protowire.ConsumeVarint(b)
	case protowire.Fixed32Type:
		var x uint32
		x, k = protowire.ConsumeFixed32(b)
		v.n = uint64(x)
	case protowire.Fixed64Type:
		v.n, k = protowire.ConsumeFixed64(b)
	case protowire.BytesType:
		v.b, k = protowire.ConsumeBytes(b)
	default:
		return 0, value{}, nil, false
	}
	if k < 0 {
		return 0, value{}, nil, false
	}
	return num, v, b[k:], true
}

// accepts reports whether wire type wt can carry the field's values
// (packed or not, for repeated scalars).
func (f *decField) accepts(wt protowire.Type) bool {
	want := wireOf(f.kind)
	if f.key != nil {
		want = protowire.BytesType
	}
	return wt == want || f.list && wt == protowire.BytesType && want != protowire.BytesType
}

func wireOf(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind, protoreflect.FloatKind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind, protoreflect.DoubleKind:
		return protowire.Fixed64Type
	case protoreflect.StringKind, protoreflect.BytesKind, protoreflect.MessageKind:
		return protowire.BytesType
	case protoreflect.GroupKind:
		return protowire.StartGroupType
	}
	return protowire.VarintType
}

// writeList writes a repeated field's values (packed runs expanded) as an
// array; nothing when it has none.
func (f *decField) writeList(dst []byte, vals []value, depth int) ([]byte, bool, bool) {
	dst = append(dst, '[')
	count := 0
	for _, v := range vals {
		if v.wt == protowire.BytesType && wireOf(f.kind) != protowire.BytesType { // packed
			b := v.b
			for len(b) > 0 {
				var x value
				var k int
				switch x.wt = wireOf(f.kind); x.wt {
				case protowire.VarintType:
					x.n, k = protowire.ConsumeVarint(b)
				case protowire.Fixed32Type:
					var u uint32
					u, k = protowire.ConsumeFixed32(b)
					x.n = uint64(u)
				default:
					x.n, k = protowire.ConsumeFixed64(b)
				}
				if k < 0 {
					return nil, false, false
				}
				b = b[k:]
				if count > 0 {
					dst = append(dst, ',')
				}
				var ok bool
				if dst, _, ok = f.writeOne(dst, x, depth, false); !ok {
					return nil, false, false
				}
				count++
			}
			continue
		}
		if count > 0 {
			dst = append(dst, ',')
		}
		var ok bool
		if dst, _, ok = f.writeOne(dst, v, depth, false); !ok {
			return nil, false, false
		}
		count++
	}
	return append(dst, ']'), count > 0, true
}

// writeMap writes a map field's entries as an object, ordered by key as
// protojson orders them; nothing when it has none.
func (f *decField) writeMap(dst []byte, vals []value, depth int) ([]byte, bool, bool) {
	type entry struct {
		key, val value
		num      int64 // an integer key
		u        bool  // the key is unsigned
	}
	var entries [64]entry
	if len(vals) > len(entries) {
		return nil, false, false
	}
	for i, v := range vals {
		e := entry{key: value{wt: wireOf(f.key.kind)}, val: value{wt: wireOf(f.val.kind)}}
		b := v.b
		for len(b) > 0 {
			num, x, rest, ok := consumeField(b)
			if !ok {
				return nil, false, false
			}
			b = rest
			wt := x.wt
			switch {
			case num == 1 && wt == e.key.wt:
				if !f.key.validString(x) {
					return nil, false, false // protobuf checks a key a later one replaces too
				}
				e.key = x
			case num == 2 && wt == e.val.wt:
				if f.val.kind == protoreflect.MessageKind && e.val.b != nil {
					return nil, false, false // a value sent twice merges
				}
				if !f.val.validString(x) {
					return nil, false, false // protobuf checks a value a later one replaces too
				}
				e.val = x
			case num == 1 || num == 2:
				// A key or value of another wire type: left to ToJSON, whose
				// decoder (protobuf-go's reflective one) then drops the key
				// it had and fails the message.
				return nil, false, false
			}
		}
		e.num, e.u = f.key.intKey(e.key.n)
		// Later entries of the same key replace earlier ones.
		dup := -1
		for j := range i {
			if entries[j].key.wt == e.key.wt && entries[j].key.n == e.key.n && string(entries[j].key.b) == string(e.key.b) {
				dup = j
			}
		}
		if dup >= 0 {
			return nil, false, false
		}
		entries[i] = e
	}
	list := entries[:len(vals)]
	less := func(a, b *entry) bool {
		switch f.key.kind {
		case protoreflect.StringKind:
			return string(a.key.b) < string(b.key.b)
		case protoreflect.BoolKind:
			return a.key.n == 0 && b.key.n != 0
		}
		if a.u {
			return uint64(a.num) < uint64(b.num)
		}
		return a.num < b.num
	}
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && less(&list[j], &list[j-1]); j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
	dst = append(dst, '{')
	for i := range list {
		e := &list[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if f.key.kind == protoreflect.StringKind {
			var ok bool
			if dst, ok = appendQuoted(dst, e.key.b); !ok {
				return nil, false, false
			}
		} else {
			dst = append(dst, '"')
			switch {
			case f.key.kind == protoreflect.BoolKind:
				dst = strconv.AppendBool(dst, e.key.n != 0)
			case e.u:
				dst = strconv.AppendUint(dst, uint64(e.num), 10)
			default:
				dst = strconv.AppendInt(dst, e.num, 10)
			}
			dst = append(dst, '"')
		}
		dst = append(dst, ':')
		var ok bool
		if f.val.kind == protoreflect.MessageKind && e.val.b == nil {
			e.val.b = []byte{} // an entry without its message value: an empty one
		}
		if dst, _, ok = f.val.writeOne(dst, e.val, depth, false); !ok {
			return nil, false, false
		}
	}
	return append(dst, '}'), len(list) > 0, true
}

// validString reports whether v, a value of f, is valid UTF-8 when f is a
// string field. A value that a later one replaces is never written, but
// protobuf's decoder checks it all the same (proto3) and fails the
// message: the Decoder then leaves the message to ToJSON.
func (f *decField) validString(v value) bool {
	return f.kind != protoreflect.StringKind || utf8.Valid(v.b)
}

// intKey is a map key's integer value, and whether it is unsigned.
func (f *decField) intKey(n uint64) (int64, bool) {
	switch f.kind {
	case protoreflect.Int32Kind:
		return int64(int32(n)), false
	case protoreflect.Sint32Kind:
		return int64(int32(protowire.DecodeZigZag(n & math.MaxUint32))), false
	case protoreflect.Sint64Kind:
		return protowire.DecodeZigZag(n), false
	case protoreflect.Sfixed32Kind:
		return int64(int32(uint32(n))), false
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind, protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return int64(n), true
	}
	return int64(n), false
}

// writeOne writes one value of the field. wrote is false when it is an
// implicit field's zero value, which protojson leaves out.
func (f *decField) writeOne(dst []byte, v value, depth int, implicit bool) (out []byte, wrote, ok bool) {
	n := v.n
	switch f.kind {
	case protoreflect.MessageKind:
		out, ok = f.msg.write(dst, v.b, depth+1)
		return out, ok, ok
	case protoreflect.StringKind:
		if implicit && len(v.b) == 0 {
			return dst, false, true
		}
		out, ok = appendQuoted(dst, v.b)
		return out, ok, ok
	case protoreflect.BytesKind:
		if implicit && len(v.b) == 0 {
			return dst, false, true
		}
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.b)
		return append(dst, '"'), true, true
	case protoreflect.BoolKind:
		return strconv.AppendBool(dst, n != 0), !implicit || n != 0, true
	case protoreflect.EnumKind:
		if f.enum.FullName().Parent() == "google.protobuf" {
			return nil, false, false // NullValue is written as null
		}
		num := protoreflect.EnumNumber(int32(n))
		if implicit && num == 0 {
			return dst, false, true
		}
		if ev := f.enum.Values().ByNumber(num); ev != nil {
			dst = append(dst, '"')
			dst = append(dst, ev.Name()...)
			return append(dst, '"'), true, true
		}
		return strconv.AppendInt(dst, int64(num), 10), true, true
	case protoreflect.FloatKind:
		x := math.Float32frombits(uint32(n))
		if implicit && math.Float32bits(x) == 0 {
			return dst, false, true
		}
		return appendFloat(dst, float64(x), 32), true, true
	case protoreflect.DoubleKind:
		x := math.Float64frombits(n)
		if implicit && n == 0 {
			return dst, false, true
		}
		return appendFloat(dst, x, 64), true, true
	}
	var x int64
	unsigned, quoted := false, false
	switch f.kind {
	case protoreflect.Int32Kind:
		x = int64(int32(n))
	case protoreflect.Sint32Kind:
		x = int64(int32(protowire.DecodeZigZag(n & math.MaxUint32)))
	case protoreflect.Sfixed32Kind:
		x = int64(int32(uint32(n)))
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		x, unsigned = int64(uint32(n)), true
	case protoreflect.Int64Kind, protoreflect.Sfixed64Kind:
		x, quoted = int64(n), true
	case protoreflect.Sint64Kind:
		x, quoted = protowire.DecodeZigZag(n), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		x, unsigned, quoted = int64(n), true, true
	default:
		return nil, false, false
	}
	if implicit && x == 0 {
		return dst, false, true
	}
	if quoted {
		dst = append(dst, '"')
	}
	if unsigned {
		dst = strconv.AppendUint(dst, uint64(x), 10)
	} else {
		dst = strconv.AppendInt(dst, x, 10)
	}
	if quoted {
		dst = append(dst, '"')
	}
	return dst, true, true
}

// appendQuoted appends s as a JSON string, escaped as protojson escapes
// it; invalid UTF-8 is refused (protojson refuses it too).
func appendQuoted(dst, s []byte) ([]byte, bool) {
	dst = append(dst, '"')
	for len(s) > 0 {
		c := s[0]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			s = s[1:]
			continue
		}
		r, n := utf8.DecodeRune(s)
		switch {
		case r == utf8.RuneError && n == 1:
			return nil, false
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\b':
			dst = append(dst, '\\', 'b')
		case r == '\f':
			dst = append(dst, '\\', 'f')
		case r == '\n':
			dst = append(dst, '\\', 'n')
		case r == '\r':
			dst = append(dst, '\\', 'r')
		case r == '\t':
			dst = append(dst, '\\', 't')
		case r < ' ':
			dst = append(dst, '\\', 'u')
			dst = append(dst, "0000"[1+(bits.Len32(uint32(r))-1)/4:]...)
			dst = strconv.AppendUint(dst, uint64(r), 16)
		default:
			dst = append(dst, s[:n]...)
		}
		s = s[n:]
	}
	return append(dst, '"'), true
}

// appendFloat writes a float as protojson does (encoding/json's choice of
// plain or exponent form; NaN and the infinities as strings).
func appendFloat(dst []byte, x float64, bitSize int) []byte {
	switch {
	case math.IsNaN(x):
		return append(dst, `"NaN"`...)
	case math.IsInf(x, 1):
		return append(dst, `"Infinity"`...)
	case math.IsInf(x, -1):
		return append(dst, `"-Infinity"`...)
	}
	format := byte('f')
	if abs := math.Abs(x); abs != 0 {
		if bitSize == 64 && (abs < 1e-6 || abs >= 1e21) || bitSize == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	dst = strconv.AppendFloat(dst, x, format, -1, bitSize)
	if format == 'e' { // e-07 → e-7
		if n := len(dst); n >= 4 && dst[n-4] == 'e' && dst[n-3] == '-' && dst[n-2] == '0' {
			dst[n-2] = dst[n-1]
			dst = dst[:n-1]
		}
	}
	return dst
}
