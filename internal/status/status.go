// Package status names the status slots a response is counted under: HTTP
// codes and gRPC status codes, the keys of a result's statusCodeDistribution,
// and which of them are successes or failures. It imports nothing of
// hail's, so internal/stats (which counts by slot) and package result (whose
// JSON writer splits responses into successful and not) both use it.
package status

import "strconv"

// Status slots. A response is counted under one slot of the status arrays
// (Recorder, Totals): an HTTP status code is its own slot (100–999; any
// other code is slot 0), and a gRPC call's status code c is slot
// GRPCBase + c. Reports name the slots with Name, so an HTTP run's
// statusCodeDistribution reads {"200": n} and a gRPC run's {"OK": n,
// "Unavailable": m}; a scenario that mixes HTTP and gRPC steps holds both.
const (
	// GRPCBase is the slot of gRPC's OK; code c is GRPCBase + c.
	GRPCBase = 1000
	// NumGRPCCodes are gRPC's status codes, 0 (OK) to 16 (Unauthenticated).
	NumGRPCCodes = 17
)

// The gRPC status codes hail uses by number.
const (
	GRPCOK               = 0
	GRPCUnknown          = 2
	GRPCDeadlineExceeded = 4
	GRPCPermissionDenied = 7
	GRPCUnimplemented    = 12
	GRPCInternal         = 13
	GRPCUnavailable      = 14
	GRPCUnauthenticated  = 16
)

// grpcNames are gRPC's code names as grpc-go's codes.Code.String spells
// them (and ghz reports them).
var grpcNames = [NumGRPCCodes]string{"OK", "Canceled", "Unknown", "InvalidArgument", "DeadlineExceeded", "NotFound",
	"AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition", "Aborted", "OutOfRange",
	"Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated"}

// GRPC is the slot of gRPC status code c; a code outside gRPC's set
// counts as Unknown, as gRPC clients treat it.
func GRPC(c int) int {
	if c < 0 || c >= NumGRPCCodes {
		c = GRPCUnknown
	}
	return GRPCBase + c
}

// IsGRPC reports whether slot holds a gRPC status.
func IsGRPC(slot int) bool { return slot >= GRPCBase && slot < GRPCBase+NumGRPCCodes }

// Name names a slot as reports show it: the HTTP code ("200", "0"
// for one out of range) or the gRPC code's name ("OK", "DeadlineExceeded").
func Name(slot int) string {
	if IsGRPC(slot) {
		return grpcNames[slot-GRPCBase]
	}
	return strconv.Itoa(slot)
}

// ByName is Name's inverse: the slot a report's status key
// names, and whether it names one.
func ByName(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n >= 0 && n < GRPCBase
	}
	for c, name := range grpcNames {
		if name == s {
			return GRPCBase + c, true
		}
	}
	return 0, false
}

// Success reports whether a slot is a success: HTTP 2xx or gRPC OK.
// Its latency goes to the successful histogram.
func Success(slot int) bool { return slot >= 200 && slot < 300 || slot == GRPCBase+GRPCOK }

// Failed reports whether a slot counts as a failed request: an HTTP
// status of 400 or more (or out of range), or a gRPC status other than OK.
func Failed(slot int) bool {
	if IsGRPC(slot) {
		return slot != GRPCBase+GRPCOK
	}
	return slot == 0 || slot >= 400
}
