package reqgen

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hail-loadgen/hail/internal/engine"
	"github.com/hail-loadgen/hail/internal/http1"
)

// SigV4 signs requests with AWS Signature Version 4 (oha's --aws-sigv4),
// using the AWS SDK for Go's signer.
//
// A signature covers the request (method, path, query, the signed headers,
// the body's SHA-256) and the signing time to the second (X-Amz-Date). Two
// requests with the same content sent in the same second carry the same
// signature, whether signed once or twice. So each worker keeps the signed
// encoding of the variants (URL and body) it sent, and signs again when the
// second changes: byte for byte what signing every request gives, without
// the signer's work and allocations on every request. Requests to generated
// URLs (--rand-regex-url) all differ and are signed one by one.
//
// As oha does, the headers a proxy or client library may change are sent
// but not signed: Accept, Accept-Encoding, User-Agent, Expect, Range,
// Connection, Presigned-Expires and X-Amzn-Trace-Id. Requests to S3 also
// carry X-Amz-Content-Sha256, as S3 requires (and paths are not escaped
// twice, S3's rule).
type SigV4 struct {
	creds   aws.Credentials
	region  string
	service string
	signer  *v4.Signer
	now     func() time.Time
}

// ParseSigV4 reads --aws-sigv4's "aws:amz:REGION:SERVICE" (oha's and curl's
// form), the credentials "ACCESS_KEY_ID:SECRET_ACCESS_KEY" and an optional
// session token (--aws-session).
func ParseSigV4(params, keys, session string) (*SigV4, error) {
	rest, ok := strings.CutPrefix(params, "aws:amz:")
	region, service, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || region == "" || service == "" || strings.Contains(service, ":") {
		return nil, fmt.Errorf("--aws-sigv4 %q: write it as aws:amz:REGION:SERVICE, e.g. aws:amz:us-east-1:execute-api", params)
	}
	access, secret, ok := strings.Cut(keys, ":")
	if !ok || access == "" || secret == "" {
		return nil, fmt.Errorf("--aws-sigv4 needs the credentials as -a ACCESS_KEY_ID:SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment)")
	}
	s := &SigV4{creds: aws.Credentials{AccessKeyID: access, SecretAccessKey: secret, SessionToken: session},
		region: region, service: service, now: time.Now}
	s.signer = v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = service == "s3" })
	return s, nil
}

// SetClock replaces the clock signatures are dated by (tests).
func (s *SigV4) SetClock(now func() time.Time) { s.now = now }

// unsigned are the headers sent but not signed (oha's list).
var unsigned = []string{"Accept", "Accept-Encoding", "User-Agent", "Expect", "Range", "Connection", "Presigned-Expires", "X-Amzn-Trace-Id"}

// replaced are the headers signing writes; the request's own are dropped.
var replaced = []string{"Authorization", "X-Amz-Date", "X-Amz-Security-Token", "X-Amz-Content-Sha256"}

func named(name string, list []string) bool {
	for _, n := range list {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	return false
}

// headers returns spec's headers with the signature's added, for a request
// to target (origin form) whose body hashes to hash, signed at t.
func (s *SigV4) headers(spec *http1.RequestSpec, target, hash string, t time.Time) [][2]string {
	host := spec.Host
	out := make([][2]string, 0, len(spec.Header)+4)
	for _, h := range spec.Header {
		if strings.EqualFold(h[0], "Host") {
			host = h[1]
		}
		if !named(h[0], replaced) {
			out = append(out, h)
		}
	}
	path, query, _ := strings.Cut(target, "?")
	u := &url.URL{Scheme: "http", Host: host, Path: path, RawQuery: query}
	if p, err := url.PathUnescape(path); err == nil {
		u.Path, u.RawPath = p, path
	}
	req := &http.Request{Method: spec.Method, URL: u, Host: host, Header: http.Header{}, ContentLength: int64(len(spec.Body))}
	if s.service == "s3" {
		out = append(out, [2]string{"X-Amz-Content-Sha256", hash})
	}
	for _, h := range out {
		if !named(h[0], unsigned) && !strings.EqualFold(h[0], "Host") && !strings.EqualFold(h[0], "Content-Length") {
			req.Header.Add(h[0], h[1])
		}
	}
	// SignHTTP fails only for a nil request or credentials it cannot
	// use; neither can happen here.
	_ = s.signer.SignHTTP(context.Background(), s.creds, req, hash, s.service, s.region, t)
	out = append(out, [2]string{"X-Amz-Date", req.Header.Get("X-Amz-Date")})
	if s.creds.SessionToken != "" {
		out = append(out, [2]string{"X-Amz-Security-Token", s.creds.SessionToken})
	}
	return append(out, [2]string{"Authorization", req.Header.Get("Authorization")})
}

// cacheSlots is how many signed variants a worker keeps (direct-mapped).
const cacheSlots = 64

// signCache is one worker's signed requests of the current second.
type signCache struct{ slots [cacheSlots]signSlot }

// signSlot is a signed variant (key: target × bodies + body) and its second.
type signSlot struct {
	key  uint64
	sec  int64
	used bool
	req  []byte
}

// signed returns request c, signed: from the worker's cache when the same
// variant was signed in the same second.
func (b *builder) signed(c choice) []byte {
	g := b.g
	sec := g.sign.now().Unix()
	buf := b.buf[:0]
	var slot *signSlot
	if g.urls == nil || g.urls.gen == nil {
		key := uint64(c.target*len(g.specs) + c.body)
		slot = &b.cache.slots[key%cacheSlots]
		if slot.used && slot.key == key && slot.sec == sec {
			return slot.req
		}
		slot.key, slot.sec, slot.used = key, sec, true
		buf = slot.req[:0]
	}
	spec := g.specs[c.body]
	spec.Target = g.prefix + string(b.tgt)
	spec.Header = g.sign.headers(&spec, string(b.tgt), g.hashes[c.body], time.Unix(sec, 0))
	buf = http1.AppendHead(buf, &spec)
	if len(spec.Body) < engine.SplitAt { // a larger one is shared (builder.Body)
		buf = append(buf, spec.Body...)
	}
	if slot != nil {
		slot.req = buf
	} else {
		b.buf = buf
	}
	return buf
}
