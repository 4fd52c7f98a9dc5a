package grpcserve

import (
	"bytes"
	_ "embed"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/hail-loadgen/hail/internal/grpccall"
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
	d     descs
}

// descs are the descriptors the handlers use, looked up once when the
// schema is compiled rather than by name in every call.
type descs struct {
	target, items protoreflect.ServiceDescriptor

	echoRequest, echoReply, statsReply, item, deleteItemReply protoreflect.MessageDescriptor

	reqPayload, reqDelay, reqStatus, reqCount, reqSize protoreflect.FieldDescriptor // EchoRequest's
	replyPayload, replyMessages                        protoreflect.FieldDescriptor // EchoReply's
	statsReset                                         protoreflect.FieldDescriptor // StatsRequest's
	statsCalls, statsReceived, statsSent               protoreflect.FieldDescriptor // StatsReply's
	createName, createTenant, createCPUs               protoreflect.FieldDescriptor // CreateItemRequest's
	refID                                              protoreflect.FieldDescriptor // ItemRef's
	itemID, itemName, itemTenant, itemCPUs             protoreflect.FieldDescriptor // Item's
}

// lookUp fills s.d; a name hail.proto lacks is an error.
func (s *schema) lookUp() error {
	var missing []string
	svc := func(name string) protoreflect.ServiceDescriptor {
		sd := s.file.Services().ByName(protoreflect.Name(name))
		if sd == nil {
			missing = append(missing, name)
		}
		return sd
	}
	msg := func(name string) protoreflect.MessageDescriptor {
		md := s.msg(name)
		if md == nil {
			missing = append(missing, name)
		}
		return md
	}
	field := func(md protoreflect.MessageDescriptor, name string) protoreflect.FieldDescriptor {
		if md == nil {
			return nil
		}
		fd := md.Fields().ByName(protoreflect.Name(name))
		if fd == nil {
			missing = append(missing, string(md.Name())+"."+name)
		}
		return fd
	}
	d := &s.d
	d.target, d.items = svc("Target"), svc("Items")
	d.echoRequest, d.echoReply, d.statsReply = msg("EchoRequest"), msg("EchoReply"), msg("StatsReply")
	d.item, d.deleteItemReply = msg("Item"), msg("DeleteItemReply")
	statsRequest, createItemRequest, itemRef := msg("StatsRequest"), msg("CreateItemRequest"), msg("ItemRef")
	d.reqPayload, d.reqDelay, d.reqStatus = field(d.echoRequest, "payload"), field(d.echoRequest, "delay"), field(d.echoRequest, "status")
	d.reqCount, d.reqSize = field(d.echoRequest, "count"), field(d.echoRequest, "size")
	d.replyPayload, d.replyMessages = field(d.echoReply, "payload"), field(d.echoReply, "messages")
	d.statsReset = field(statsRequest, "reset")
	d.statsCalls, d.statsReceived, d.statsSent = field(d.statsReply, "calls"), field(d.statsReply, "messages_received"), field(d.statsReply, "messages_sent")
	d.createName, d.createTenant, d.createCPUs = field(createItemRequest, "name"), field(createItemRequest, "tenant"), field(createItemRequest, "cpus")
	d.refID = field(itemRef, "id")
	d.itemID, d.itemName, d.itemTenant, d.itemCPUs = field(d.item, "id"), field(d.item, "name"), field(d.item, "tenant"), field(d.item, "cpus")
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", ProtoFile, strings.Join(missing, ", "))
	}
	return nil
}

var (
	schemaOnce sync.Once
	theSchema  *schema
	schemaErr  error
)

// loadSchema compiles hail.proto once.
func loadSchema() (*schema, error) {
	schemaOnce.Do(func() {
		files, err := grpccall.Compile(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if path != ProtoFile {
					return nil, protoregistry.NotFound
				}
				return io.NopCloser(bytes.NewReader(protoSource)), nil
			}}, ProtoFile)
		if err != nil {
			schemaErr = err
			return
		}
		file, err := files.FindFileByPath(ProtoFile)
		if err != nil {
			schemaErr = err
			return
		}
		sch := &schema{files: files, file: file}
		if err := sch.lookUp(); err != nil {
			schemaErr = err
			return
		}
		theSchema = sch
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
