package projection

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// ChangesChannel is the LISTEN/NOTIFY channel on which every batch of an
// Announcer's projection says what it changed, for the processes whose
// readers keep rows in memory (Options.OnChange).
const ChangesChannel = "cms_changes"

// Change is what a batch of an Announcer's projection changed: the rows of
// Keys, or any row when All. A Change with no Projection (and All) means
// anything: the announcements of a while were not heard.
type Change struct {
	Projection string
	Keys       []string
	All        bool
}

// announcement is a Change and the checkpoint it leaves its projection
// at: every batch up to it was announced.
type announcement struct {
	Change
	at event.Position
}

// maxPayload keeps a notification under PostgreSQL's limit (8000 bytes);
// a batch that changes more keys announces all.
const maxPayload = 7000

// payload is the notification of a: the projection's name, the checkpoint
// ("txid.pos"), then the keys or "*", separated by spaces.
func (a announcement) payload() string {
	head := fmt.Sprintf("%s %d.%d", a.Projection, a.at.TxID, a.at.Pos)
	if !a.All {
		n := len(head)
		for _, k := range a.Keys {
			n += 1 + len(k)
			if n > maxPayload || k == "" || k == "*" || strings.ContainsFunc(k, unicode.IsSpace) {
				a.All = true
				break
			}
		}
	}
	switch {
	case a.All:
		return head + " *"
	case len(a.Keys) == 0:
		return head
	}
	return head + " " + strings.Join(a.Keys, " ")
}

// parseAnnouncement reads a notification of ChangesChannel (ok false:
// it cannot, and it counts as a change of anything).
func parseAnnouncement(payload string) (announcement, bool) {
	f := strings.Split(payload, " ")
	if len(f) < 2 || f[0] == "" {
		return announcement{}, false
	}
	tx, pos, ok := strings.Cut(f[1], ".")
	if !ok {
		return announcement{}, false
	}
	var a announcement
	var err1, err2 error
	a.at.TxID, err1 = strconv.ParseUint(tx, 10, 64)
	a.at.Pos, err2 = strconv.ParseInt(pos, 10, 64)
	if err1 != nil || err2 != nil {
		return announcement{}, false
	}
	a.Projection = f[0]
	switch keys := f[2:]; {
	case len(keys) == 1 && keys[0] == "*":
		a.All = true
	case len(keys) > 0:
		a.Keys = keys
	}
	return a, true
}

// announce notifies ChangesChannel of a in the transaction q (delivered if
// it commits).
func announce(ctx context.Context, q projections.DB, a announcement) error {
	_, err := q.Exec(ctx, `SELECT pg_notify($1, $2)`, ChangesChannel, a.payload())
	return err
}

// announcing reports whether p's batches are announced.
func announcing(p projections.Projector) bool {
	_, ok := p.(projections.Announcer)
	return ok
}

// announcementOf is what p's batch of events up to at changed (ok false:
// p announces nothing).
func announcementOf(p projections.Projector, events []event.Recorded, at event.Position) (announcement, bool) {
	a, ok := p.(projections.Announcer)
	if !ok {
		return announcement{}, false
	}
	keys, all := a.Changed(events)
	return announcement{Change: Change{Projection: p.Name(), Keys: keys, All: all}, at: at}, true
}

// Hearing reports whether this process hears the other processes'
// announcements now: while it does not, it may miss changes, and a reader
// must not serve rows it kept (nor keep any). Always false without
// Options.OnChange.
func (rt *Runtime) Hearing() bool {
	return rt.changes != nil && rt.changes.Listening() && rt.synced.Load()
}

// hearing is the ChangesChannel listener of a runtime with
// Options.OnChange (Start runs it).
func (rt *Runtime) hearing() *postgres.Listener {
	l := postgres.NewListener(rt.pool, ChangesChannel, rt.log)
	l.Handle(func(payload string, all bool) {
		if all {
			rt.heardAnything(l)
			return
		}
		a, ok := parseAnnouncement(payload)
		if !ok {
			rt.log.Warn("projections: unreadable change announcement: everything counts as changed", "payload", payload)
			rt.heardAnything(l)
			return
		}
		rt.heard(a)
	})
	return l
}

// heard hands a batch's announcement to OnChange and tells the waiters.
// Only the listener, which hears the batches in the order they committed,
// moves the heard checkpoints (this process's batches were handed to
// OnChange before, but a batch of another process committed earlier may
// not have been heard yet). A change of all (a rebuild's switch, a replay
// from the start) sets the projection's heard checkpoint, which can go
// back; a batch moves it on.
func (rt *Runtime) heard(a announcement) {
	if a.All || len(a.Keys) > 0 {
		rt.opts.OnChange(a.Change)
	}
	rt.watcher.hear(a.Projection, a.at, a.All)
}

// heardAnything follows a time when announcements may have gone unheard:
// the listener starts listening, lost its connection, or heard something
// it cannot read. The process does not hear (Hearing is false: readers
// keep nothing) until, listening, it has read the checkpoints and then
// had OnChange drop everything kept, so that every batch up to them
// counts as heard (a row read since includes it). It runs on the
// listener's goroutine: the announcements that follow wait for it.
func (rt *Runtime) heardAnything(l *postgres.Listener) {
	rt.synced.Store(false)
	var names []string
	for _, p := range rt.projs {
		if announcing(p) {
			names = append(names, p.Name())
		}
	}
	for l.Listening() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		cps, err := readCheckpoints(ctx, rt.pool, names)
		cancel()
		if err == nil {
			rt.opts.OnChange(Change{All: true})
			for _, cp := range cps {
				rt.watcher.hear(cp.name, cp.pos, true)
			}
			rt.synced.Store(true)
			return
		}
		rt.log.Warn("projections: reading the checkpoints after a change of anything", "err", err)
		select {
		case <-rt.stopHearing: // the runtime stops
			return
		case <-time.After(time.Second):
		}
	}
}

// missed follows announcements of name that did not come: its checkpoint
// stood at cp, ahead of what was heard, for a while (a process that does
// not announce, a notification lost). Everything kept is dropped after cp
// was read, so every batch up to it counts as heard.
func (rt *Runtime) missed(name string, cp event.Position) {
	rt.log.Warn("projections: a checkpoint moved on without being announced: everything kept is dropped",
		"projection", name, "checkpoint", cp)
	rt.opts.OnChange(Change{Projection: name, All: true})
	rt.watcher.hear(name, cp, false)
}

// changedHere hands what a transaction of this process announced to
// Options.OnChange once it ended, committed or not (it may have committed
// all the same, on a connection lost while committing; telling of a change
// that did not happen only costs a reader a read), without waiting to
// hear it. The waiters are told when it is heard.
func (rt *Runtime) changedHere(a announcement) {
	if rt.opts.OnChange != nil && (a.All || len(a.Keys) > 0) {
		rt.opts.OnChange(a.Change)
	}
}
