package clamd_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/clamd"
	"github.com/halocms/halocms/adapters/clamd/clamdtest"
	"github.com/halocms/halocms/domain/fault"
)

func TestNewAddresses(t *testing.T) {
	for _, ok := range []string{"unix:/run/clamav/clamd.ctl", "tcp:127.0.0.1:3310", "tcp:clamav:3310", "tcp:[::1]:3310"} {
		c, err := clamd.New(ok)
		if err != nil || c.Addr() != ok {
			t.Errorf("New(%q) = %v, %v", ok, c, err)
		}
	}
	for _, bad := range []string{"", "unix:", "/run/clamd.ctl", "tcp:localhost", "udp:1.2.3.4:3310", "tcp:"} {
		if _, err := clamd.New(bad); err == nil {
			t.Errorf("New(%q) accepted", bad)
		}
	}
}

func TestScan(t *testing.T) {
	start := time.Now()
	c, err := clamd.New(clamdtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("clamd answered after %v", time.Since(start).Round(time.Millisecond))
	ctx := context.Background()
	if err := c.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}

	t.Run("clean", func(t *testing.T) {
		if err := c.Scan(ctx, strings.NewReader("hello, a clean file\n")); err != nil {
			t.Fatalf("clean bytes: %v", err)
		}
		if err := c.Scan(ctx, strings.NewReader("")); err != nil {
			t.Fatalf("no bytes: %v", err)
		}
	})

	t.Run("malware", func(t *testing.T) {
		for name, body := range map[string]io.Reader{
			"alone": strings.NewReader(clamdtest.EICAR),
			// Past the first chunk, split across two reads.
			"inside": io.MultiReader(bytes.NewReader(make([]byte, clamd.ChunkSize+100)),
				strings.NewReader(clamdtest.EICAR[:30]), strings.NewReader(clamdtest.EICAR[30:])),
		} {
			err := c.Scan(ctx, body)
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
				t.Fatalf("%s: Scan = %v, want fault.Invalid", name, err)
			}
			virus, _ := fe.Extra["virus"].(string)
			if !strings.HasPrefix(virus, clamdtest.Signature) || !strings.Contains(fe.Message, virus) {
				t.Fatalf("%s: finding %q (%q), want %s", name, fe.Message, virus, clamdtest.Signature)
			}
		}
	})

	t.Run("large clean stream", func(t *testing.T) {
		big := make([]byte, 5<<20)
		_, _ = rand.Read(big)
		start := time.Now()
		if err := c.Scan(ctx, bytes.NewReader(big)); err != nil {
			t.Fatalf("5 MiB: %v", err)
		}
		t.Logf("5 MiB scanned in %v", time.Since(start).Round(time.Millisecond))
	})

	t.Run("over clamd's limit", func(t *testing.T) {
		err := c.Scan(ctx, io.LimitReader(zeros{}, clamdtest.StreamMaxLength+ChunkAndMore))
		if !fault.Is(err, fault.TooLarge) {
			t.Fatalf("Scan past StreamMaxLength = %v, want fault.TooLarge", err)
		}
	})

	t.Run("source fails", func(t *testing.T) {
		boom := errors.New("boom")
		done := make(chan error, 1)
		go func() { done <- c.Scan(ctx, io.MultiReader(strings.NewReader("abc"), failing{boom})) }()
		select {
		case err := <-done:
			if !errors.Is(err, boom) || fault.KindOf(err) != fault.Internal {
				t.Fatalf("Scan = %v, want the reader's error", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("Scan waited for clamd after its source failed")
		}
	})

	// A source slower than the cancel: the next write to clamd fails.
	t.Run("cancelled", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		err := c.Scan(ctx, slow{})
		if !errors.Is(err, context.Canceled) || fault.KindOf(err) != fault.Internal {
			t.Fatalf("Scan = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Scan returned %v after the cancel", d)
		}
	})

	t.Run("deadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		if err := c.Scan(ctx, slow{}); !fault.Is(err, fault.Unavailable) {
			t.Fatalf("Scan past its deadline = %v, want fault.Unavailable", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("Scan returned %v after its deadline", d)
		}
	})
}

// The same daemon over TCP.
func TestScanOverTCP(t *testing.T) {
	c, err := clamd.New(clamdtest.Run(t).TCPAddr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Scan(context.Background(), strings.NewReader("clean")); err != nil {
		t.Fatalf("clean over TCP: %v", err)
	}
	if err := c.Scan(context.Background(), strings.NewReader(clamdtest.EICAR)); !fault.Is(err, fault.Invalid) {
		t.Fatalf("EICAR over TCP: %v, want fault.Invalid", err)
	}
}

func TestUnavailable(t *testing.T) {
	d := clamdtest.Run(t)
	c, err := clamd.New(d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Scan(context.Background(), strings.NewReader("x")); err != nil {
		t.Fatalf("before the stop: %v", err)
	}
	d.Stop()
	for _, call := range []func() error{
		func() error { return c.Scan(context.Background(), strings.NewReader(clamdtest.EICAR)) },
		func() error { return c.Ping(context.Background()) },
	} {
		err := call()
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Unavailable || !strings.Contains(fe.Message, "not accepted") {
			t.Fatalf("clamd stopped: %v, want fault.Unavailable", err)
		}
		if !strings.Contains(err.Error(), d.Addr) {
			t.Fatalf("error %q does not name the address (for the log)", err)
		}
	}
	// Nothing listens on a TCP port just closed.
	tcp, err := clamd.New("tcp:127.0.0.1:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := tcp.Scan(context.Background(), strings.NewReader("x")); !fault.Is(err, fault.Unavailable) {
		t.Fatalf("nothing listening: %v, want fault.Unavailable", err)
	}
}

// ChunkAndMore takes a stream past a limit by more than a chunk.
const ChunkAndMore = clamd.ChunkSize + 1

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }

// slow yields a byte every 10ms.
type slow struct{}

func (slow) Read(p []byte) (int, error) {
	time.Sleep(10 * time.Millisecond)
	p[0] = 'x'
	return 1, nil
}

// A clamd that takes the stream and never answers: a cancel while the
// client waits for the reply returns at once.
func TestCancelWhileWaitingForTheReply(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer conn.Close(); _, _ = io.Copy(io.Discard, conn) }()
		}
	}()
	c, err := clamd.New("tcp:" + ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	if err := c.Scan(ctx, strings.NewReader("abc")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Scan = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("Scan returned %v after the cancel", d)
	}
	c.Timeout = 200 * time.Millisecond
	if err := c.Ping(context.Background()); !fault.Is(err, fault.Unavailable) {
		t.Fatalf("Ping of a silent clamd past Timeout = %v, want fault.Unavailable", err)
	}
}

// One client, many scans at once: each gets its own verdict.
func TestConcurrentScans(t *testing.T) {
	c, err := clamd.New(clamdtest.Start(t))
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			body, infected := strings.Repeat("clean ", 1000*i), i%2 == 1
			if infected {
				body += clamdtest.EICAR
			}
			err := c.Scan(context.Background(), strings.NewReader(body))
			switch {
			case infected && !fault.Is(err, fault.Invalid):
				errs <- fmt.Errorf("scan %d (infected) = %v", i, err)
			case !infected && err != nil:
				errs <- fmt.Errorf("scan %d (clean) = %v", i, err)
			default:
				errs <- nil
			}
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
