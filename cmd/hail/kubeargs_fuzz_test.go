package main

import (
	"slices"
	"strings"
	"testing"
)

// Whatever the arguments, reading them as pflag does for the files they
// name never panics, and leaving every path as it is leaves the arguments
// as they were.
func FuzzRewriteFiles(f *testing.F) {
	f.Add("-z\x0010s\x00-Dbody.json\x00--cacert=ca.pem\x00-F\x00f=@x;type=a\x00http://t/")
	f.Add("-wD\x00b\x00--body-path\x00--\x00-")
	f.Add("--form=a=<p\x00-vZ")
	fl := newRootCmd().Flags()
	f.Fuzz(func(t *testing.T, joined string) {
		args := strings.Split(joined, "\x00")
		out, err := rewriteFiles(fl, args, func(_, p string) (string, error) { return p, nil }, func(p string) (string, error) { return p, nil })
		if err != nil || !slices.Equal(out, args) {
			t.Fatalf("%q -> %q, %v", args, out, err)
		}
	})
}
