package grpccall

import "testing"

// FuzzCheckWire: the wire-format check of large -B messages accepts
// everything that decodes as the message (it is weaker, never stricter),
// and never panics on what does not.
func FuzzCheckWire(f *testing.F) {
	md := order(f)
	a, _ := Encode(md, []byte(`{"id":"a","lines":[{"sku":"x","qty":3}]}`))
	f.Add(a)
	f.Add([]byte{0x0a, 0x80, 0x80, 0x80, 0x80, 0x01})
	f.Add([]byte{0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		err := checkWire(md, data, 0)
		if _, derr := decode(md, data); derr == nil && err != nil {
			t.Fatalf("%x decodes as %s but the wire check says %v", data, md.FullName(), err)
		}
	})
}
