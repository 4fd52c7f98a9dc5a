//go:build !linux

package target

import "net/netip"

// listeningDiag reports false: sock_diag is Linux's.
func listeningDiag(netip.AddrPort, map[string]bool) bool { return false }
