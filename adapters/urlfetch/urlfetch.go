// Package urlfetch downloads a file from an external URL for the media
// library (updateByUrl with fetch: true), safely: it refuses to reach
// this server's own network (server-side request forgery).
//
// The one rule that matters is enforced where it cannot be bypassed: in
// the dialer's Control hook, which sees the address actually dialed,
// after name resolution, for the first request and for every redirect.
// A name that resolves to a public address once and a private one the
// next time (DNS rebinding), a redirect to an internal address and an
// address written in an unusual form all meet the same check. Proxies
// from the environment are not used (the proxy's address would be the
// one checked).
//
// Only the standard library is used: net/http with its dialer's Control
// hook does all of it, and SSRF-guard libraries add little to the
// ~150 lines here while taking the address policy out of sight.
package urlfetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/halocms/halocms/domain/fault"
)

// Options bound a fetch.
type Options struct {
	// MaxBytes bounds the body (default 100 MiB); a larger one is a
	// fault.TooLarge.
	MaxBytes int64
	// Timeout bounds the whole fetch, body included (default 30s).
	Timeout time.Duration
	// AllowPrivate lets loopback and private addresses through: for
	// tests only, never from configuration.
	AllowPrivate bool
}

// MaxRedirects is how many redirects a fetch follows.
const MaxRedirects = 3

// Fetcher downloads files. Safe for concurrent use.
type Fetcher struct {
	opts    Options
	client  *http.Client
	allowIP func(netip.Addr) bool
}

// New returns a Fetcher.
func New(o Options) *Fetcher {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 100 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	f := &Fetcher{opts: o, allowIP: Public}
	if o.AllowPrivate {
		f.allowIP = func(netip.Addr) bool { return true }
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, Control: f.control}
	transport := &http.Transport{
		Proxy:                 nil,
		DialContext:           dialer.DialContext,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.Timeout,
		MaxIdleConns:          10,
		IdleConnTimeout:       30 * time.Second,
	}
	f.client = &http.Client{Transport: transport, Timeout: o.Timeout, CheckRedirect: f.checkRedirect}
	return f
}

// refused is a dial refused for its address.
type refused struct{ ip netip.Addr }

func (r *refused) Error() string { return "refused address " + r.ip.String() }

// control runs for every connection, with the address about to be
// dialed.
func (f *Fetcher) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("urlfetch: unexpected address %q", address)
	}
	if !f.allowIP(ap.Addr()) {
		return &refused{ap.Addr()}
	}
	return nil
}

func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > MaxRedirects {
		return fault.Invalidf("the url redirects more than %d times", MaxRedirects).With("field", "url")
	}
	return checkURL(req.URL)
}

// Fetch downloads rawURL and returns its body (at most MaxBytes; the
// caller closes it) and a file name for it. The failures are faults:
// Invalid for a URL refused or not answering with a 2xx (extra "field":
// "url"), TooLarge past MaxBytes, Unavailable past Timeout.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (io.ReadCloser, string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", invalid("is not a URL")
	}
	if err := checkURL(u); err != nil {
		return nil, "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, "", invalid("is not a URL")
	}
	req.Header.Set("User-Agent", "halocms-media-fetch/1")
	resp, err := f.client.Do(req)
	if err != nil {
		return nil, "", f.failure(ctx, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, "", fault.Invalidf("the url answered %s, not a file", resp.Status).With("field", "url").With("status", resp.StatusCode)
	}
	if resp.ContentLength > f.opts.MaxBytes {
		resp.Body.Close()
		return nil, "", tooLarge(f.opts.MaxBytes)
	}
	return &body{rc: resp.Body, left: f.opts.MaxBytes, f: f, ctx: ctx}, nameOf(resp), nil
}

// failure turns a failed request into a fault; the caller's cancel stays
// a cancel.
func (f *Fetcher) failure(ctx context.Context, err error) error {
	var fe *fault.Error
	var r *refused
	var dns *net.DNSError
	switch {
	case errors.As(err, &fe):
		return fe
	case errors.As(err, &r):
		return invalid("resolves to a private or reserved address; only public addresses are fetched")
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled):
		return fmt.Errorf("fetch: %w", context.Canceled)
	case isTimeout(err):
		return fault.New(fault.Unavailable, "the url did not answer in %s", f.opts.Timeout).With("field", "url")
	case errors.As(err, &dns):
		return invalid("names a host that is not found")
	}
	return invalid("could not be fetched (the connection failed)")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

func invalid(why string) *fault.Error {
	return fault.Invalidf("the url %s", why).With("field", "url")
}

func tooLarge(limit int64) *fault.Error {
	return fault.New(fault.TooLarge, "the file at the url is larger than %d bytes", limit).With("field", "url")
}

// body bounds the response body and turns its failures into faults.
type body struct {
	rc   io.ReadCloser
	left int64
	f    *Fetcher
	ctx  context.Context
}

func (b *body) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return b.readEnd()
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if err != nil && err != io.EOF {
		err = b.f.failure(b.ctx, err)
	}
	return n, err
}

// readEnd reads one byte past MaxBytes: it tells a body of exactly
// MaxBytes from a longer one.
func (b *body) readEnd() (int, error) {
	n, err := b.rc.Read(make([]byte, 1))
	switch {
	case n > 0:
		return 0, tooLarge(b.f.opts.MaxBytes)
	case err == nil || err == io.EOF:
		return 0, io.EOF
	}
	return 0, b.f.failure(b.ctx, err)
}

func (b *body) Close() error { return b.rc.Close() }

// checkURL refuses what no fetch may use: another scheme than http or
// https, credentials, and a host written as a number in a form other
// than the usual dotted quad ("127.1", "0x7f000001", "2130706433": some
// resolvers read them as addresses). Addresses are checked when dialed.
func checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("must be an http or https URL")
	}
	if u.User != nil {
		return invalid("may not hold credentials")
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if host == "" {
		return invalid("has no host")
	}
	if strings.Contains(host, "%") {
		return invalid("may not name a network interface")
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	labels := strings.Split(host, ".")
	if last := strings.ToLower(labels[len(labels)-1]); strings.HasPrefix(last, "0x") || strings.Trim(last, "0123456789") == "" {
		return invalid("names its host by an address in an unusual form; write it as a dotted quad or a host name")
	}
	return nil
}

// nameOf is the file's name: the Content-Disposition filename when there
// is one, else the last segment of the (final) URL's path, made a base
// name ("" when none).
func nameOf(resp *http.Response) string {
	if _, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition")); err == nil {
		if n := baseName(params["filename"]); n != "" {
			return n
		}
	}
	return baseName(resp.Request.URL.Path)
}

// baseName keeps the last segment of a path (either slash), without
// control or format characters (a right-to-left override would disguise
// an extension), at most 255 characters.
func baseName(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return -1
		}
		return r
	}, strings.ReplaceAll(s, `\`, "/"))
	s = strings.TrimSpace(path.Base(strings.TrimSpace(s)))
	if s == "." || s == ".." || s == "/" || s == "" {
		return ""
	}
	if r := []rune(s); len(r) > 255 {
		s = string(r[:255])
	}
	return s
}
