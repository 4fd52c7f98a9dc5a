package main

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/grpccall"
)

// kubeOwned are the flags hail kube gives every shard itself.
var kubeOwned = []string{"shard", "start-at", "output", "output-format", "json", "no-tui", "metrics-addr", "db-url", "target-pid"}

// kubeRun is a distributed run's hail arguments, checked: the command they
// are for parsed them (a bad flag is refused before anything is made in
// the cluster), every file they name is absolute, and the files are listed.
type kubeRun struct {
	args     []string      // for every shard, files absolute
	files    []string      // to ship: absolute paths of files
	dirs     []string      // to ship with every file in them
	duration time.Duration // the run's -z (0: not known)
}

// errReflection refuses a gRPC scenario that finds its schema by the
// server's reflection: it could only be checked by reaching the server
// from here.
var errReflection = errors.New("hail kube reads a gRPC scenario's schema from its files: give grpc: {proto: FILE.proto} (or protoset) in the file; the server's reflection is not asked from this machine")

// parseKubeArgs checks and prepares the hail arguments of a distributed
// run: hail's load flags and a URL, or a subcommand that shards (run — a
// scenario file alone means `run FILE` —, grpc, and any command with
// --shard) and its arguments.
func parseKubeArgs(args []string) (*kubeRun, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("no hail arguments: give them after --, e.g. hail kube run --shards 2 -- -z 30s -q 1000 http://svc:8080/")
	}
	if a := args[0]; !strings.HasPrefix(a, "-") && (strings.HasSuffix(a, ".yaml") || strings.HasSuffix(a, ".yml")) {
		args = append([]string{"run"}, args...)
	}
	root := newCommandTree()
	cmd, rest, err := root.Find(args)
	if err != nil {
		return nil, err
	}
	var rf *runFlags
	if cmd != root && cmd.Name() == "run" {
		cmd, rf = newRunCmdFlags()
		rf.grpcSource = func(*url.URL, bool) (grpccall.Source, error) { return nil, errReflection }
	}
	if cmd.Flags().Lookup("shard") == nil {
		return nil, fmt.Errorf("hail %s does not shard: hail kube runs hail's load command, hail run (a scenario), hail grpc and the other commands with --shard", cmd.Name())
	}
	if slices.Contains(rest, "--") {
		return nil, fmt.Errorf("hail's arguments hold a --: give them without it (they already come after hail kube's --)")
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return nil, flagError(cmd, err)
	}
	fl := cmd.Flags()
	for _, n := range kubeOwned {
		if fl.Changed(n) {
			return nil, fmt.Errorf("--%s is hail kube's: it gives each shard its --shard, --start-at barrier, --metrics-addr and --output-format json, and puts the results in --out DIR", n)
		}
	}
	pos := fl.Args()
	if len(pos) != 1 {
		what := "one URL"
		switch cmd.Name() {
		case "run":
			what = "one scenario file"
		case "grpc":
			what = "one HOST:PORT"
		}
		return nil, fmt.Errorf("hail %s: expected %s, got %d arguments (%s)", strings.TrimPrefix(cmd.CommandPath(), "hail "), what, len(pos), strings.Join(pos, " "))
	}
	k := &kubeRun{}
	out, err := rewriteFiles(fl, rest, func(kind, path string) (string, error) {
		abs, err := filepath.Abs(path)
		if err != nil {
			return "", err
		}
		if kind == "d" {
			k.dirs = append(k.dirs, abs)
		} else {
			k.files = append(k.files, abs)
		}
		return abs, nil
	}, func(first string) (string, error) { // the positional argument
		if cmd.Name() != "run" && !(cmd == root && fl.Changed("urls-from-file")) {
			return first, nil
		}
		abs, err := filepath.Abs(first)
		if err != nil {
			return "", err
		}
		k.files = append(k.files, abs)
		return abs, nil
	})
	if err != nil {
		return nil, err
	}
	if cmd != root {
		out = append([]string{cmd.Name()}, out...)
	}
	k.args = out
	if f := fl.Lookup("duration"); f != nil && f.Changed {
		k.duration, _ = time.ParseDuration(f.Value.String())
	}
	if rf != nil { // a scenario: load it as its shards will, for its files and length
		sc, _, p, err := loadScenario(cmd, rf, pos)
		if err != nil {
			return nil, err
		}
		for _, f := range sc.Files {
			abs, err := filepath.Abs(f)
			if err != nil {
				return nil, err
			}
			k.files = append(k.files, abs) // a directory (import paths) is shipped whole
		}
		if k.duration == 0 {
			k.duration = p.Duration
		}
	}
	return k, nil
}

