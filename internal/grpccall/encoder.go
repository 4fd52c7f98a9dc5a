package grpccall

import (
	"encoding/base64"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
	"unsafe"

	"github.com/hail-loadgen/hail/internal/jsonstr"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Encoder turns a request's JSON into the protobuf bytes of one message
// type, as Encode does, without building a message: the type's fields are
// looked up once, when the Encoder is made (a scenario's gRPC step makes
// one when its file loads), and Append walks the JSON once, appending the
// wire bytes. It allocates nothing.
//
// It covers the JSON that requests are made of — objects of scalar, enum,
// string, bytes, nested message, repeated and map fields, by JSON or proto
// name — and gives up (ok false) on anything else: a well-known type
// (Timestamp, Struct, …), a number written with a fraction or exponent for
// an integer field, an escape in a field name, a duplicate field, a field
// it does not know, invalid UTF-8, anything out of range. The caller then
// calls Encode, which accepts or rejects exactly what protojson does and
// names what does not fit. So an Encoder never accepts what Encode
// rejects, and what it accepts encodes the same message (FuzzEncoder
// holds it to both).
//
// Written here rather than taken from a library: protojson (the only
// complete JSON mapping for Go) builds a dynamic message per call, which
// costs a scenario's gRPC step most of its CPU.
type Encoder struct {
	root *encMsg
}

type encMsg struct {
	byName map[string]*encField // by JSON name and by proto name
	wkt    bool                 // a google.protobuf type: its JSON form is its own
	many   bool                 // more than 64 fields: the seen set does not fit
}

type encField struct {
	fd       protoreflect.FieldDescriptor
	bit      uint64 // its bit in the message's seen set
	oneof    uint64 // the bit of its (real) oneof in the oneofs seen; 0 for none
	num      protowire.Number
	kind     protoreflect.Kind
	list     bool
	packed   bool
	implicit bool // no presence: a zero value is not encoded
	msg      *encMsg
	enum     protoreflect.EnumDescriptor
	key, val *encField // a map's entry fields
}

// NewEncoder prepares the encoding of md's JSON.
func NewEncoder(md protoreflect.MessageDescriptor) *Encoder {
	return &Encoder{root: newEncMsg(md, map[protoreflect.FullName]*encMsg{})}
}

func newEncMsg(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*encMsg) *encMsg {
	if m := seen[md.FullName()]; m != nil {
		return m
	}
	m := &encMsg{byName: map[string]*encField{}, wkt: md.FullName().Parent() == "google.protobuf"}
	seen[md.FullName()] = m
	fields := md.Fields()
	m.many = fields.Len() > 64
	if m.wkt || m.many {
		return m
	}
	oneofs := map[protoreflect.FullName]uint64{}
	for i := 0; i < fields.Len(); i++ {
		f := newEncField(fields.Get(i), seen)
		f.bit = 1 << i
		if o := f.fd.ContainingOneof(); o != nil && !o.IsSynthetic() {
			if oneofs[o.FullName()] == 0 {
				oneofs[o.FullName()] = 1 << len(oneofs)
			}
			f.oneof = oneofs[o.FullName()]
		}
		m.byName[f.fd.JSONName()] = f
		m.byName[string(f.fd.Name())] = f
	}
	return m
}

func newEncField(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]*encMsg) *encField {
	f := &encField{fd: fd, num: fd.Number(), kind: fd.Kind(), list: fd.IsList(), packed: fd.IsPacked(),
		implicit: !fd.HasPresence() && !fd.IsList() && !fd.IsMap(), enum: fd.Enum()}
	switch {
	case fd.IsMap():
		f.key, f.val = newEncField(fd.MapKey(), seen), newEncField(fd.MapValue(), seen)
		f.key.implicit, f.val.implicit = false, false // an entry's key and value are always written
	case fd.Kind() == protoreflect.MessageKind:
		f.msg = newEncMsg(fd.Message(), seen)
	}
	return f
}

// errGiveUp is what the Encoder's walk returns for what it leaves to Encode.
var errGiveUp = errors.New("left to protojson")

