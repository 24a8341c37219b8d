package push

import (
	"context"

	"github.com/halocms/halocms/domain/push"
)

// PlatformSenders routes each message to the sender of its device's
// platform, or to Default (for example FCM for Android and APNs for
// iOS; both SDKs register FCM tokens, so FCM alone usually serves both).
type PlatformSenders struct {
	ByPlatform map[push.Platform]Sender
	Default    Sender
}

var _ Sender = PlatformSenders{}

// Send sends m through the sender of its platform.
func (p PlatformSenders) Send(ctx context.Context, m push.Message) push.Result {
	if s, ok := p.ByPlatform[m.Device.Platform]; ok && s != nil {
		return s.Send(ctx, m)
	}
	if p.Default == nil {
		return push.Result{Outcome: push.Failed, Reason: "no push provider for platform " + string(m.Device.Platform)}
	}
	return p.Default.Send(ctx, m)
}
