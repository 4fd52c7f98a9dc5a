package scenario

import (
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The fields that are not plain YAML values write what the file format
// wants: think ranges, repeat: all, keepalive: false, stages of one kind.
func TestFileYAML(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		f    File
		want []string
	}{
		{"think", File{Think: Think{Min: 50 * time.Millisecond, Max: 150 * time.Millisecond}, Steps: []Step{{Name: "a", Think: Think{Min: time.Second}}}},
			[]string{"think: 50ms..150ms", "think: 1s"}},
		{"repeat", File{Setup: []Step{{Name: "a", Repeat: RepeatAll}, {Name: "b", Repeat: 3}}}, []string{"repeat: all", "repeat: 3"}},
		{"keepalive", File{DisableKeepAlive: true}, []string{"keepalive: false"}},
		{"rate stages", File{RateStages: []Stage{{Duration: 10 * time.Second, Target: 100}, {Duration: 0, Target: 500, Step: true}}},
			[]string{"- duration: 10s\n      rate: 100", "- duration: 0s\n      ramp: step\n      rate: 500"}},
		{"connection stages", File{ConnectionStages: []Stage{{Duration: time.Minute, Target: 0}}}, []string{"connections: 0", "duration: 1m0s"}},
		{"zero values left out", File{Steps: []Step{{Name: "a"}}}, []string{"steps:\n    - name: a\n"}},
	} {
		b, err := yaml.Marshal(c.f)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: the YAML lacks %q:\n%s", c.name, w, b)
			}
		}
		if c.name == "zero values left out" && strings.Count(string(b), ":") != 2 {
			t.Errorf("%s: %s", c.name, b)
		}
	}
}
