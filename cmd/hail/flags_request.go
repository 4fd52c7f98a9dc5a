package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hail-loadgen/hail/internal/bodyfile"
	"github.com/hail-loadgen/hail/internal/plan"
	"github.com/hail-loadgen/hail/internal/reqgen"
)

// requestFlags say what each request is: oha's -m, -H, -t,
// --connect-timeout, -A, -d, -D, -Z, -F, -T, -a, --aws-session,
// --aws-sigv4 and --host.
type requestFlags struct {
	method      string
	headers     []string
	timeout     time.Duration
	connTimeout time.Duration
	accept      string
	body        string
	bodyFile    string
	bodyLines   string
	form        []string
	contentType string
	basicAuth   string
	awsSession  string
	awsSigV4    string
	host        string

	bodyFileLimit int64 // --body-file-limit: the largest -D, -Z or -F file
}

// bodyFileHelp is --body-file-limit's help, the same for the load and run commands.
const bodyFileHelp = "largest body `SIZE` hail reads from a file (-D, -Z, -F, a scenario's body_file, body_lines and pool files); bodies are held in memory (default 64MiB)"

func addRequestFlags(fl *pflag.FlagSet, f *requestFlags) {
	f.method = "GET"
	f.connTimeout = plan.DefaultConnectTimeout
	fl.StringVarP(&f.method, "method", "m", f.method, "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra `HEADER` 'Name: value' (repeatable)")
	fl.VarP(zeroDurationValue{&f.timeout}, "timeout", "t", "per-request timeout (default: none; 0 for none)")
	fl.Var(durationValue{&f.connTimeout, zeroConnectTimeout}, "connect-timeout", "timeout for DNS + connect + TLS handshake")
	fl.StringVarP(&f.accept, "accept-header", "A", "", "Accept header (default */*)")
	fl.StringVarP(&f.body, "body-string", "d", "", "request `BODY`")
	fl.StringVarP(&f.bodyFile, "body-path", "D", "", "request body from a `FILE`")
	fl.StringVarP(&f.bodyLines, "body-path-lines", "Z", "", "`FILE` of request bodies, one per line: a random line per request")
	fl.Var(sizeValue{&f.bodyFileLimit}, "body-file-limit", bodyFileHelp)
	fl.StringArrayVarP(&f.form, "form", "F", nil,
		"multipart form `FIELD` as curl: name=value, name=@file, name=<file, ;type=, ;filename= (repeatable; POST unless -m)")
	fl.StringVarP(&f.contentType, "content-type", "T", "", "Content-Type header")
	fl.StringVarP(&f.basicAuth, "basic-auth", "a", "", "basic authentication `USER:PASSWORD`; with --aws-sigv4 the AWS keys ACCESS_KEY_ID:SECRET")
	fl.StringVar(&f.awsSession, "aws-session", "", "AWS session `TOKEN` for --aws-sigv4 (default: $AWS_SESSION_TOKEN)")
	fl.StringVar(&f.awsSigV4, "aws-sigv4", "", "sign every request with AWS SigV4: `aws:amz:REGION:SERVICE` (keys from -a or the environment)")
	fl.StringVar(&f.host, "host", "", "Host header (and TLS server name) to send instead of the URL's")
	markFiles(fl, "body-path", "body-path-lines")
	setGroup(fl, groupRequest, "method", "header", "timeout", "connect-timeout", "accept-header", "body-string", "body-path",
		"body-path-lines", "body-file-limit", "form", "content-type", "basic-auth", "aws-session", "aws-sigv4", "host")
}

