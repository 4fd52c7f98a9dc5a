package status

import "testing"

func TestStatusNames(t *testing.T) {
	for _, tc := range []struct {
		slot           int
		name           string
		success, fails bool
	}{
		{200, "200", true, false},
		{404, "404", false, true},
		{0, "0", false, true},
		{GRPC(0), "OK", true, false},
		{GRPC(4), "DeadlineExceeded", false, true},
		{GRPC(14), "Unavailable", false, true},
		{GRPC(16), "Unauthenticated", false, true},
		{GRPC(99), "Unknown", false, true},
	} {
		if got := Name(tc.slot); got != tc.name {
			t.Errorf("Name(%d) = %q, want %q", tc.slot, got, tc.name)
		}
		back, ok := ByName(tc.name)
		if !ok || (back != tc.slot && tc.slot != GRPC(99)) {
			t.Errorf("ByName(%q) = %d, %v; want %d", tc.name, back, ok, tc.slot)
		}
		if Success(tc.slot) != tc.success || Failed(tc.slot) != tc.fails {
			t.Errorf("slot %d: success %v failed %v, want %v %v", tc.slot, Success(tc.slot), Failed(tc.slot), tc.success, tc.fails)
		}
	}
	for _, bad := range []string{"Nope", "-1", "1005", ""} {
		if _, ok := ByName(bad); ok {
			t.Errorf("ByName(%q) accepted", bad)
		}
	}
}