// Append appends the protobuf encoding of data, one JSON object, to dst.
// ok is false when the Encoder leaves data to Encode (see Encoder); dst
// is then returned as it was.
func (e *Encoder) Append(dst, data []byte) ([]byte, bool) {
	s := scanner{b: data}
	out, err := e.root.encode(dst, &s)
	if err != nil {
		return dst, false
	}
	s.space()
	if s.i != len(s.b) {
		return dst, false
	}
	return out, true
}

// encode appends the fields of the JSON object at s.
func (m *encMsg) encode(dst []byte, s *scanner) ([]byte, error) {
	if m.wkt || m.many || !s.byte('{') {
		return nil, errGiveUp
	}
	var seen, oneofs uint64
	if s.byte('}') {
		return dst, nil
	}
	for {
		key, ok := s.plainString()
		if !ok || !s.byte(':') {
			return nil, errGiveUp
		}
		f := m.byName[unsafe.String(unsafe.SliceData(key), len(key))]
		if f == nil || seen&f.bit != 0 {
			return nil, errGiveUp
		}
		seen |= f.bit
		if s.null() {
			if f.oneof != 0 || f.kind == protoreflect.EnumKind && f.enum.FullName() == "google.protobuf.NullValue" {
				return nil, errGiveUp
			}
		} else {
			if f.oneof != 0 {
				if oneofs&f.oneof != 0 {
					return nil, errGiveUp
				}
				oneofs |= f.oneof
			}
			var err error
			if dst, err = f.encode(dst, s); err != nil {
				return nil, err
			}
		}
		if s.byte('}') {
			return dst, nil
		}
		if !s.byte(',') {
			return nil, errGiveUp
		}
	}
}

// encode appends field f's value at s (not null).
func (f *encField) encode(dst []byte, s *scanner) ([]byte, error) {
	switch {
	case f.key != nil:
		return f.encodeMap(dst, s)
	case f.list:
		return f.encodeList(dst, s)
	}
	return f.encodeOne(dst, s, f.implicit)
}

// encodeList appends a repeated field's JSON array: packed (one
// length-delimited run of values) when the field is packed, one tagged
// value per element otherwise.
func (f *encField) encodeList(dst []byte, s *scanner) ([]byte, error) {
	if !s.byte('[') {
		return nil, errGiveUp
	}
	if s.byte(']') {
		return dst, nil
	}
	start := -1
	if f.packed {
		dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
		start = len(dst)
		dst = append(dst, 0)
	}
	for {
		if s.null() {
			return nil, errGiveUp
		}
		var err error
		if f.packed {
			dst, err = f.appendValue(dst, s, false)
		} else {
			dst, err = f.encodeOne(dst, s, false)
		}
		if err != nil {
			return nil, err
		}
		if s.byte(']') {
			break
		}
		if !s.byte(',') {
			return nil, errGiveUp
		}
	}
	if start >= 0 {
		dst = fixLength(dst, start)
	}
	return dst, nil
}

// encodeMap appends a map field's JSON object: an entry message (key 1,
// value 2) per member.
func (f *encField) encodeMap(dst []byte, s *scanner) ([]byte, error) {
	if !s.byte('{') {
		return nil, errGiveUp
	}
	if s.byte('}') {
		return dst, nil
	}
	var keys keySet
	for {
		key, ok := s.plainString()
		if !ok || !s.byte(':') || s.null() || !keys.add(key) {
			return nil, errGiveUp
		}
		dst = protowire.AppendTag(dst, f.num, protowire.BytesType)
		start := len(dst)
		dst = append(dst, 0)
		var err error
		if dst, err = f.key.appendKey(dst, key); err != nil {
			return nil, err
		}
		if dst, err = f.val.encodeOne(dst, s, false); err != nil {
			return nil, err
		}
		dst = fixLength(dst, start)
		if s.byte('}') {
			return dst, nil
		}
		if !s.byte(',') {
			return nil, errGiveUp
		}
	}
}

