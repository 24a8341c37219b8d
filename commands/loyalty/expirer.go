package loyalty

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halocms/halocms/domain/access"
)

// DueAccounts lists accounts with a lot whose expiry is at or before now
// (the read model).
type DueAccounts interface {
	DueAccounts(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// Expirer records the expiry of points lots when their date passes,
// without waiting for a request on the account.
type Expirer struct {
	svc     *Service
	due     DueAccounts
	poll    time.Duration
	log     *slog.Logger
	batch   int
	workers int
}

// NewExpirer returns an expirer that looks for due accounts every poll
// (1s if not positive).
func NewExpirer(svc *Service, due DueAccounts, poll time.Duration, log *slog.Logger) *Expirer {
	if svc == nil || due == nil {
		panic("loyalty.NewExpirer: nil dependency")
	}
	if poll <= 0 {
		poll = time.Second
	}
	if log == nil {
		log = slog.Default()
	}
	return &Expirer{svc: svc, due: due, poll: poll, log: log, batch: 500, workers: 4}
}

// Run expires due lots until ctx ends, acting as the system. A failure
// is logged and the work is tried again at the next poll. Several
// processes may run it: each expiry is an append with the account's
// version, so a lot expires once.
func (e *Expirer) Run(ctx context.Context) error {
	ctx = access.WithActor(ctx, access.SystemActor)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		for ctx.Err() == nil {
			listed, expired := e.pass(ctx)
			if listed < e.batch || expired == 0 {
				break // a full batch that expired something: there may be more now
			}
		}
		t.Reset(e.poll)
	}
}

// pass expires what is due now on one batch of accounts; it returns how
// many accounts were listed and how many lots expired.
func (e *Expirer) pass(ctx context.Context) (listed, expired int) {
	now := e.svc.now()
	due, err := e.due.DueAccounts(ctx, now, e.batch)
	if err != nil {
		if ctx.Err() == nil {
			e.log.Error("loyalty expirer: listing due accounts failed; trying again at the next poll", "err", err)
		}
		return 0, 0
	}
	var total atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range min(e.workers, len(due)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for account := range work {
				n, err := e.svc.ExpireDue(ctx, account, now)
				if err != nil {
					if ctx.Err() == nil {
						e.log.Error("loyalty expirer: expiring failed; trying again at the next poll", "account", account, "err", err)
					}
					continue
				}
				total.Add(int64(n))
			}
		}()
	}
feed:
	for _, account := range due {
		select {
		case work <- account:
		case <-ctx.Done():
			break feed
		}
	}
	close(work)
	wg.Wait()
	return len(due), int(total.Load())
}
