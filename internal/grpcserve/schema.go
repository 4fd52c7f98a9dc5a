package grpcserve

import (
	"bytes"
	"context"
	_ "embed"
	"io"
	"sync"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

//go:embed hail.proto
var protoSource []byte

// ProtoFile is the name hail.proto is compiled under.
const ProtoFile = "hail/v1/hail.proto"

// Proto is the source of the services' .proto file (for --proto).
func Proto() []byte { return append([]byte(nil), protoSource...) }

// schema holds the compiled descriptors of hail.proto.
type schema struct {
	files *protoregistry.Files
	file  protoreflect.FileDescriptor
}

var (
	schemaOnce sync.Once
	theSchema  *schema
	schemaErr  error
)

// loadSchema compiles hail.proto once.
func loadSchema() (*schema, error) {
	schemaOnce.Do(func() {
		c := protocompile.Compiler{Resolver: &protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if path != ProtoFile {
					return nil, protoregistry.NotFound
				}
				return io.NopCloser(bytes.NewReader(protoSource)), nil
			}}}
		fds, err := c.Compile(context.Background(), ProtoFile)
		if err != nil {
			schemaErr = err
			return
		}
		files := &protoregistry.Files{}
		if err := files.RegisterFile(fds[0]); err != nil {
			schemaErr = err
			return
		}
		theSchema = &schema{files: files, file: fds[0]}
	})
	return theSchema, schemaErr
}

func (s *schema) msg(name string) protoreflect.MessageDescriptor {
	return s.file.Messages().ByName(protoreflect.Name(name))
}

// resolver finds hail.proto's descriptors, then those linked into the
// binary (health, reflection), for the reflection service.
type resolver struct{ own *protoregistry.Files }

func (r resolver) FindFileByPath(path string) (protoreflect.FileDescriptor, error) {
	if fd, err := r.own.FindFileByPath(path); err == nil {
		return fd, nil
	}
	return protoregistry.GlobalFiles.FindFileByPath(path)
}

func (r resolver) FindDescriptorByName(name protoreflect.FullName) (protoreflect.Descriptor, error) {
	if d, err := r.own.FindDescriptorByName(name); err == nil {
		return d, nil
	}
	return protoregistry.GlobalFiles.FindDescriptorByName(name)
}