// keySet finds a map's duplicate keys (protojson rejects them) for maps
// of up to 16 members; a larger map is left to protojson.
type keySet struct {
	n    int
	keys [16][]byte
}

func (k *keySet) add(key []byte) bool {
	if k.n == len(k.keys) {
		return false
	}
	for _, have := range k.keys[:k.n] {
		if string(have) == string(key) {
			return false
		}
	}
	k.keys[k.n] = key
	k.n++
	return true
}

// appendKey appends a map entry's key, field 1, from the JSON member name.
func (f *encField) appendKey(dst, key []byte) ([]byte, error) {
	if f.kind == protoreflect.StringKind {
		dst = protowire.AppendTag(dst, 1, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(len(key)))
		return append(dst, key...), nil
	}
	if f.kind == protoreflect.BoolKind {
		switch string(key) {
		case "true":
			return append(protowire.AppendTag(dst, 1, protowire.VarintType), 1), nil
		case "false":
			return append(protowire.AppendTag(dst, 1, protowire.VarintType), 0), nil
		}
		return nil, errGiveUp
	}
	v, ok := f.integer(key)
	if !ok {
		return nil, errGiveUp
	}
	return f.appendInt(protowire.AppendTag(dst, 1, f.wireType()), v), nil
}

// encodeOne appends one tagged value (skipped when implicit and zero).
func (f *encField) encodeOne(dst []byte, s *scanner, implicit bool) ([]byte, error) {
	start := len(dst)
	dst = protowire.AppendTag(dst, f.num, f.wireType())
	if f.kind == protoreflect.MessageKind || f.kind == protoreflect.GroupKind {
		if f.kind == protoreflect.GroupKind {
			return nil, errGiveUp
		}
		at := len(dst)
		dst = append(dst, 0)
		var err error
		if dst, err = f.msg.encode(dst, s); err != nil {
			return nil, err
		}
		return fixLength(dst, at), nil
	}
	valueAt := len(dst)
	dst, err := f.appendValue(dst, s, true)
	if err != nil {
		return nil, err
	}
	if implicit && isZero(f.wireType(), dst[valueAt:]) {
		dst = dst[:start]
	}
	return dst, nil
}

// isZero reports whether an encoded value is its type's zero: a zero
// varint, an all-zero fixed value, or an empty length-delimited value.
// (-0.0 is not all zero bits: it is left to protojson by appendValue.)
func isZero(wt protowire.Type, v []byte) bool {
	switch wt {
	case protowire.BytesType:
		return len(v) == 1 && v[0] == 0
	default:
		for _, b := range v {
			if b != 0 {
				return false
			}
		}
		return true
	}
}

