//go:build !linux

package bodyfile

import (
	"errors"
	"os"
)

// mapFile is Linux's: elsewhere files are read.
func mapFile(*os.File, int64, int) ([]byte, error) { return nil, errors.ErrUnsupported }
