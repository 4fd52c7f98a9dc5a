package grpccall

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/hail-loadgen/hail/internal/bodyfile"
)

// filesSource is a Source over compiled descriptors.
type filesSource struct {
	files *protoregistry.Files
	what  string
}

func (f *filesSource) Describe() string { return f.what }

func (f *filesSource) Services() ([]string, error) {
	var names []string
	f.files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		for i := 0; i < fd.Services().Len(); i++ {
			names = append(names, string(fd.Services().Get(i).FullName()))
		}
		return true
	})
	sort.Strings(names)
	return names, nil
}

func (f *filesSource) Service(name string) (protoreflect.ServiceDescriptor, error) {
	d, err := f.files.FindDescriptorByName(protoreflect.FullName(name))
	if err != nil {
		return nil, &UnknownError{Name: name}
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, &UnknownError{Name: name}
	}
	return sd, nil
}

// FromFiles is a Source over descriptors already at hand (what describes
// itself as what).
func FromFiles(files *protoregistry.Files, what string) Source {
	return &filesSource{files: files, what: what}
}

// FromProto compiles .proto files (--proto) with protocompile. Imports are
// found under importPaths (-i); without any, under each file's own
// directory; the well-known types (google/protobuf/*.proto) are built in.
func FromProto(protoFiles, importPaths []string) (Source, error) {
	paths := append([]string(nil), importPaths...)
	var names []string
	for _, f := range protoFiles {
		if _, err := os.Stat(f); err != nil {
			return nil, fmt.Errorf("--proto %s: %v", f, unwrapPath(err))
		}
		name, dir := relativeTo(f, paths)
		if dir != "" {
			paths = append(paths, dir)
		}
		names = append(names, name)
	}
	files, err := Compile(protocompile.WithStandardImports(&protocompile.SourceResolver{ImportPaths: paths}), names...)
	var ce *CompileError
	if errors.As(err, &ce) {
		return nil, fmt.Errorf("--proto: %v (add the directories of imported files with -i)", firstLine(ce.Err.Error()))
	}
	if err != nil {
		return nil, fmt.Errorf("--proto: %v", err)
	}
	return &filesSource{files: files, what: "--proto " + strings.Join(protoFiles, ",")}, nil
}

// Compile compiles the .proto files names, found by r, with protocompile,
// and returns them with every file they import in a registry of their
// own: the one way hail loads .proto sources (--proto, a scenario's
// grpc.proto, hail serve --grpc's own hail.proto).
func Compile(r protocompile.Resolver, names ...string) (*protoregistry.Files, error) {
	c := protocompile.Compiler{Resolver: r}
	compiled, err := c.Compile(context.Background(), names...)
	if err != nil {
		return nil, &CompileError{Err: err}
	}
	files := &protoregistry.Files{}
	for _, fd := range compiled {
		if err := registerWithDeps(files, fd); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// CompileError is a .proto source that did not compile (a syntax error, an
// import not found).
type CompileError struct{ Err error }

func (e *CompileError) Error() string { return e.Err.Error() }
func (e *CompileError) Unwrap() error { return e.Err }

// relativeTo names file f as the compiler looks it up: relative to the
// first import path that holds it; otherwise by its base name, with its
// directory to add to the import paths.
func relativeTo(f string, importPaths []string) (name, dir string) {
	abs, err := filepath.Abs(f)
	if err == nil {
		for _, p := range importPaths {
			ap, err := filepath.Abs(p)
			if err != nil {
				continue
			}
			if rel, err := filepath.Rel(ap, abs); err == nil && !strings.HasPrefix(rel, "..") {
				return filepath.ToSlash(rel), ""
			}
		}
	}
	return filepath.Base(f), filepath.Dir(f)
}

// registerWithDeps adds fd and, first, the files it imports.
func registerWithDeps(files *protoregistry.Files, fd protoreflect.FileDescriptor) error {
	if _, err := files.FindFileByPath(fd.Path()); err == nil {
		return nil
	}
	for i := 0; i < fd.Imports().Len(); i++ {
		if err := registerWithDeps(files, fd.Imports().Get(i).FileDescriptor); err != nil {
			return err
		}
	}
	return files.RegisterFile(fd)
}

// FromProtoset reads a FileDescriptorSet (protoc --descriptor_set_out
// --include_imports, buf build -o) (--protoset), bounded as other file
// inputs are: bodyfile.Read up to limit bytes (≤ 0: its default).
func FromProtoset(path string, limit int64) (Source, error) {
	b, err := bodyfile.Read(path, limit)
	if err != nil {
		return nil, fmt.Errorf("--protoset %v", err) // bodyfile's errors begin with the path
	}
	var set descriptorpb.FileDescriptorSet
	if err := proto.Unmarshal(b, &set); err != nil {
		return nil, fmt.Errorf("--protoset %s: not a FileDescriptorSet (%v): write one with protoc --include_imports --descriptor_set_out=FILE", path, err)
	}
	files, err := newFiles(set.File)
	if err != nil {
		return nil, fmt.Errorf("--protoset %s: %v (was it written with --include_imports?)", path, err)
	}
	return &filesSource{files: files, what: "--protoset " + path}, nil
}

// newFiles links file descriptor protos; imports missing from them are
// taken from the well-known types linked into hail.
func newFiles(fds []*descriptorpb.FileDescriptorProto) (*protoregistry.Files, error) {
	have := map[string]bool{}
	for _, f := range fds {
		have[f.GetName()] = true
	}
	for i := 0; i < len(fds); i++ {
		for _, dep := range fds[i].GetDependency() {
			if have[dep] {
				continue
			}
			if d, err := protoregistry.GlobalFiles.FindFileByPath(dep); err == nil {
				fds = append(fds, protodesc.ToFileDescriptorProto(d))
				have[dep] = true
			}
		}
	}
	return protodesc.NewFiles(&descriptorpb.FileDescriptorSet{File: fds})
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
