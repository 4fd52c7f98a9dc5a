package http1

// Tchar reports whether a byte may appear in an RFC 9110 token (method,
// header field name): ALPHA, DIGIT and !#$%&'*+-.^_`|~. The built-in
// server's request parser uses it too.
var Tchar = func() (t [256]bool) {
	for c := '0'; c <= '9'; c++ {
		t[c] = true
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c] = true
		t[c-'a'+'A'] = true
	}
	for _, c := range "!#$%&'*+-.^_`|~" {
		t[c] = true
	}
	return t
}()

// IsToken reports whether s is an RFC 9110 token, as a method or a header
// field name must be: not empty, and every byte a Tchar.
func IsToken(s string) bool {
	for i := 0; i < len(s); i++ {
		if !Tchar[s[i]] {
			return false
		}
	}
	return s != ""
}

// EqualFoldLower reports whether b (an ASCII header name or token) equals
// lower, ignoring ASCII case in b. lower must be lower case.
func EqualFoldLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// equalFoldLowerString is EqualFoldLower for a string.
func equalFoldLowerString(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// TrimOWS removes optional whitespace (SP and HTAB) at both ends of b.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// unhex returns the value of the hexadecimal digit c, or -1.
func unhex(c byte) int64 {
	switch {
	case '0' <= c && c <= '9':
		return int64(c - '0')
	case 'a' <= c && c <= 'f':
		return int64(c - 'a' + 10)
	case 'A' <= c && c <= 'F':
		return int64(c - 'A' + 10)
	}
	return -1
}
