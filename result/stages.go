package result

// StageLoad is what the connections did in a stage, from the per-second
// samples taken inside its measured part.
type StageLoad struct {
	// Samples is how many seconds were sampled.
	Samples int `json:"seconds"`
	// ConnsOpenMean and ConnsOpenMax are the connections open; InFlight
	// the requests in flight.
	ConnsOpenMean float64 `json:"conns_open_mean"`
	ConnsOpenMax  int64   `json:"conns_open_max"`
	InFlightMean  float64 `json:"in_flight_mean"`
	InFlightMax   int64   `json:"in_flight_max"`
}
