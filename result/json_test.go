package result

import (
	"math"
	"testing"
)

// TestSerdeFloat: appendSerdeFloat writes a float as oha's serializer
// (serde_json, ryu) does.
func TestSerdeFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1, "1.0"}, {-2, "-2.0"}, {1.5, "1.5"}, {0.1, "0.1"},
		{12012, "12012.0"}, {402.4, "402.4"}, {0.000123, "0.000123"}, {0.00001, "0.00001"}, {0.000001, "1e-6"},
		{1.5e-7, "1.5e-7"}, {1e15, "1000000000000000.0"}, {1e16, "1e16"}, {1.2345e17, "1.2345e17"},
		{123456789.125, "123456789.125"}, {math.NaN(), "null"}, {math.Inf(1), "null"}, {math.Inf(-1), "null"},
	} {
		if got := string(appendSerdeFloat(nil, tc.f)); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.f, got, tc.want)
		}
	}
}
