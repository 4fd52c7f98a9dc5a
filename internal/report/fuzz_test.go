package report

import (
	"bytes"
	"github.com/hail-loadgen/hail/result"
	"testing"
)

// FuzzReadJSON: the Result reader used by report, compare and merge never
// panics, and what it accepts writes back out as a readable Result.
func FuzzReadJSON(f *testing.F) {
	var buf bytes.Buffer
	if err := result.WriteJSON(&buf, sampleResultForFuzz()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"summary":{"total":"x"}}`))
	f.Add([]byte(`{"hail":{"histograms":{"latency_2xx":"HISTFAAAACl4nJNpmSzMwMDAzAABzFCaEUzOmQQRgIjJMEmBIBMYzMzAAAA="}}}`))
	f.Add([]byte(`[1,2,3]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := result.ReadJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := result.WriteJSON(&out, r); err != nil {
			t.Fatalf("accepted result does not write back: %v", err)
		}
		if _, err := result.ReadJSON(&out); err != nil {
			t.Fatalf("written result does not read back: %v", err)
		}
		_ = WriteText(&bytes.Buffer{}, r, TextOptions{})
	})
}
