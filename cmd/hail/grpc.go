package main

import (
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/hail-loadgen/hail/internal/report"
	"github.com/hail-loadgen/hail/internal/run"
	"github.com/hail-loadgen/hail/result"
)

// grpcFlags are hail grpc's flags: ghz's names where ghz has the flag,
// hail's load flags otherwise.
type grpcFlags struct {
	pacing          time.Duration
	call            string
	data, dataFile  string
	binFile         string
	metadata        string
	metadataFile    string
	reflectMetadata string
	protos          []string
	importPaths     []string
	protoset        string
	insecure        bool
	skipTLS         bool
	cacert          string
	cert, key       string
	cname           string
	authority       string
	connectTo       []string
	unixSocket      string
	vsockAddr       string
	vsockUDS        string
	streamCount     int
	n               uint64
	c               int
	p               int
	z               time.Duration
	maxDuration     time.Duration
	bodyFileLimit   int64 // --body-file-limit: the largest file read (-D, -B, -M, -d @, --protoset)
	q               float64
	wait            bool
	timeout         time.Duration
	connTimeout     time.Duration
	outputFlags
	results resultFlags
}

const grpcFormatHelp = "report format: text, json (oha's keys + hail, with hail.grpc; statusCodeDistribution holds gRPC status names), csv (one row per call), csv-seconds, markdown, html or quiet"

func newGRPCCmd() *cobra.Command {
	f := &grpcFlags{n: 200, c: 50, p: 1, timeout: 20 * time.Second, outputFlags: defaultOutputFlags()}
	cmd := &cobra.Command{
		Use:   "grpc [flags] HOST:PORT",
		Short: "load a gRPC service (unary and streaming calls) with hail's load models",
		Long: `hail grpc calls one gRPC method on HOST:PORT and reports as hail does for HTTP: latency
from each call's intended send time in the open model (-q), HdrHistograms, the generator's own
CPU and the verdict. Flags are ghz's where ghz has them (--call, -d, -D, -m, --proto, -i,
--protoset, --insecure, --cacert, --cert, --key, --cname, --authority); -c is connections and
-p calls in flight on each.

The schema comes from --proto (compiled in-process), --protoset, or the server's reflection.
-d is the request as JSON (an array: messages used in turn by unary and server-streaming
calls, or one stream's messages for client and bidi streaming); templates as in scenarios
({{counter}}, {{uuid}}, {{int 1 9}}, …) make each call's payload. A call is one request
whatever its streaming kind; statusCodeDistribution holds gRPC status names (OK, Unavailable,
DeadlineExceeded, …). See docs/grpc.md.`,
		Example: `  hail serve --grpc 127.0.0.1:9090 &
  hail grpc --insecure --call hail.v1.Target/Echo -d '{"payload":"hi"}' -n 10k -c 4 -p 16 \
      127.0.0.1:9090
  hail grpc --insecure --call grpc.health.v1.Health/Check -z 10s -q 2000 127.0.0.1:9090
  hail grpc --proto api.proto -i protos --call api.v1.VMs/Create \
      -d '{"name":"vm-{{counter}}"}' --cacert ca.pem api:443`,
		Args:          cobra.ArbitraryArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGRPC(cmd, f, args)
		},
	}
	cmd.SetFlagErrorFunc(flagError)
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.StringVar(&f.call, "call", "", "the method: package.Service/Method (or package.Service.Method)")
	fl.StringVarP(&f.data, "data", "d", "", "the request as JSON: an object, or an array of messages; templates allowed; @ reads it from stdin")
	fl.StringVarP(&f.dataFile, "data-file", "D", "", "the request JSON from a file")
	fl.StringVarP(&f.binFile, "binary-file", "B", "", "the request as serialized protobuf from a file: length-delimited messages, or one message")
	fl.StringVarP(&f.metadata, "metadata", "m", "", `metadata as a JSON object, {"authorization":"Bearer x"}; templates allowed`)
	fl.StringVarP(&f.metadataFile, "metadata-file", "M", "", "metadata JSON from a file")
	fl.StringVar(&f.reflectMetadata, "reflect-metadata", "", "metadata JSON sent with the reflection requests")
	fl.StringArrayVar(&f.protos, "proto", nil, "the .proto file that defines the service (repeatable); no server reflection needed")
	fl.StringSliceVarP(&f.importPaths, "import-paths", "i", nil, "directories where --proto's imports are found (comma-separated, repeatable)")
	fl.StringVar(&f.protoset, "protoset", "", "a compiled FileDescriptorSet (protoc --include_imports --descriptor_set_out) instead of --proto")
	fl.Var(sizeValue{&f.bodyFileLimit}, "body-file-limit", "largest `SIZE` hail reads from a file (-D, -B, -M, -d @, --protoset); held in memory (default 64MiB)")
	fl.BoolVar(&f.insecure, "insecure", false, "plaintext h2c, no TLS (as ghz)")
	fl.BoolVar(&f.skipTLS, "skipTLS", false, "TLS without verifying the server's certificate")
	fl.StringVar(&f.cacert, "cacert", "", "PEM file of CA certificates to trust")
	fl.StringVar(&f.cert, "cert", "", "TLS client certificate (PEM file; may hold the key too)")
	fl.StringVar(&f.key, "key", "", "private key of --cert (PEM file)")
	fl.StringVar(&f.cname, "cname", "", "TLS server name to verify the certificate against, instead of HOST")
	fl.StringVar(&f.authority, "authority", "", "the :authority of the calls (default HOST:PORT)")
	fl.StringArrayVar(&f.connectTo, "connect-to", nil, "connect HOST:PORT to TARGET_HOST:TARGET_PORT instead (repeatable)")
	fl.StringVar(&f.unixSocket, "unix-socket", "", "connect over this unix socket (HOST:PORT then only names the :authority)")
	fl.StringVar(&f.vsockAddr, "vsock-addr", "", "connect over AF_VSOCK to CID:PORT (a service inside a QEMU/KVM guest)")
	fl.StringVar(&f.vsockUDS, "vsock-uds", "", "connect to PATH:PORT, a Firecracker/Cloud Hypervisor hybrid vsock socket and the guest port")
	fl.Var(intValue{&f.streamCount, "messages"}, "stream-call-count", "client and bidi streaming: messages per stream, cycling through -d's array")
	fl.VarP(countValue{&f.n}, "total", "n", "number of calls (10k, 2m accepted); ignored with -z")
	fl.VarP(intValue{&f.c, "connections"}, "connections", "c", "number of connections")
	fl.VarP(intValue{&f.p, "calls per connection"}, "http2-parallel", "p", "calls in flight on each connection (HTTP/2 streams); c × p in all")
	fl.VarP(durationValue{&f.z, zeroRun}, "duration", "z", "run for this long (10s, 3m) instead of -n calls")
	fl.VarP(zeroDurationValue{&f.maxDuration}, "max-duration", "x", "stop after this long even if -n calls are not done; 0 for no limit")
	fl.VarP(rateValue{&f.q}, "query-per-second", "q", "open model: this many calls per second in total, at fixed intended times")
	fl.VarP(rateValue{&f.q}, "rps", "r", "same as -q (ghz's name)")
	addPacingFlag(fl, &f.pacing)
	fl.BoolVarP(&f.wait, "wait-ongoing-requests-after-deadline", "w", false, "let calls in flight finish after -z or Ctrl-C instead of aborting them")
	fl.VarP(zeroDurationValue{&f.timeout}, "timeout", "t", "each call's deadline, sent as grpc-timeout; 0 for none")
	fl.Var(durationValue{&f.connTimeout, zeroConnectTimeout}, "connect-timeout", "timeout for DNS + connect + TLS handshake (default 5s)")
	addOutputFlags(fl, &f.outputFlags, grpcFormatHelp)
	addResultFlags(fl, &f.results)
	markFiles(fl, "data-file", "binary-file", "metadata-file", "proto", "protoset", "cacert", "cert", "key")
	markDirs(fl, "import-paths")
	return cmd
}

