// Package clamdtest runs a real clamd for tests: Debian's clamav-daemon
// (`make clamd` installs it) with a signature database of its own, made
// here, that knows one signature, for the EICAR test file. No signature
// download is needed, and the daemon starts in well under a second.
package clamdtest

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/clamd"
)

// EICAR is the anti-malware test file: every scanner reports it, and it
// does no harm.
const EICAR = `X5O!P%@AP[4\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*`

// Signature is the name the test database gives EICAR; clamd reports it
// as "Halocms.Test.EICAR.UNOFFICIAL" (a signature of a local database).
const Signature = "Halocms.Test.EICAR"

// StreamMaxLength is the largest stream the test daemon scans.
const StreamMaxLength = 64 << 20

// Binary is the clamd that Start runs: $CLAMD, else /usr/sbin/clamd.
func Binary() string {
	if b := os.Getenv("CLAMD"); b != "" {
		return b
	}
	return "/usr/sbin/clamd"
}

// Daemon is a clamd started for a test.
type Daemon struct {
	// Addr is its address for clamd.New ("unix:/…/clamd.sock").
	Addr string
	// TCPAddr is the same daemon on TCP ("tcp:127.0.0.1:<port>").
	TCPAddr string
	dir     string
	cmd     *exec.Cmd
	once    sync.Once
	done    chan struct{}
}

// Start runs a clamd until the test ends and returns its address.
func Start(t testing.TB) string { return Run(t).Addr }

// Run runs a clamd until the test ends (or Stop) and waits until it
// answers PING. It fails the test when clamd is not installed.
func Run(t testing.TB) *Daemon {
	t.Helper()
	bin := Binary()
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("clamd is not installed (%v): run make clamd (Debian's clamav-daemon), or set CLAMD", err)
	}
	// A short directory: a unix socket's path is at most 107 bytes.
	dir, err := os.MkdirTemp("", "clamd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	db := filepath.Join(dir, "db")
	if err := os.Mkdir(db, 0o700); err != nil {
		t.Fatal(err)
	}
	// An extended signature: any file type, anywhere, EICAR's bytes.
	sig := fmt.Sprintf("%s:0:*:%s\n", Signature, hex.EncodeToString([]byte(EICAR)))
	if err := os.WriteFile(filepath.Join(db, "halocms-test.ndb"), []byte(sig), 0o600); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "clamd.sock")
	port := freePort(t)
	conf := fmt.Sprintf(`LocalSocket %s
TCPAddr 127.0.0.1
TCPSocket %d
DatabaseDirectory %s
TemporaryDirectory %s
LogFile %s
Foreground yes
StreamMaxLength %d
MaxThreads 4
SelfCheck 0
`, sock, port, db, dir, filepath.Join(dir, "clamd.log"), StreamMaxLength)
	if err := os.WriteFile(filepath.Join(dir, "clamd.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	d := &Daemon{Addr: "unix:" + sock, TCPAddr: fmt.Sprintf("tcp:127.0.0.1:%d", port), dir: dir, done: make(chan struct{})}
	var out bytes.Buffer
	d.cmd = exec.Command(bin, "-c", filepath.Join(dir, "clamd.conf"))
	d.cmd.Stdout, d.cmd.Stderr = &out, &out
	d.cmd.SysProcAttr = dieWithParent()
	if err := d.cmd.Start(); err != nil {
		t.Fatalf("start clamd: %v", err)
	}
	go func() { _ = d.cmd.Wait(); close(d.done) }()
	t.Cleanup(d.Stop)
	c, err := clamd.New(d.Addr)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx)
		cancel()
		if err == nil {
			return d
		}
		select {
		case <-d.done:
			t.Fatalf("clamd exited: %s\n%s", out.String(), d.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("clamd did not answer in 30s: %v\n%s", err, d.log())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort is a TCP port free a moment ago.
func freePort(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// Stop stops the daemon (SIGTERM, then SIGKILL after 5s) and waits for it.
func (d *Daemon) Stop() {
	d.once.Do(func() {
		_ = d.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-d.done:
		case <-time.After(5 * time.Second):
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
}

func (d *Daemon) log() string {
	b, _ := os.ReadFile(filepath.Join(d.dir, "clamd.log"))
	return string(b)
}
