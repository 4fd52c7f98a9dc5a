package reqgen

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hail-loadgen/hail/internal/reqgen/sigv4test"
)

// verifySigV4 checks r's signature as an AWS service does (sigv4test).
func verifySigV4(t *testing.T, r *http.Request, keys [2]string, session, region, service string) {
	t.Helper()
	body, _ := io.ReadAll(r.Body)
	if err := sigv4test.Verify(r, body, keys, session, region, service); err != nil {
		t.Error(err)
	}
}

func TestSigV4Verifies(t *testing.T) {
	for _, tc := range []struct {
		name, params, session, url string
		bodies                     []string
	}{
		{"get", "aws:amz:us-east-1:execute-api", "", "http://127.0.0.1:8080/prod/items?b=2&a=1", nil},
		{"post with session", "aws:amz:eu-west-3:lambda", "TOKEN/with+chars", "http://127.0.0.1:8080/fn%20one/invoke", []string{`{"k":1}`}},
		{"s3", "aws:amz:us-west-2:s3", "", "http://127.0.0.1:8080/bucket/key%2Fpart.txt", []string{"data"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSigV4(tc.params, "AKIDEXAMPLE:wJalrXUtnFEMI/K7MDENG", tc.session)
			if err != nil {
				t.Fatal(err)
			}
			p := testPlan(t, tc.url, tc.bodies...)
			p.Headers = [][2]string{{"X-Custom", "v"}, {"Accept", "*/*"}, {"Authorization", "Basic dropped"}}
			g := New(p, nil, s, 1)
			raw, _, _, _ := g.NewBuilder().Next(0)
			r := parse(t, raw)
			if n := len(r.Header.Values("Authorization")); n != 1 {
				t.Fatalf("%d Authorization headers: %q", n, raw)
			}
			signed := r.Header.Get("Authorization")
			if !strings.Contains(signed, "x-custom") || strings.Contains(signed, "accept") || strings.Contains(signed, "user-agent") {
				t.Errorf("signed headers: %s (want X-Custom, not Accept or User-Agent)", signed)
			}
			if tc.session != "" && r.Header.Get("X-Amz-Security-Token") != tc.session {
				t.Errorf("X-Amz-Security-Token %q", r.Header.Get("X-Amz-Security-Token"))
			}
			if strings.HasSuffix(tc.params, ":s3") && r.Header.Get("X-Amz-Content-Sha256") == "" {
				t.Error("S3 requests need X-Amz-Content-Sha256")
			}
			region, service, _ := strings.Cut(strings.TrimPrefix(tc.params, "aws:amz:"), ":")
			verifySigV4(t, r, [2]string{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG"}, tc.session, region, service)
		})
	}
}

// Within one second a worker sends what signing every request would give,
// byte for byte; in the next second the requests are signed again.
func TestSigV4PerSecond(t *testing.T) {
	s, _ := ParseSigV4("aws:amz:us-east-1:execute-api", "AKID:SECRET", "")
	now := time.Date(2026, 1, 2, 3, 4, 5, 100e6, time.UTC)
	s.SetClock(func() time.Time { return now })
	set, err := LoadURLs(urlFile(t, "http://127.0.0.1/a", "http://127.0.0.1/b"))
	if err != nil {
		t.Fatal(err)
	}
	g := New(testPlan(t, set.First()), set, s, 9)
	cached := g.NewBuilder()
	for hit := range uint64(20) {
		cached.Next(hit)
	}
	now = now.Add(800 * time.Millisecond) // 03:04:05.9, the same second
	for hit := range uint64(20) {
		got, _, _, _ := cached.Next(hit)
		fresh, _, _, _ := g.NewBuilder().Next(hit)
		if string(got) != string(fresh) {
			t.Fatalf("request %d differs from a freshly signed one:\n%s\n%s", hit, got, fresh)
		}
	}
	now = now.Add(200 * time.Millisecond) // 03:04:06
	raw, _, _, _ := cached.Next(3)
	r := parse(t, raw)
	if d := r.Header.Get("X-Amz-Date"); d != "20260102T030406Z" {
		t.Errorf("X-Amz-Date %s in the next second, want 20260102T030406Z", d)
	}
	verifySigV4(t, r, [2]string{"AKID", "SECRET"}, "", "us-east-1", "execute-api")
}

func TestSigV4BadInput(t *testing.T) {
	for _, tc := range []struct{ params, keys, want string }{
		{"aws:amz:us-east-1", "a:b", "aws:amz:REGION:SERVICE"},
		{"us-east-1:s3", "a:b", "aws:amz:REGION:SERVICE"},
		{"aws:amz::s3", "a:b", "aws:amz:REGION:SERVICE"},
		{"aws:amz:us-east-1:s3", "", "ACCESS_KEY_ID:SECRET_ACCESS_KEY"},
		{"aws:amz:us-east-1:s3", "onlykey", "ACCESS_KEY_ID:SECRET_ACCESS_KEY"},
	} {
		if _, err := ParseSigV4(tc.params, tc.keys, ""); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: %v, want an error naming %s", tc.params, tc.keys, err, tc.want)
		}
	}
}
