package result

import "time"

// TLSCounts are a run's TLS handshakes (QUIC's included) and how many
// resumed a session.
type TLSCounts struct {
	// Handshakes are full and resumed ones; Resumptions the resumed.
	Handshakes  int64 `json:"handshakes"`
	Resumptions int64 `json:"resumptions"`
}

// GRPCStats describe a run's gRPC calls. A call is one request whatever
// its streaming kind; its messages are counted here.
type GRPCStats struct {
	// Call is the method of a Plan.GRPC run ("package.Service/Method") and
	// Kind its streaming kind ("unary", "client streaming", "server
	// streaming", "bidi streaming"); empty for a scenario's several.
	Call string `json:"call,omitempty"`
	Kind string `json:"kind,omitempty"`
	// Calls were sent, each counted once however many attempts it took;
	// MessagesSent and MessagesReceived are their request and response
	// messages.
	Calls int64 `json:"calls"`
	// Retries are attempts that sent a call again on a new connection
	// (the first went stale, or a GOAWAY turned it away unprocessed); each
	// is also among Counts.Reconnects.
	Retries          int64 `json:"retries"`
	MessagesSent     int64 `json:"messages_sent"`
	MessagesReceived int64 `json:"messages_received"`
}

// Shard says which part of a distributed run a Result is.
type Shard struct {
	// Index (from 0) and Count place it among the shards.
	Index int `json:"index"`
	Count int `json:"count"`
	// Requests, Rate and Connections are this shard's share of the run.
	Requests    uint64  `json:"requests"`
	Rate        float64 `json:"rate"`
	Connections int     `json:"connections"`
	// StartAt is the agreed start time, RFC 3339; Late how long after it
	// the shard began sending.
	StartAt string        `json:"start_at,omitempty"`
	Late    time.Duration `json:"late_ns,omitempty"`
}