func (f *encField) wireType() protowire.Type {
	switch f.kind {
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

// appendValue appends the value at s without its tag: a scalar, an enum, a
// string (length-prefixed when prefixed) or bytes.
func (f *encField) appendValue(dst []byte, s *scanner, prefixed bool) ([]byte, error) {
	switch f.kind {
	case protoreflect.BoolKind:
		switch {
		case s.literal("true"):
			return append(dst, 1), nil
		case s.literal("false"):
			return append(dst, 0), nil
		}
		return nil, errGiveUp
	case protoreflect.StringKind, protoreflect.BytesKind:
		if !prefixed {
			return nil, errGiveUp // not packable
		}
		return f.appendString(dst, s)
	case protoreflect.EnumKind:
		return f.appendEnum(dst, s)
	case protoreflect.FloatKind, protoreflect.DoubleKind:
		return f.appendFloat(dst, s)
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return nil, errGiveUp
	}
	num, ok := s.number()
	if !ok {
		return nil, errGiveUp
	}
	v, ok := f.integer(num)
	if !ok {
		return nil, errGiveUp
	}
	return f.appendInt(dst, v), nil
}

// integer parses an integer field's value (a JSON number, or the text of
// a JSON string, without fraction or exponent) and checks its range.
func (f *encField) integer(b []byte) (int64, bool) {
	if !plainInteger(b) {
		return 0, false
	}
	str := unsafe.String(unsafe.SliceData(b), len(b))
	switch f.kind {
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		u, err := strconv.ParseUint(str, 10, 32)
		return int64(u), err == nil
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		u, err := strconv.ParseUint(str, 10, 64)
		return int64(u), err == nil
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		v, err := strconv.ParseInt(str, 10, 32)
		return v, err == nil
	}
	v, err := strconv.ParseInt(str, 10, 64)
	return v, err == nil
}

// appendInt appends v in the field's integer encoding.
func (f *encField) appendInt(dst []byte, v int64) []byte {
	switch f.kind {
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(v))
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(dst, uint32(v))
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(dst, uint64(v))
	}
	return protowire.AppendVarint(dst, uint64(v))
}

// appendFloat appends a float or double: a JSON number, or a string
// holding one or NaN, Infinity, -Infinity.
func (f *encField) appendFloat(dst []byte, s *scanner) ([]byte, error) {
	var text []byte
	if s.peek() == '"' {
		str, ok := s.plainString()
		if !ok {
			return nil, errGiveUp
		}
		text = str
	} else {
		num, ok := s.number()
		if !ok {
			return nil, errGiveUp
		}
		text = num
	}
	var v float64
	switch string(text) {
	case "NaN":
		v = math.NaN()
	case "Infinity":
		v = math.Inf(1)
	case "-Infinity":
		v = math.Inf(-1)
	default:
		if !jsonNumber(text) {
			return nil, errGiveUp
		}
		var err error
		if v, err = strconv.ParseFloat(unsafe.String(unsafe.SliceData(text), len(text)), 64); err != nil {
			return nil, errGiveUp
		}
		if v == 0 && math.Signbit(v) {
			return nil, errGiveUp // -0: whether it is "zero" is protojson's to say
		}
	}
	if f.kind == protoreflect.FloatKind {
		if !math.IsInf(v, 0) && !math.IsNaN(v) && math.Abs(v) > math.MaxFloat32 {
			return nil, errGiveUp
		}
		return protowire.AppendFixed32(dst, math.Float32bits(float32(v))), nil
	}
	return protowire.AppendFixed64(dst, math.Float64bits(v)), nil
}

// appendEnum appends an enum value given by name or by number.
func (f *encField) appendEnum(dst []byte, s *scanner) ([]byte, error) {
	if s.peek() == '"' {
		name, ok := s.plainString()
		if !ok {
			return nil, errGiveUp
		}
		ev := f.enum.Values().ByName(protoreflect.Name(unsafe.String(unsafe.SliceData(name), len(name))))
		if ev == nil {
			return nil, errGiveUp
		}
		return protowire.AppendVarint(dst, uint64(int64(ev.Number()))), nil
	}
	num, ok := s.number()
	if !ok || !plainInteger(num) {
		return nil, errGiveUp
	}
	v, err := strconv.ParseInt(unsafe.String(unsafe.SliceData(num), len(num)), 10, 32)
	if err != nil || f.enum.IsClosed() && f.enum.Values().ByNumber(protoreflect.EnumNumber(v)) == nil {
		return nil, errGiveUp
	}
	return protowire.AppendVarint(dst, uint64(v)), nil
}

// appendString appends a string (unescaped) or bytes (base64-decoded)
// field's value with its length.
func (f *encField) appendString(dst []byte, s *scanner) ([]byte, error) {
	raw, escaped, ok := s.stringToken()
	if !ok {
		return nil, errGiveUp
	}
	at := len(dst)
	dst = append(dst, 0)
	if f.kind == protoreflect.BytesKind {
		if escaped {
			return nil, errGiveUp
		}
		var ok bool
		if dst, ok = appendBase64(dst, raw); !ok {
			return nil, errGiveUp
		}
	} else {
		var ok bool
		if dst, ok = appendUnescaped(dst, raw, escaped); !ok {
			return nil, errGiveUp
		}
	}
	return fixLength(dst, at), nil
}

// appendBase64 decodes standard or URL-safe base64, padded or not, as
// protojson accepts it.
func appendBase64(dst, src []byte) ([]byte, bool) {
	enc := base64.StdEncoding
	for _, c := range src {
		if c == '-' || c == '_' {
			enc = base64.URLEncoding
			break
		}
	}
	if len(src)%4 != 0 {
		enc = enc.WithPadding(base64.NoPadding)
	}
	n := enc.DecodedLen(len(src))
	at := len(dst)
	dst = append(dst, make([]byte, n)...)
	m, err := enc.Decode(dst[at:], src)
	if err != nil {
		return nil, false
	}
	return dst[:at+m], true
}

// fixLength writes, at dst[at] (a one-byte placeholder), the length of
// what follows it as a varint, moving it when the varint needs more bytes.
func fixLength(dst []byte, at int) []byte {
	n := len(dst) - at - 1
	if n < 0x80 {
		dst[at] = byte(n)
		return dst
	}
	size := protowire.SizeVarint(uint64(n))
	var pad [9]byte
	dst = append(dst, pad[:size-1]...)
	copy(dst[at+size:], dst[at+1:at+1+n])
	protowire.AppendVarint(dst[:at], uint64(n))
	return dst
}

// scanner reads JSON tokens from b.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// peek is the next byte after white space (0 at the end).
func (s *scanner) peek() byte {
	s.space()
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// byte consumes c if it comes next.
func (s *scanner) byte(c byte) bool {
	if s.peek() == c {
		s.i++
		return true
	}
	return false
}

// literal consumes word (true, false, null) if it comes next as a whole token.
func (s *scanner) literal(word string) bool {
	s.space()
	end := s.i + len(word)
	if end > len(s.b) || string(s.b[s.i:end]) != word {
		return false
	}
	if end < len(s.b) && isWordByte(s.b[end]) {
		return false
	}
	s.i = end
	return true
}

func (s *scanner) null() bool { return s.literal("null") }

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// number consumes a JSON number token (a string holding one too, for the
// integer and float fields protojson lets write them quoted) and returns
// its text.
func (s *scanner) number() ([]byte, bool) {
	if s.peek() == '"' {
		str, ok := s.plainString()
		return str, ok
	}
	start := s.i
	for s.i < len(s.b) {
		c := s.b[s.i]
		if !(c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E') {
			break
		}
		s.i++
	}
	num := s.b[start:s.i]
	return num, jsonNumber(num)
}

// stringToken consumes a JSON string and returns its raw content (between
// the quotes) and whether it holds escapes. Control characters are not
// allowed in it, as JSON says.
func (s *scanner) stringToken() (raw []byte, escaped, ok bool) {
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for i := start; i < len(s.b); i++ {
		switch c := s.b[i]; {
		case c == '"':
			s.i = i + 1
			return s.b[start:i], escaped, true
		case c == '\\':
			escaped = true
			i++
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// plainString consumes a JSON string without escapes and with valid
// UTF-8, and returns its content.
func (s *scanner) plainString() ([]byte, bool) {
	raw, escaped, ok := s.stringToken()
	if !ok || escaped || !utf8.Valid(raw) {
		return nil, false
	}
	return raw, true
}

// appendUnescaped appends a JSON string's content unescaped. It refuses
// invalid UTF-8 and lone surrogate escapes (left to protojson, which
// refuses them).
func appendUnescaped(dst, raw []byte, escaped bool) ([]byte, bool) {
	if !escaped {
		if !utf8.Valid(raw) {
			return nil, false
		}
		return append(dst, raw...), true
	}
	n := len(dst)
	dst, ok := jsonstr.AppendStrict(dst, raw)
	return dst, ok && utf8.Valid(dst[n:])
}

// jsonNumber reports whether b is a JSON number, whole.
func jsonNumber(b []byte) bool { return jsonstr.Number(b, 0) == len(b) }

// plainInteger reports whether b is an integer without fraction or
// exponent: -?(0|[1-9][0-9]*).
func plainInteger(b []byte) bool {
	if !jsonNumber(b) {
		return false
	}
	for _, c := range b {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}
