package scenario

import (
	"regexp"
	"testing"

	"github.com/hail-loadgen/hail/internal/http1"
	"github.com/hail-loadgen/hail/internal/scenario/jsonpath"
)

func TestCaptureKinds(t *testing.T) {
	p := &http1.Parser{Status: 201, Body: []byte(`{"id":"abc123"} token=T-99;`), ContentLength: 27,
		WantHeaders: []string{"location"}, HeaderValues: [][]byte{[]byte("/items/abc123")}}
	var scratch []byte
	re := regexp.MustCompile(`token=([A-Z0-9-]+)`)
	id, err := jsonpath.Parse("id")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		c    capture
		want string
	}{
		{capture{kind: capStatus}, "201"},
		{capture{kind: capHeader, header: "location"}, "/items/abc123"},
		{capture{kind: capHeader, header: "content-length"}, "27"},
		{capture{kind: capRegex, re: re, group: 1}, "T-99"},
		{capture{kind: capRegex, re: re}, "token=T-99"},
		{capture{kind: capJSON, path: id}, "abc123"},
	} {
		got, ok := tc.c.extract(p, &scratch)
		if !ok || string(got) != tc.want {
			t.Errorf("capture %d: %q, %v; want %q", tc.c.kind, got, ok, tc.want)
		}
	}
}
