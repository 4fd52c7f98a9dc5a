package template

import "testing"

// Concat merges adjacent literals into a buffer of its own: the parts are
// never written, and appending to the result's Literal never writes into
// another template.
func TestConcatOwnsItsLiterals(t *testing.T) {
	a, b := Text("ab"), Text("cd")
	ab := Concat(a, b)
	abc := Concat(ab, Text("e"))
	if string(a.Literal()) != "ab" || string(b.Literal()) != "cd" || string(ab.Literal()) != "abcd" || string(abc.Literal()) != "abcde" {
		t.Fatalf("a %q b %q ab %q abc %q", a.Literal(), b.Literal(), ab.Literal(), abc.Literal())
	}
	x := append(ab.Literal(), 'X')
	y := append(ab.Literal(), 'Y')
	if string(x) != "abcdX" || string(y) != "abcdY" || string(abc.Literal()) != "abcde" {
		t.Errorf("appends to a Literal share memory: %q %q %q", x, y, abc.Literal())
	}
}
