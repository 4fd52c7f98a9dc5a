package plan

import (
	"fmt"
	"strings"
)

// FieldError is a problem with a Plan, naming the field at fault. Its
// Error names fields as the Go API does ("Connections 0: need at least one
// connection"); the command line renders the same error with its flags
// ("-c 0: need at least one connection") through Message.
type FieldError struct {
	// Field is the Plan field at fault ("Connections").
	Field string
	// Value is the offending value as written in a message ("0", `"h4"`),
	// or "" when the message does not repeat it.
	Value string
	// Problem is what is wrong and what to do. It names other fields as
	// {Field} (replaced by Message).
	Problem string
}

// Error implements error with Go field names.
func (e *FieldError) Error() string { return e.Message(func(f string) string { return f }) }

// Message renders the error with name(field) for every field it names.
func (e *FieldError) Message(name func(field string) string) string {
	var b strings.Builder
	b.WriteString(name(e.Field))
	if e.Value != "" {
		b.WriteByte(' ')
		b.WriteString(e.Value)
	}
	b.WriteString(": ")
	b.WriteString(e.problem(name))
	return b.String()
}

// Renamed is the error with every field renamed by name (for an API whose
// fields have other names); its Problem names no more fields to replace.
func (e *FieldError) Renamed(name func(field string) string) *FieldError {
	return &FieldError{Field: name(e.Field), Value: e.Value, Problem: e.problem(name)}
}

// problem is Problem with name(field) for each {field} that names a Plan
// field (other braces, say in a quoted header value, stay as they are).
func (e *FieldError) problem(name func(field string) string) string {
	var b strings.Builder
	p := e.Problem
	for {
		i := strings.IndexByte(p, '{')
		if i < 0 {
			b.WriteString(p)
			break
		}
		j := strings.IndexByte(p[i:], '}')
		if _, field := Flags[p[i+1:max(i+j, i+1)]]; j < 0 || !field {
			b.WriteString(p[:i+1])
			p = p[i+1:]
			continue
		}
		b.WriteString(p[:i])
		b.WriteString(name(p[i+1 : i+j]))
		p = p[i+j+1:]
	}
	return b.String()
}

// fieldErr makes a FieldError; value is formatted with %v unless it is
// nil.
func fieldErr(field string, value any, problem string, args ...any) *FieldError {
	e := &FieldError{Field: field, Problem: fmt.Sprintf(problem, args...)}
	switch v := value.(type) {
	case nil:
	case string:
		e.Value = fmt.Sprintf("%q", v)
	default:
		e.Value = fmt.Sprint(v)
	}
	return e
}

// Flags names each Plan field by the command-line flag that sets it, for
// FieldError.Message.
var Flags = map[string]string{
	"URL": "URL", "Method": "-m", "Headers": "-H", "Bodies": "-d", "HTTP10": "--http-version 1.0",
	"KeepAlive": "--disable-keepalive", "Host": "--host", "Connections": "-c", "Requests": "-n", "Duration": "-z",
	"Rate": "-q", "BurstEvery": "--burst-delay", "BurstSize": "--burst-rate", "WaitOngoing": "-w", "PacingGranularity": "--pacing-granularity", "Timeout": "-t",
	"ConnectTimeout": "--connect-timeout", "MaxRedirects": "-r", "ConnectTo": "--connect-to", "IPv4": "--ipv4",
	"IPv6": "--ipv6", "NoPreLookup": "--no-pre-lookup", "UnixSocket": "--unix-socket", "Insecure": "--insecure",
	"CACert": "--cacert", "Engine": "--engine", "ShardIndex": "--shard", "ShardCount": "--shard", "StartAt": "--start-at",
	"SQPoll": "--sqpoll", "HTTPVersion": "--http-version", "Streams": "-p", "Vsock": "--vsock-addr",
	"VsockUDS": "--vsock-uds", "Proxy": "--proxy", "ProxyHeaders": "--proxy-header", "Cert": "--cert", "Key": "--key",
	"SSE": "--sse", "IdleTimeout": "--idle-timeout", "StreamDrain": "--stream-drain",
	"HTTP2": "--http2 (or --http-version 2 or 3)", // not a field: HTTPVersion "2" or "3"
}

// FlagName names field by its flag (the field itself when it has none).
func FlagName(field string) string {
	if f, ok := Flags[field]; ok {
		return f
	}
	return field
}
