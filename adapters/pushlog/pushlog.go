// Package pushlog is the development push provider: it logs each message
// instead of sending it, and reports it delivered.
package pushlog

import (
	"context"
	"log/slog"

	"github.com/halocms/halocms/domain/push"
)

// Sender logs messages. It is safe for concurrent use.
type Sender struct{ log *slog.Logger }

// New returns a Sender that logs to log (slog.Default() when nil).
func New(log *slog.Logger) *Sender {
	if log == nil {
		log = slog.Default()
	}
	return &Sender{log: log}
}

// tokenPrefix is how much of a device token is logged: enough to tell
// devices apart, too little to push to them.
const tokenPrefix = 8

// Send logs m at info (schedule, alias, platform, the token's first
// characters, title) and returns Delivered; a cancelled ctx is Retry, as
// with the real providers.
func (s *Sender) Send(ctx context.Context, m push.Message) push.Result {
	if err := ctx.Err(); err != nil {
		return push.Result{Outcome: push.Retry, Reason: err.Error()}
	}
	token := m.Device.Token
	if len(token) > tokenPrefix {
		token = token[:tokenPrefix] + "…"
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "push sent",
		slog.String("schedule", m.ScheduleID),
		slog.String("alias", m.Device.Alias),
		slog.String("platform", string(m.Device.Platform)),
		slog.String("token", token),
		slog.String("title", m.Notification.Title),
		slog.Bool("silent", m.Notification.Silent),
	)
	return push.Result{Outcome: push.Delivered}
}
