package urlfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

// files serves /f/<name> (body "content of <name>"), /big/<n> (n bytes,
// with or without Content-Length), /hop/<n> (n redirects to /f/end.txt),
// /status/<code> and /slow.
func files(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/f/{name}", func(w http.ResponseWriter, r *http.Request) {
		if cd := r.URL.Query().Get("cd"); cd != "" {
			w.Header().Set("Content-Disposition", cd)
		}
		fmt.Fprintf(w, "content of %s", r.PathValue("name"))
	})
	mux.HandleFunc("/big/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if r.URL.Query().Has("length") {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		for ; n > 0; n -= 100 {
			_, _ = w.Write([]byte(strings.Repeat("x", min(n, 100))))
			w.(http.Flusher).Flush() // no Content-Length unless set
		}
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		to := "/f/end.txt"
		if n > 1 {
			to = fmt.Sprintf("/hop/%d", n-1)
		}
		http.Redirect(w, r, to, http.StatusFound)
	})
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("url"), http.StatusFound)
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		var code int
		fmt.Sscan(r.PathValue("code"), &code)
		w.WriteHeader(code)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Has("body") {
			_, _ = w.Write([]byte("a start"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func wantFault(t *testing.T, err error, kind fault.Kind, text string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != kind || !strings.Contains(fe.Message, text) {
		t.Fatalf("err = %v, want a %v fault saying %q", err, kind, text)
	}
}

func fetchAll(f *Fetcher, u string) (string, string, error) {
	rc, name, err := f.Fetch(context.Background(), u)
	if err != nil {
		return "", "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	return string(b), name, err
}

func TestLoopbackRefusedByDefault(t *testing.T) {
	s := files(t)
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	f := New(Options{})
	for _, host := range []string{"127.0.0.1", "localhost", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "169.254.169.254", "0.0.0.0", "[::]"} {
		start := time.Now()
		_, _, err := fetchAll(f, "http://"+host+":"+port+"/f/a.txt")
		wantFault(t, err, fault.Invalid, "private or reserved address")
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s: refused after %v", host, d)
		}
	}
	for _, host := range []string{"127.1", "0x7f000001", "2130706433", "0177.0.0.1", "0x7f.0.0.1", "127.0.0.1.0"} {
		_, _, err := fetchAll(f, "http://"+host+":"+port+"/f/a.txt")
		wantFault(t, err, fault.Invalid, "unusual form")
	}
	// The same server, allowed.
	body, name, err := fetchAll(New(Options{AllowPrivate: true}), s.URL+"/f/cat.jpg?x=1#frag")
	if err != nil || body != "content of cat.jpg" || name != "cat.jpg" {
		t.Fatalf("allowed fetch = %q, %q, %v", body, name, err)
	}
}

func TestURLsRefused(t *testing.T) {
	f := New(Options{AllowPrivate: true})
	for u, text := range map[string]string{
		"ftp://example.com/a.txt":        "http or https",
		"file:///etc/passwd":             "http or https",
		"gopher://127.0.0.1:70/":         "http or https",
		"http://user:pw@127.0.0.1/a.txt": "credentials",
		"http://:80/a":                   "has no host",
		"http://[fe80::1%25eth0]/a":      "network interface",
		"http://%zz":                     "not a URL",
	} {
		_, _, err := f.Fetch(context.Background(), u)
		wantFault(t, err, fault.Invalid, text)
	}
}

// A redirect is checked when it is dialed: here only 127.0.0.1 is
// allowed, and the second server listens on 127.0.0.2.
func TestRedirectToAnInternalAddress(t *testing.T) {
	s := files(t)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatalf("listen on 127.0.0.2: %v", err)
	}
	inner := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("internal secret"))
	}))
	inner.Listener.Close()
	inner.Listener = ln
	inner.Start()
	defer inner.Close()
	only := func(allowed ...string) func(netip.Addr) bool {
		return func(ip netip.Addr) bool {
			for _, a := range allowed {
				if ip == netip.MustParseAddr(a) {
					return true
				}
			}
			return false
		}
	}
	f := New(Options{})
	f.allowIP = only("127.0.0.1")
	u := s.URL + "/to?url=" + inner.URL + "/secret.txt"
	_, _, err = fetchAll(f, u)
	wantFault(t, err, fault.Invalid, "private or reserved address")
	// Both allowed: the same redirect is followed.
	f.allowIP = only("127.0.0.1", "127.0.0.2")
	if body, name, err := fetchAll(f, u); err != nil || body != "internal secret" || name != "secret.txt" {
		t.Fatalf("allowed redirect = %q, %q, %v", body, name, err)
	}
	// A redirect to another scheme.
	_, _, err = fetchAll(f, s.URL+"/to?url=file:///etc/passwd")
	wantFault(t, err, fault.Invalid, "http or https")
}

