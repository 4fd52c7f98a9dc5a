// Package sigv4test checks AWS Signature Version 4 signatures as an AWS
// service does, for tests of hail's --aws-sigv4: the canonical request is
// rebuilt from what arrived and signed again with the same key and date.
package sigv4test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Verify checks the signature of r, whose body is body, against the keys
// (access key id, secret), the session token, region and service. It
// returns nil when the signature is the one the key gives.
func Verify(r *http.Request, body []byte, keys [2]string, session, region, service string) error {
	auth := r.Header.Get("Authorization")
	_, signedList, ok := strings.Cut(auth, "SignedHeaders=")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential="+keys[0]+"/") || !ok {
		return fmt.Errorf("the Authorization header %q is not a SigV4 signature by %s", auth, keys[0])
	}
	signedList, _, _ = strings.Cut(signedList, ",")
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return fmt.Errorf("X-Amz-Date %q: %v", r.Header.Get("X-Amz-Date"), err)
	}
	again, err := http.NewRequest(r.Method, "http://"+r.Host+r.RequestURI, nil)
	if err != nil {
		return err
	}
	again.Host, again.ContentLength, again.Header = r.Host, int64(len(body)), http.Header{}
	for _, h := range strings.Split(signedList, ";") {
		if h != "host" && h != "content-length" {
			k := textproto.CanonicalMIMEHeaderKey(h)
			again.Header[k] = r.Header.Values(k)
		}
	}
	sum := sha256.Sum256(body)
	creds := aws.Credentials{AccessKeyID: keys[0], SecretAccessKey: keys[1], SessionToken: session}
	signer := v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = service == "s3" })
	if err := signer.SignHTTP(context.Background(), creds, again, hex.EncodeToString(sum[:]), service, region, when); err != nil {
		return err
	}
	if got := again.Header.Get("Authorization"); got != auth {
		return fmt.Errorf("signature does not verify:\n sent     %s\n expected %s", auth, got)
	}
	return nil
}
