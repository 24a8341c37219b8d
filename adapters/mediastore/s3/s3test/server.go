package s3test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/mediastore/s3"
)

// The root account of every test server.
const (
	AccessKey = "halocmstest"
	SecretKey = "halocmstest-secret-key"
	Region    = "us-east-1"
)

// Server is a running versitygw on a loopback port, keeping its buckets
// in a temporary directory; it stops when its test ends.
type Server struct {
	// Endpoint is host:port, as s3.Config wants it.
	Endpoint string
}

var buckets atomic.Int64

// Start starts a server for t and returns the configuration of a new,
// empty bucket on it (created by s3.New) with its own staging directory.
func Start(t testing.TB) s3.Config {
	t.Helper()
	return StartServer(t).Config(t)
}

// Config is the configuration of a new bucket on srv, with a staging
// directory that is removed when t ends.
func (srv *Server) Config(t testing.TB) s3.Config {
	return s3.Config{
		Endpoint:   srv.Endpoint,
		Bucket:     fmt.Sprintf("halocms-test-%d", buckets.Add(1)),
		Region:     Region,
		AccessKey:  AccessKey,
		SecretKey:  SecretKey,
		StagingDir: t.TempDir(),
	}
}

// StartServer builds versitygw if needed and starts it for t. It fails
// the test (never skips it) when the server cannot be built or started.
func StartServer(t testing.TB) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatalf("the S3 test server (versitygw) is needed and could not be built: %v", err)
	}
	root := t.TempDir()
	var last error
	for range 3 { // the free port may be taken between picking and binding it
		srv, err := start(t, bin, root)
		if err == nil {
			return srv
		}
		last = err
	}
	t.Fatalf("the S3 test server (versitygw) did not start: %v", last)
	return nil
}

func start(t testing.TB, bin, root string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	out := &syncBuffer{}
	cmd := exec.Command(bin, "--port", addr, "--access", AccessKey, "--secret", SecretKey,
		"--region", Region, "--quiet", "posix", root)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	deadline := time.Now().Add(30 * time.Second)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-exited:
			exited <- err
			return nil, fmt.Errorf("versitygw exited (%v): %s", err, out.String())
		default:
		}
		// Any HTTP answer (403 for an unsigned request) means it serves.
		if resp, err := client.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			t.Cleanup(stop)
			return &Server{Endpoint: addr}, nil
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("versitygw did not answer on %s within 30s: %s", addr, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// syncBuffer collects the server's output for error messages.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.buf.Len() > 64<<10 {
		return len(p), nil
	}
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
