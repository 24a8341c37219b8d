// Package clamd scans bytes for malware with ClamAV's daemon, clamd,
// through its INSTREAM command over a unix or TCP socket.
//
// It has no dependency beyond the standard library: the protocol is a
// command, length-prefixed chunks and a one-line reply, and the Go clamd
// clients published are small, unmaintained and do not take a context.
// The daemon (Debian's clamav-daemon) is the dependency; `make clamd`
// installs it for the tests, which run a real clamd (see clamdtest).
package clamd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

// ChunkSize is the largest chunk sent to clamd at once.
const ChunkSize = 64 << 10

// DefaultTimeout bounds a scan whose context has no sooner deadline.
const DefaultTimeout = 2 * time.Minute

// RetryAfter is the Retry-After, in seconds, of a 503 while clamd is out
// of reach (a restart reloads the signatures in some seconds).
const RetryAfter = 10

// maxReply bounds clamd's answer (a line naming a signature).
const maxReply = 4 << 10

// Client talks to one clamd. It holds no connection: each call dials,
// which clamd serves with one of its threads. Safe for concurrent use.
type Client struct {
	network, address string
	// Timeout bounds a call whose context has no sooner deadline
	// (DefaultTimeout when zero).
	Timeout time.Duration
	dialer  net.Dialer
}

// New returns a client of the clamd at addr: "unix:/run/clamav/clamd.ctl"
// or "tcp:host:3310". It does not connect (see Ping).
func New(addr string) (*Client, error) {
	network, address, ok := strings.Cut(addr, ":")
	switch {
	case !ok || address == "":
	case network == "unix":
		return &Client{network: network, address: address}, nil
	case network == "tcp":
		if _, port, err := net.SplitHostPort(address); err == nil && port != "" {
			return &Client{network: network, address: address}, nil
		}
	}
	return nil, fmt.Errorf("clamd address %q: want unix:/path/to/socket or tcp:host:port", addr)
}

// Addr is the address the client was made with.
func (c *Client) Addr() string { return c.network + ":" + c.address }

// Ping checks that clamd answers.
func (c *Client) Ping(ctx context.Context) error {
	reply, err := c.call(ctx, func(conn net.Conn) error {
		_, err := conn.Write([]byte("zPING\x00"))
		return err
	})
	if err != nil {
		return err
	}
	if reply != "PONG" {
		return c.unavailable(fmt.Errorf("PING answered %q", reply))
	}
	return nil
}

// Scan sends r's bytes to clamd. A finding is a fault.Invalid naming the
// signature (extra "virus"); clamd out of reach or failing is a
// fault.Unavailable (the bytes must not be kept unscanned); a stream
// longer than clamd's StreamMaxLength is a fault.TooLarge.
func (c *Client) Scan(ctx context.Context, r io.Reader) error {
	reply, err := c.call(ctx, func(conn net.Conn) error {
		if _, err := conn.Write([]byte("zINSTREAM\x00")); err != nil {
			return err
		}
		buf := make([]byte, 4+ChunkSize)
		for {
			n, err := r.Read(buf[4:])
			if n > 0 {
				binary.BigEndian.PutUint32(buf, uint32(n))
				if _, werr := conn.Write(buf[:4+n]); werr != nil {
					return werr
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				return &sourceError{err}
			}
		}
		_, err := conn.Write([]byte{0, 0, 0, 0})
		return err
	})
	if err != nil {
		return err
	}
	return c.verdict(reply)
}

// sourceError is a failure to read the bytes to scan: no reply is
// waited for.
type sourceError struct{ err error }

func (e *sourceError) Error() string { return "read the bytes to scan: " + e.err.Error() }
func (e *sourceError) Unwrap() error { return e.err }

// verdict reads INSTREAM's reply: "stream: OK", "stream: <name> FOUND",
// or "<why> ERROR".
func (c *Client) verdict(reply string) error {
	switch {
	case reply == "stream: OK":
		return nil
	case strings.HasSuffix(reply, " FOUND"):
		name := strings.TrimSuffix(strings.TrimPrefix(reply, "stream: "), " FOUND")
		return fault.Invalidf("the file contains malware (%s)", name).With("virus", name)
	case strings.HasPrefix(reply, "INSTREAM size limit exceeded"):
		return fault.New(fault.TooLarge, "the file is larger than the virus scanner accepts (clamd's StreamMaxLength)")
	}
	return c.unavailable(fmt.Errorf("clamd answered %q", reply))
}

// call dials, runs send and reads the reply, within ctx (or Timeout). A
// write clamd cut short (a stream over its limit) still yields the reply
// it sent before closing.
func (c *Client) call(ctx context.Context, send func(net.Conn) error) (string, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := c.dialer.DialContext(ctx, c.network, c.address)
	if err != nil {
		return "", c.failed(ctx, err)
	}
	defer conn.Close()
	if d, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(d)
	}
	// A cancel unblocks a read or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	sendErr := send(conn)
	if se := (*sourceError)(nil); errors.As(sendErr, &se) {
		return "", se
	}
	reply, readErr := readReply(conn)
	switch {
	case ctx.Err() != nil:
		return "", c.failed(ctx, ctx.Err())
	case readErr == nil:
		return reply, nil
	case sendErr != nil:
		return "", c.failed(ctx, sendErr)
	}
	return "", c.failed(ctx, readErr)
}

// readReply reads up to the NUL that ends a z-command's reply.
func readReply(conn net.Conn) (string, error) {
	var buf bytes.Buffer
	b := make([]byte, 512)
	for buf.Len() < maxReply {
		n, err := conn.Read(b)
		buf.Write(b[:n])
		if i := bytes.IndexByte(buf.Bytes(), 0); i >= 0 {
			return strings.TrimSpace(string(buf.Bytes()[:i])), nil
		}
		if err == io.EOF {
			return "", fmt.Errorf("clamd closed the connection after %q: %w", buf.String(), io.ErrUnexpectedEOF)
		}
		if err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("clamd's reply is longer than %d bytes", maxReply)
}

// failed is a failure to talk to clamd: the caller's cancel stays a
// cancel, anything else makes the scanner unavailable.
func (c *Client) failed(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
		return fmt.Errorf("clamd %s: %w", c.Addr(), context.Canceled)
	}
	return c.unavailable(err)
}

// unavailable is a 503 for the caller; the cause stays in the error's
// text for the log.
func (c *Client) unavailable(cause error) error {
	return &unavailableError{fault: fault.New(fault.Unavailable,
		"the virus scanner is unavailable, so the file was not accepted; try again later").With("retryAfter", RetryAfter),
		cause: fmt.Errorf("clamd %s: %w", c.Addr(), cause)}
}

// unavailableError is a fault.Unavailable that keeps its cause.
type unavailableError struct {
	fault *fault.Error
	cause error
}

func (e *unavailableError) Error() string { return e.cause.Error() + ": " + e.fault.Message }

// Unwrap yields both the fault (for the HTTP status) and the cause.
func (e *unavailableError) Unwrap() []error { return []error{e.fault, e.cause} }
