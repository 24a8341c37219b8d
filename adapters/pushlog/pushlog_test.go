package pushlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/halocms/halocms/adapters/pushlog"
	"github.com/halocms/halocms/adapters/pushtest"
	"github.com/halocms/halocms/domain/push"
)

// lockedBuffer is a log sink that concurrent sends may share.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestContract(t *testing.T) {
	pushtest.Run(t, func(t *testing.T, reply pushtest.Reply) (pushtest.Sender, bool) {
		if reply != pushtest.Accept {
			return nil, false // the log provider only ever delivers
		}
		return pushlog.New(slog.New(slog.NewJSONHandler(&lockedBuffer{}, nil))), true
	})
}

func TestSendLogsTheMessageButNotTheWholeToken(t *testing.T) {
	var buf lockedBuffer
	s := pushlog.New(slog.New(slog.NewJSONHandler(&buf, nil)))
	m := pushtest.Message(push.IOS, "0123456789abcdef0123456789abcdef")

	if got := s.Send(context.Background(), m); got.Outcome != push.Delivered {
		t.Fatalf("Send = %+v, want delivered", got)
	}

	var rec map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &rec); err != nil {
		t.Fatalf("log line %q: %v", buf.String(), err)
	}
	want := map[string]any{
		"level": "INFO", "msg": "push sent", "schedule": "sched-1", "alias": "alias-1",
		"platform": "ios", "token": "01234567…", "title": "Hello", "silent": false,
	}
	for k, v := range want {
		if rec[k] != v {
			t.Errorf("log %s = %v, want %v", k, rec[k], v)
		}
	}
	if strings.Contains(buf.String(), "89abcdef0123") {
		t.Errorf("the log holds the whole token: %s", buf.String())
	}
}

func TestNewWithoutLoggerUsesTheDefault(t *testing.T) {
	var buf lockedBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	pushlog.New(nil).Send(context.Background(), pushtest.Message(push.Android, "tok"))

	if !strings.Contains(buf.String(), "schedule=sched-1") || !strings.Contains(buf.String(), "token=tok") {
		t.Fatalf("default log = %q, want the message", buf.String())
	}
}
