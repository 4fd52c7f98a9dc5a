package stats

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
		{GRPCStatus(0), "OK", true, false},
		{GRPCStatus(4), "DeadlineExceeded", false, true},
		{GRPCStatus(14), "Unavailable", false, true},
		{GRPCStatus(16), "Unauthenticated", false, true},
		{GRPCStatus(99), "Unknown", false, true},
	} {
		if got := StatusName(tc.slot); got != tc.name {
			t.Errorf("StatusName(%d) = %q, want %q", tc.slot, got, tc.name)
		}
		back, ok := StatusByName(tc.name)
		if !ok || (back != tc.slot && tc.slot != GRPCStatus(99)) {
			t.Errorf("StatusByName(%q) = %d, %v; want %d", tc.name, back, ok, tc.slot)
		}
		if StatusSuccess(tc.slot) != tc.success || StatusFailed(tc.slot) != tc.fails {
			t.Errorf("slot %d: success %v failed %v, want %v %v", tc.slot, StatusSuccess(tc.slot), StatusFailed(tc.slot), tc.success, tc.fails)
		}
	}
	for _, bad := range []string{"Nope", "-1", "1005", ""} {
		if _, ok := StatusByName(bad); ok {
			t.Errorf("StatusByName(%q) accepted", bad)
		}
	}
}

func TestRecorderGRPCStatus(t *testing.T) {
	r := NewRecorder()
	r.Response(GRPCStatus(0), 1000, 500, 10, 20)
	r.Response(GRPCStatus(14), 2000, 500, 0, 20)
	tot := NewTotals()
	tot.drain(r, false, true)
	if tot.Status[GRPCBase] != 1 || tot.Status[GRPCBase+14] != 1 {
		t.Fatalf("gRPC slots not counted: OK %d Unavailable %d", tot.Status[GRPCBase], tot.Status[GRPCBase+14])
	}
	if tot.LatencyOK.TotalCount() != 1 || tot.LatencyBad.TotalCount() != 1 {
		t.Fatalf("OK latency %d, other %d: want 1 and 1", tot.LatencyOK.TotalCount(), tot.LatencyBad.TotalCount())
	}
}
