package h2engine

import "time"

// SetFloodPatience sets how long a connection waits for a server to read
// its acknowledgements before calling it a flood (floodPatience): TestMain
// shortens it, before any test runs, so that the flood cases of servers
// that never read end in a second, not in two.
func SetFloodPatience(d time.Duration) { floodPatience = d }
