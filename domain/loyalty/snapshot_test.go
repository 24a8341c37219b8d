package loyalty_test

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/loyalty"
)

// TestSnapshotRestoresTheAccount: at every point of a history with every
// kind of event, the account restored from its snapshot (through gob, as
// it is stored) holds the same state, folds the rest of the history to
// the same state, and decides the same.
func TestSnapshotRestoresTheAccount(t *testing.T) {
	evs := history(t)
	card := defineCard(t, "c1", "app1", 3)
	later := t0.Add(90 * time.Minute) // the first lot is due
	for n := 0; n <= len(evs); n++ {
		a := fold(evs[:n])
		var buf bytes.Buffer
		if err := gob.NewEncoder(&buf).Encode(a.Snapshot()); err != nil {
			t.Fatal(err)
		}
		var s loyalty.Snapshot
		if err := gob.NewDecoder(&buf).Decode(&s); err != nil {
			t.Fatal(err)
		}
		r := loyalty.RestoreAccount(s)
		if !loyalty.SameState(a, r) {
			t.Fatalf("after %d events: restored %+v, want %+v", n, r.Snapshot(), a.Snapshot())
		}
		// The restored account shares nothing with the snapshot.
		if len(s.Lots) > 0 {
			s.Lots[0].Points = -1
		}
		for k := range s.Keys {
			delete(s.Keys, k)
		}
		if !loyalty.SameState(a, r) {
			t.Fatalf("after %d events: the restored account changed with its snapshot", n)
		}
		decide := func(a *loyalty.Account) []any {
			newID := ids()
			var out []any
			for _, d := range []func() (loyalty.Decision, error){
				func() (loyalty.Decision, error) {
					return a.Earn(loyalty.Points{Amount: 100, Reason: "test", IdempotencyKey: "e1", ExpiresAt: at(time.Hour)}, later, newID)
				},
				func() (loyalty.Decision, error) {
					return a.Earn(loyalty.Points{Amount: 1, Reason: "test", IdempotencyKey: "e1"}, later, newID)
				},
				func() (loyalty.Decision, error) {
					return a.Redeem(loyalty.Points{Amount: 60, Reason: "test"}, later, newID)
				},
				func() (loyalty.Decision, error) { return a.ExpireDue(later, newID), nil },
				func() (loyalty.Decision, error) { return a.Rebalance(), nil },
				func() (loyalty.Decision, error) {
					return a.AddStamps(card, loyalty.Stamps{Count: 7, IdempotencyKey: "s1"}, newID)
				},
				func() (loyalty.Decision, error) { return a.RedeemCard("tx6", "k1", newID) },
			} {
				dec, err := d()
				out = append(out, dec, err)
			}
			return out
		}
		if got, want := decide(r), decide(a); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %d events: the restored account decides %+v, want %+v", n, got, want)
		}
		kept := a.Snapshot()
		for _, e := range evs[n:] {
			a.Apply(e)
			r.Apply(e)
		}
		if !loyalty.SameState(a, r) {
			t.Fatalf("restored after %d events, then folded the rest: %+v, want %+v", n, r.Snapshot(), a.Snapshot())
		}
		// A snapshot shares nothing with the account it was taken of,
		// which goes on folding while the snapshot is saved.
		if want := fold(evs[:n]).Snapshot(); !reflect.DeepEqual(kept, want) {
			t.Fatalf("the snapshot after %d events changed as its account folded the rest: %+v, want %+v", n, kept, want)
		}
	}
	if a := fold(evs); len(a.Snapshot().Keys) == 0 || len(a.Snapshot().Cards) == 0 || len(a.Snapshot().Lots) == 0 {
		t.Fatalf("the history leaves no keys, cards or lots to snapshot: %+v", a.Snapshot())
	}
}

// TestSnapshotLayout pins the shape of a snapshot to SnapshotLayout: a
// stored snapshot of an older shape would decode into zero values
// silently. When this fails, raise SnapshotLayout and update want.
func TestSnapshotLayout(t *testing.T) {
	const want = "1 {ID string; App string; Opened bool; Recorded int64; Sum int64; Txs int; " +
		"Lots []{ID string; Points int64; ExpiresAt *time.Time}; " +
		"Keys map[string]{Transaction string; Kind string; Amount int64; Reason string; Reference string; " +
		"ExpiresAt *time.Time; Card string; Stamps int; UserCards []string; Completed []string}; " +
		"Cards map[string]{ID string; Card string; Reward string; Stamps int; Needed int; Completed bool; Redeemed bool}; " +
		"Open map[string]string; Stamping string}"
	if got := fmt.Sprint(loyalty.SnapshotLayout, " ", shape(reflect.TypeFor[loyalty.Snapshot]())); got != want {
		t.Fatalf("snapshot layout and shape\n%s\nwant\n%s\nraise SnapshotLayout when the shape or the meaning of a snapshot changes", got, want)
	}
}

// shape describes a type by its structure: fields' names and types,
// down to the named types outside this package.
func shape(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return "*" + shape(t.Elem())
	case reflect.Slice:
		return "[]" + shape(t.Elem())
	case reflect.Map:
		return "map[" + shape(t.Key()) + "]" + shape(t.Elem())
	case reflect.Struct:
		if t.PkgPath() != reflect.TypeFor[loyalty.Snapshot]().PkgPath() {
			return t.String()
		}
		var fs []string
		for f := range t.Fields() {
			fs = append(fs, f.Name+" "+shape(f.Type))
		}
		return "{" + strings.Join(fs, "; ") + "}"
	}
	return t.String()
}