func TestRedirectsCounted(t *testing.T) {
	s := files(t)
	f := New(Options{AllowPrivate: true})
	if body, name, err := fetchAll(f, s.URL+fmt.Sprintf("/hop/%d", MaxRedirects)); err != nil || body != "content of end.txt" || name != "end.txt" {
		t.Fatalf("%d redirects = %q, %q, %v", MaxRedirects, body, name, err)
	}
	_, _, err := fetchAll(f, s.URL+fmt.Sprintf("/hop/%d", MaxRedirects+1))
	wantFault(t, err, fault.Invalid, "redirects more than 3 times")
}

func TestSizeLimit(t *testing.T) {
	s := files(t)
	f := New(Options{AllowPrivate: true, MaxBytes: 1000})
	for _, q := range []string{"", "?length"} {
		if body, _, err := fetchAll(f, s.URL+"/big/1000"+q); err != nil || len(body) != 1000 {
			t.Fatalf("exactly MaxBytes%s: %d bytes, %v", q, len(body), err)
		}
		_, _, err := fetchAll(f, s.URL+"/big/1001"+q)
		wantFault(t, err, fault.TooLarge, "larger than 1000 bytes")
	}
	// Refused from its Content-Length, before the body is read.
	_, _, err := f.Fetch(context.Background(), s.URL+"/big/5000?length")
	wantFault(t, err, fault.TooLarge, "larger than 1000 bytes")
}

func TestStatus(t *testing.T) {
	s := files(t)
	f := New(Options{AllowPrivate: true})
	for _, code := range []int{404, 500, 403} {
		_, _, err := f.Fetch(context.Background(), fmt.Sprintf("%s/status/%d", s.URL, code))
		wantFault(t, err, fault.Invalid, fmt.Sprintf("answered %d", code))
	}
	if body, _, err := fetchAll(f, s.URL+"/status/204"); err != nil || body != "" {
		t.Fatalf("204 = %q, %v", body, err)
	}
}

func TestTimeoutAndCancel(t *testing.T) {
	s := files(t)
	f := New(Options{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	for _, u := range []string{s.URL + "/slow", s.URL + "/slow?body"} {
		start := time.Now()
		_, _, err := fetchAll(f, u)
		wantFault(t, err, fault.Unavailable, "did not answer in 200ms")
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s: returned after %v", u, d)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, _, err := New(Options{AllowPrivate: true}).Fetch(ctx, s.URL+"/slow")
	if !errors.Is(err, context.Canceled) || fault.KindOf(err) != fault.Internal {
		t.Fatalf("cancelled fetch = %v, want context.Canceled", err)
	}
}

func TestNames(t *testing.T) {
	s := files(t)
	f := New(Options{AllowPrivate: true})
	for cd, want := range map[string]string{
		`attachment; filename="report 2024.pdf"`:                  "report 2024.pdf",
		`attachment; filename="../../etc/pass\\wd.txt"`:           "wd.txt",
		`attachment; filename*=UTF-8''caf%C3%A9%0A.png`:           "café.png",
		`attachment; filename*=UTF-8''evil%E2%80%AEgpj.exe`:       "evilgpj.exe",
		`attachment; filename=".."`:                               "a.bin",
		`attachment`:                                              "a.bin",
		`inline; filename="/"`:                                    "a.bin",
		`attachment; filename="` + strings.Repeat("n", 300) + `"`: strings.Repeat("n", 255),
	} {
		_, name, err := fetchAll(f, s.URL+"/f/a.bin?cd="+url.QueryEscape(cd))
		if err != nil || name != want {
			t.Errorf("Content-Disposition %s: name %q, %v; want %q", cd, name, err, want)
		}
	}
	if baseName("/") != "" || baseName("") != "" || baseName("dir/") != "dir" {
		t.Fatalf("baseName: %q %q %q", baseName("/"), baseName(""), baseName("dir/"))
	}
}
