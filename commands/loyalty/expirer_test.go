package loyalty_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/loyalty"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
)

// flakyDue is the read model's DueAccounts, failing every other call
// and adding an account that does not exist to the others: the expirer
// must log both and carry on.
type flakyDue struct {
	real  cmdloyalty.DueAccounts
	calls atomic.Int64
}

func (d *flakyDue) DueAccounts(ctx context.Context, now time.Time, limit int) ([]string, error) {
	if d.calls.Add(1)%2 == 0 {
		return nil, errors.New("read model unavailable")
	}
	due, err := d.real.DueAccounts(ctx, now, limit)
	return append([]string{"nobody"}, due...), err
}

func TestExpirerExpiresOnTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	due := &flakyDue{real: rmloyalty.New(e.pool)}
	ex := cmdloyalty.NewExpirer(e.svc, due, 50*time.Millisecond, quiet)
	ctx, stop := context.WithCancel(e.ctx)
	done := make(chan error, 1)
	go func() { done <- ex.Run(ctx) }()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Errorf("Run returned %v", err)
		}
	}()

	w := as(e.ctx, writer)
	// 3 s ahead: the earn must still be in time on a loaded machine.
	expiry := time.Now().Add(3 * time.Second)
	res, err := e.svc.Earn(w, "ann", cmdloyalty.Points{Amount: 30, Reason: "test", ExpiresAt: &expiry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Earn(w, "ann", cmdloyalty.Points{Amount: 4, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if wait := time.Until(expiry) - 100*time.Millisecond; wait > 0 {
		time.Sleep(wait)
		if n := count(e.history(t, "ann"), "loyalty.points_expired"); n != 0 && time.Now().Before(expiry) {
			t.Fatalf("%d expiries before the expiry date", n)
		}
	}
	deadline := expiry.Add(15 * time.Second)
	for count(e.history(t, "ann"), "loyalty.points_expired") == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the lot did not expire within 15s of its date")
		}
		time.Sleep(20 * time.Millisecond)
	}
	recs := e.history(t, "ann")
	last := recs[len(recs)-1]
	ex1 := last.Data.(loyalty.PointsExpired)
	if ex1.Lot != res.Transaction || ex1.Amount != 30 || ex1.Balance != 4 || last.Meta.Actor != "system" || last.Meta.App != "app1" {
		t.Errorf("expiry %+v meta %+v", ex1, last.Meta)
	}
	if last.RecordedAt.Before(expiry) {
		t.Errorf("expired at %v, before its date %v", last.RecordedAt, expiry)
	}
	// It keeps polling through failures, and finds nothing more to expire.
	calls := due.calls.Load()
	for due.calls.Load() < calls+4 {
		if time.Now().After(deadline.Add(5 * time.Second)) {
			t.Fatalf("the expirer stopped polling after %d calls", due.calls.Load())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if n := count(e.history(t, "ann"), "loyalty.points_expired"); n != 1 {
		t.Errorf("%d expiries recorded, want 1", n)
	}
}