// apply puts the request into p: method, headers (Accept */* unless -A or
// -H says otherwise, as oha), bodies, timeouts and authentication. It
// returns the SigV4 signer when --aws-sigv4 asks for one.
func (f *requestFlags) apply(cmd *cobra.Command, p *plan.Plan) (*reqgen.SigV4, error) {
	p.Method, p.Timeout, p.ConnectTimeout, p.Host = strings.ToUpper(f.method), f.timeout, f.connTimeout, f.host
	u := p.URL
	if u.User != nil && f.basicAuth == "" {
		pw, _ := u.User.Password()
		f.basicAuth = u.User.Username() + ":" + pw
	}
	u.User = nil
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("-H %q: write headers as 'Name: value'", h)
		}
		p.Headers = append(p.Headers, [2]string{name, strings.TrimSpace(value)})
	}
	has := func(name string) bool {
		return slices.ContainsFunc(p.Headers, func(h [2]string) bool { return strings.EqualFold(h[0], name) })
	}
	switch {
	case f.accept != "":
		p.Headers = append(p.Headers, [2]string{"Accept", f.accept})
	case !has("Accept"):
		p.Headers = append(p.Headers, [2]string{"Accept", "*/*"})
	}
	ctype, err := f.bodies(cmd, p)
	if err != nil {
		return nil, err
	}
	if f.contentType != "" {
		ctype = f.contentType
	}
	if ctype != "" {
		p.Headers = append(p.Headers, [2]string{"Content-Type", ctype})
	}
	if f.awsSigV4 != "" {
		keys, session := f.basicAuth, f.awsSession
		if keys == "" && os.Getenv("AWS_ACCESS_KEY_ID") != "" {
			keys = os.Getenv("AWS_ACCESS_KEY_ID") + ":" + os.Getenv("AWS_SECRET_ACCESS_KEY")
		}
		if session == "" {
			session = os.Getenv("AWS_SESSION_TOKEN")
		}
		return reqgen.ParseSigV4(f.awsSigV4, keys, session)
	}
	if f.awsSession != "" {
		return nil, fmt.Errorf("--aws-session is the session token of --aws-sigv4: give --aws-sigv4 aws:amz:REGION:SERVICE too")
	}
	if f.basicAuth != "" && !has("Authorization") {
		// -a or the URL's user:password; an explicit -H Authorization wins, as with curl
		p.Headers = append(p.Headers, [2]string{"Authorization", "Basic " + base64.StdEncoding.EncodeToString([]byte(f.basicAuth))})
	}
	return nil, nil
}

// bodies reads -d, -D, -Z or -F (one of them) into p.Bodies; it returns the
// Content-Type a form needs. -F makes the method POST unless -m was given.
func (f *requestFlags) bodies(cmd *cobra.Command, p *plan.Plan) (string, error) {
	given := 0
	for _, set := range []bool{f.body != "", f.bodyFile != "", f.bodyLines != "", len(f.form) > 0} {
		if set {
			given++
		}
	}
	if given > 1 {
		return "", fmt.Errorf("-d, -D, -Z and -F each give the body: use only one")
	}
	switch {
	case f.body != "":
		p.Bodies = [][]byte{[]byte(f.body)}
	case f.bodyFile != "":
		// bodyfile bounds every read: a file over --body-file-limit, or
		// beyond the memory left, is one line naming it, never a crash. A
		// large file is mapped, and its requests share it (engine.SharedBody).
		b, err := bodyfile.Map(f.bodyFile, f.bodyFileLimit, 0)
		if err != nil {
			return "", fmt.Errorf("-D %v", err)
		}
		p.Bodies = [][]byte{b}
	case f.bodyLines != "":
		lines, err := bodyfile.Lines(f.bodyLines, f.bodyFileLimit)
		if err != nil {
			return "", fmt.Errorf("-Z %v", err)
		}
		if len(lines) == 0 {
			return "", fmt.Errorf("-Z %s: the file has no lines", f.bodyLines)
		}
		p.Bodies = lines
	case len(f.form) > 0:
		form, err := reqgen.NewForm(f.form, f.bodyFileLimit)
		if err != nil {
			return "", err
		}
		p.Bodies = [][]byte{form.Body}
		if !cmd.Flags().Changed("method") {
			p.Method = "POST"
		}
		return form.ContentType, nil
	}
	return "", nil
}
