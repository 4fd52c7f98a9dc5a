package transport

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A --unix-socket or --vsock-uds path that is missing or not a socket is
// one error at the start naming the flag and the path.
func TestSocketPathChecked(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	sock := filepath.Join(dir, "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		opt  Options
		want string // "" for no error
	}{
		{Options{UnixSocket: filepath.Join(dir, "missing")}, "--unix-socket " + filepath.Join(dir, "missing") + ": no such socket"},
		{Options{UnixSocket: file}, "--unix-socket " + file + ": not a unix socket (it is a regular file)"},
		{Options{UnixSocket: dir}, "not a unix socket (it is a directory)"},
		{Options{VsockUDS: filepath.Join(dir, "fc.vsock"), VsockUDSPort: 52}, "--vsock-uds " + filepath.Join(dir, "fc.vsock") + ": no such socket"},
		{Options{UnixSocket: sock}, ""},
		{Options{VsockUDS: sock, VsockUDSPort: 52}, ""},
	} {
		_, err := NewDialer(context.Background(), tc.opt)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: %v", tc.opt, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || !errors.As(err, new(*SocketPathError))):
			t.Errorf("%+v: %v, want %q", tc.opt, err, tc.want)
		}
	}
}