func runGRPC(cmd *cobra.Command, f *grpcFlags, args []string) error {
	out, err := openOutput(f.output, cmd.OutOrStdout()) // checked before the server is asked anything
	if err != nil {
		return err
	}
	defer out.Discard()
	g, err := prepareGRPC(cmd, f, args)
	if err != nil {
		return err
	}
	if g.Method == nil { // no --call: the methods there are to call
		_, err := os.Stdout.WriteString(g.Listing)
		return err
	}
	p := g.plan
	color, err := f.settle(&f.results, p)
	if err != nil {
		return err
	}
	results, err := prepareResults(&f.results, f.format, p, g.Workload, out, requestURLs{})
	if err != nil {
		return err
	}
	interrupt, stop, release := handleSignals(out)
	defer release()
	opts := run.Options{Interrupt: interrupt, SuccessBreakdown: f.successSplit, Config: g.config(f), Workload: g.Workload}
	res, err := execute(p, &f.outputFlags, stop, out, results, opts, nil)
	if err != nil {
		return err
	}
	release() // the output phase (signals.go)
	if res.Hail.GRPC == nil {
		res.Hail.GRPC = &result.GRPCStats{}
	}
	res.Hail.GRPC.Call, res.Hail.GRPC.Kind = g.Method.Name(), g.Method.Kind()
	if err := writeReport(out, res, afterRun(f.format), report.TextOptions{Unit: f.unit, Color: color}); err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	return runExit(&f.results, res)
}