// rewriteFiles walks args as pflag parses them and replaces each value of
// a flag marked as naming a file or directory (markFiles, markDirs; and
// --form's name=@FILE, name=<FILE) with fix(kind, value) — kind "f" for a
// file, "d" for a directory — and the first positional argument with
// positional(it).
func rewriteFiles(fl *pflag.FlagSet, args []string, fix func(kind, path string) (string, error), positional func(string) (string, error)) ([]string, error) {
	kindOf := func(f *pflag.Flag) string {
		if f == nil {
			return ""
		}
		_, file := f.Annotations[cobra.BashCompFilenameExt]
		_, dir := f.Annotations[cobra.BashCompSubdirsInDir]
		switch {
		case file:
			return "f"
		case dir:
			return "d"
		case f.Name == "form":
			return "form"
		}
		return ""
	}
	value := func(f *pflag.Flag, v string) (string, error) {
		switch kind := kindOf(f); kind {
		case "form":
			name, rest, ok := strings.Cut(v, "=")
			if !ok || len(rest) == 0 || (rest[0] != '@' && rest[0] != '<') {
				return v, nil
			}
			path, params, semi := strings.Cut(rest[1:], ";")
			if path == "" {
				return v, nil // no file: hail refuses it itself
			}
			p, err := fix("f", path)
			if err != nil {
				return "", err
			}
			if semi {
				p += ";" + params
			}
			return name + "=" + rest[:1] + p, nil
		case "f", "d":
			if v == "" {
				return v, nil
			}
			return fix(kind, v)
		}
		return v, nil
	}
	out := make([]string, 0, len(args))
	seenPositional := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case strings.HasPrefix(a, "--") && len(a) > 2:
			name, v, hasValue := strings.Cut(a[2:], "=")
			f := fl.Lookup(name)
			switch {
			case hasValue:
				nv, err := value(f, v)
				if err != nil {
					return nil, err
				}
				out = append(out, "--"+name+"="+nv)
			case f != nil && f.NoOptDefVal == "" && i+1 < len(args):
				nv, err := value(f, args[i+1])
				if err != nil {
					return nil, err
				}
				out = append(out, a, nv)
				i++
			default:
				out = append(out, a)
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			// Shorthands: booleans run together; the first that takes a
			// value takes the rest of the word, or the next word.
			done := false
			for j := 1; j < len(a) && !done; j++ {
				f := fl.ShorthandLookup(a[j : j+1])
				if f == nil || f.NoOptDefVal != "" {
					continue
				}
				done = true
				if j+1 < len(a) {
					head, v := a[:j+1], a[j+1:]
					if strings.HasPrefix(v, "=") { // -D=FILE
						head, v = head+"=", v[1:]
					}
					nv, err := value(f, v)
					if err != nil {
						return nil, err
					}
					out = append(out, head+nv)
				} else if i+1 < len(args) {
					nv, err := value(f, args[i+1])
					if err != nil {
						return nil, err
					}
					out = append(out, a, nv)
					i++
				} else {
					out = append(out, a)
				}
			}
			if !done {
				out = append(out, a)
			}
		case !seenPositional:
			seenPositional = true
			p, err := positional(a)
			if err != nil {
				return nil, err
			}
			out = append(out, p)
		default:
			out = append(out, a)
		}
	}
	return out, nil
}
