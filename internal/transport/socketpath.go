package transport

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// SocketPathError is a --unix-socket or --vsock-uds path that no
// connection could use: missing, not a socket, or not reachable.
type SocketPathError struct {
	Flag, Path string
	Why        string
}

func (e *SocketPathError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Flag, e.Path, e.Why)
}

// checkSocketPath checks before the run that path (given with flag; ""
// for none) is a unix socket, so a wrong path is one line at the start
// rather than every request failing.
func checkSocketPath(flag, path string) error {
	if path == "" {
		return nil
	}
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &SocketPathError{flag, path, "no such socket: check the path, and that the server (or VMM) is running and listening there"}
	case errors.Is(err, fs.ErrPermission):
		return &SocketPathError{flag, path, "permission denied: hail may not reach this path (run as a user who may, or change its directory's permissions)"}
	case err != nil:
		return &SocketPathError{flag, path, unwrapPath(err).Error()}
	case st.Mode().Type() != fs.ModeSocket:
		return &SocketPathError{flag, path, "not a unix socket (it is " + fileKind(st.Mode()) + "): give the path the server listens on"}
	}
	return nil
}

// fileKind names what kind of file m describes.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m.IsRegular():
		return "a regular file"
	case m.Type() == fs.ModeNamedPipe:
		return "a named pipe"
	case m.Type()&fs.ModeDevice != 0:
		return "a device"
	}
	return "another kind of file"
}
