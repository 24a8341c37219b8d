package commands

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/halocms/halocms/domain/event"
)

// MaxAttempts bounds the attempts of a command whose streams keep moving
// on while it decides (Retry's default).
const MaxAttempts = 10

// maxPause caps the attempt number that sets the pause before a retry
// (see backoff), so that a command that keeps retrying for a while
// (Retry.Held) pauses no more than maxPause to twice maxPause ms.
const maxPause = 50

// Retry is how a command tries its decision again when a stream it read
// moved on before its append (a version conflict): every command loads,
// decides and appends, and on a conflict starts over from a fresh load.
// The zero value is the rule of most commands: up to MaxAttempts
// attempts, with a short, growing, jittered pause between them.
type Retry struct {
	// Attempts bounds the attempts (MaxAttempts when zero).
	Attempts int
	// Held, when set, tells a conflict with a change that holds a stream
	// for a while (see content.Store) from a plain one: such a conflict
	// is tried again past Attempts for as long as Held says so. With
	// Held set, the retries also stop as soon as ctx ends, so that a long
	// wait never outlives its caller.
	Held func(err error) bool
}

// Run calls try with attempt 1, 2, ... until it returns anything but a
// version conflict (event.ErrVersionConflict) or the rule gives up. It
// returns try's last error as it is: what a conflict that outlasted the
// attempts means (a fault.Conflict, usually) is the command's to say.
func (r Retry) Run(ctx context.Context, try func(attempt int) error) error {
	for attempt := 1; ; attempt++ {
		err := try(attempt)
		if !r.again(ctx, err, attempt) {
			return err
		}
	}
}

// again reports, after a pause, whether an attempt that failed with err
// is tried again.
func (r Retry) again(ctx context.Context, err error, attempt int) bool {
	if !errors.Is(err, event.ErrVersionConflict) {
		return false
	}
	held := r.Held != nil && r.Held(err)
	if !held && attempt >= r.attempts() {
		return false
	}
	backoff(ctx, min(attempt, maxPause))
	return r.Held == nil || ctx.Err() == nil
}

func (r Retry) attempts() int {
	if r.Attempts > 0 {
		return r.Attempts
	}
	return MaxAttempts
}

// backoff sleeps a little before retry attempt n (jittered, growing), so
// that writers contending for one stream spread out.
func backoff(ctx context.Context, attempt int) {
	d := time.Duration(attempt) * time.Millisecond
	d += time.Duration(rand.Int64N(int64(d) + 1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
