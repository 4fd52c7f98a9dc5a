package stats

import (
	"testing"

	"github.com/hail-loadgen/hail/internal/status"
)

func TestRecorderGRPCStatus(t *testing.T) {
	r := NewRecorder()
	r.Response(status.GRPC(0), 1000, 500, 10, 20)
	r.Response(status.GRPC(14), 2000, 500, 0, 20)
	tot := NewTotals()
	tot.drain(r, false, true)
	if tot.Status[status.GRPCBase] != 1 || tot.Status[status.GRPCBase+14] != 1 {
		t.Fatalf("gRPC slots not counted: OK %d Unavailable %d", tot.Status[status.GRPCBase], tot.Status[status.GRPCBase+14])
	}
	if tot.LatencyOK.TotalCount() != 1 || tot.LatencyBad.TotalCount() != 1 {
		t.Fatalf("OK latency %d, other %d: want 1 and 1", tot.LatencyOK.TotalCount(), tot.LatencyBad.TotalCount())
	}
}
