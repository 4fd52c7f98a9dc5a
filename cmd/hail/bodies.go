package main

import (
	"fmt"

	"hail/internal/bodyfile"
)

// bodyFileHelp is --body-file-limit's help, the same for the load and run commands.
const bodyFileHelp = "largest body file (-D, -Z, a scenario's body_file, body_lines and pool files) hail reads; bodies are held in memory (default 64MiB)"

// readBodies returns the request bodies -d, -D or -Z give (at most one of
// them), reading files through bodyfile: a file over --body-file-limit or
// beyond the memory left is one line naming it, never a crash.
func readBodies(f *loadFlags) ([][]byte, error) {
	nb := 0
	for _, s := range []string{f.body, f.bodyFile, f.bodyLines} {
		if s != "" {
			nb++
		}
	}
	switch {
	case nb > 1:
		return nil, fmt.Errorf("-d, -D and -Z each give the body: use only one")
	case f.body != "":
		return [][]byte{[]byte(f.body)}, nil
	case f.bodyFile != "":
		b, err := bodyfile.Read(f.bodyFile, f.bodyFileLimit)
		if err != nil {
			return nil, fmt.Errorf("-D %v", err)
		}
		return [][]byte{b}, nil
	case f.bodyLines != "":
		lines, err := bodyfile.Lines(f.bodyLines, f.bodyFileLimit)
		if err != nil {
			return nil, fmt.Errorf("-Z %v", err)
		}
		if len(lines) == 0 {
			return nil, fmt.Errorf("-Z %s: the file has no lines", f.bodyLines)
		}
		return lines, nil
	}
	return nil, nil
}
