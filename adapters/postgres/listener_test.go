package postgres_test

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// A connection whose network path silently drops everything says nothing
// to a listener that only waits for notifications: the listener pings
// after a quiet while, gives the connection up when no answer comes, and
// listens on a new one.
func TestListenerLeavesADeadConnection(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url := pgtest.URL(t)
	direct, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	px := newBlackholeProxy(t, direct.Config().ConnConfig.Host, direct.Config().ConnConfig.Port)
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.Fallbacks = "127.0.0.1", px.port, nil
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()

	channel := fmt.Sprintf("listen_dead_%d", time.Now().UnixNano())
	l := postgres.NewListener(pool, channel, nil)
	// A generous ping timeout: the machine may be busy.
	l.PingEvery, l.PingTimeout = 200*time.Millisecond, 5*time.Second
	var heard sync.Map // payloads heard
	l.Handle(func(payload string, all bool) {
		if !all {
			heard.Store(payload, true)
		}
	})
	stopped := make(chan struct{})
	go func() { l.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	// hears sends payload through its own connection until the listener
	// hears it, for at most d.
	hears := func(payload string, d time.Duration) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if _, err := direct.Exec(ctx, `SELECT pg_notify($1, $2)`, channel, payload); err != nil {
				t.Fatal(err)
			}
			if _, ok := heard.Load(payload); ok {
				return true
			}
		}
		return false
	}
	if !hears("before", 10*time.Second) {
		t.Fatal("the listener never heard a notification")
	}
	if px.accepted.Load() != 1 {
		t.Fatalf("%d connections through the proxy, want the listener's alone", px.accepted.Load())
	}
	// Quiet for longer than PingEvery: a ping answered keeps the connection.
	time.Sleep(time.Second)
	if !hears("quiet", 5*time.Second) {
		t.Fatal("after a quiet second, the listener hears nothing")
	}
	if px.accepted.Load() != 1 {
		t.Fatalf("after a quiet second: %d connections made, want the first still in use", px.accepted.Load())
	}
	px.blackhole()
	if !hears("after", 30*time.Second) {
		t.Fatal("30s after its connection went dead, the listener hears nothing")
	}
	if px.accepted.Load() < 2 {
		t.Fatalf("%d connections made, want a new one", px.accepted.Load())
	}
}

// blackholeProxy forwards TCP connections to a PostgreSQL server until
// blackhole is called: from then on the connections open at that moment
// stay open and swallow what either side sends, as a dead network path
// does. Later connections are forwarded.
type blackholeProxy struct {
	port     uint16
	accepted atomic.Int64
	mu       sync.Mutex
	conns    []*proxied
}

type proxied struct{ dead atomic.Bool }

func newBlackholeProxy(t *testing.T, host string, port uint16) *blackholeProxy {
	t.Helper()
	network, addr := "tcp", net.JoinHostPort(host, strconv.Itoa(int(port)))
	if len(host) > 0 && host[0] == '/' {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", host, port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	px := &blackholeProxy{port: uint16(ln.Addr().(*net.TCPAddr).Port)}
	var open []net.Conn
	var openMu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		openMu.Lock()
		defer openMu.Unlock()
		for _, c := range open {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			openMu.Lock()
			open = append(open, c, s)
			openMu.Unlock()
			px.accepted.Add(1)
			p := &proxied{}
			px.mu.Lock()
			px.conns = append(px.conns, p)
			px.mu.Unlock()
			go p.pipe(s, c)
			go p.pipe(c, s)
		}
	}()
	return px
}

// pipe copies from src to dst until either fails, dropping what it reads
// once the connection is dead, then closes both.
func (p *proxied) pipe(dst, src net.Conn) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			return
		}
		if p.dead.Load() {
			continue
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

// blackhole makes every connection open now dead.
func (px *blackholeProxy) blackhole() {
	px.mu.Lock()
	defer px.mu.Unlock()
	for _, p := range px.conns {
		p.dead.Store(true)
	}
}
