package kube

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxShipped bounds how many files a run ships (each is a mount).
const maxShipped = 256

// refusedDirs are where a shipped file may not be mounted: the kernel's
// file systems, and the results volume's mount point.
var refusedDirs = []string{"/proc", "/sys", "/dev", resultsDir}

// Ship prepares the files a run's shards read (absolute paths; a directory
// ships every regular file in it): each is mounted at its own path in the
// shards, from the run's ConfigMap while they fit in MaxConfigMapFiles,
// the larger ones from the results volume (claim; without one, more than
// the ConfigMap holds is refused). It returns the files and their bytes
// by Key.
func Ship(paths []string, claim string) ([]File, map[string][]byte, error) {
	var all []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v (the shards need it)", p, unwrapPath(err))
		}
		if !st.IsDir() {
			all = append(all, p)
			continue
		}
		err = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.Type().IsRegular() {
				all = append(all, q)
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", p, err)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	if len(all) > maxShipped {
		return nil, nil, fmt.Errorf("%d files to ship to the shards: at most %d (each is a mount); put them in an image of your own", len(all), maxShipped)
	}
	files := make([]File, 0, len(all))
	data := map[string][]byte{}
	for i, p := range all {
		for _, d := range refusedDirs {
			if p == d || strings.HasPrefix(p, d+"/") {
				return nil, nil, fmt.Errorf("%s: a file under %s cannot be shipped to the shards (it is mounted at the same path there): move it elsewhere", p, d)
			}
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v (the shards need it)", p, unwrapPath(err))
		}
		f := File{Path: p, Size: int64(len(b)), Key: fmt.Sprintf("f%d-%s", i, keySafe(filepath.Base(p)))}
		files = append(files, f)
		data[f.Key] = b
	}
	// The smallest files go in the ConfigMap while they fit; the rest on
	// the volume.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(files[a].Size - files[b].Size) })
	var used int64
	var over int64
	for _, i := range order {
		if used+files[i].Size <= MaxConfigMapFiles {
			used += files[i].Size
			continue
		}
		files[i].OnVolume = true
		over += files[i].Size
	}
	if over > 0 && claim == "" {
		return nil, nil, fmt.Errorf("the files the shards read are %s, more than a ConfigMap holds (%s): give --results pvc:CLAIM to ship the larger ones on that volume",
			size(used+over), size(MaxConfigMapFiles))
	}
	return files, data, nil
}

// keySafe makes a file name a valid ConfigMap key (letters, digits, '-',
// '_', '.').
func keySafe(name string) string {
	b := []byte(name)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func unwrapPath(err error) error {
	if pe, ok := err.(*fs.PathError); ok {
		return pe.Err
	}
	return err
}
