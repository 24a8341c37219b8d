package main

import (
	"fmt"
	"math/rand/v2"

	"github.com/google/uuid"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

// The synthetic rights workload: CMS users are granted and revoked rights
// on apps, modules and items, by a handful of admins.
const (
	genApps          = 50
	genModulesPerApp = 30
	genItemsPerApp   = 2000
	genAdmins        = 20
	genRevokeShare   = 0.30 // of the events of a user who holds something
	genRegrantShare  = 0.30 // of grants: more permissions on a scope already held
)

var permNames = []string{"read", "write", "update", "delete", "manage"} // canonical order

const (
	permRWUD   = 0b01111
	permManage = 0b10000
)

// names lists the permissions of bit set m in canonical order.
func names(m uint8) []string {
	out := make([]string, 0, 5)
	for i, n := range permNames {
		if m&(1<<i) != 0 {
			out = append(out, n)
		}
	}
	return out
}

// randomPerms is a non-empty random subset of read/write/update/delete,
// read more likely than the others.
func randomPerms(r *rand.Rand) uint8 {
	for {
		var m uint8
		if r.IntN(10) < 8 {
			m |= 1
		}
		for i := 1; i < 4; i++ {
			if r.IntN(3) == 0 {
				m |= 1 << i
			}
		}
		if m != 0 {
			return m
		}
	}
}

type heldKey struct {
	app, kind, id string
	perms         uint8
}

// genUser is the bench's model of one user's rights stream: it knows what
// the user holds, so that revokes remove rights actually held (as the
// domain's Revoke decides) and the expected version of the next append.
type genUser struct {
	id      string
	apps    []string
	held    []heldKey
	version int64
}

func newGenUser(r *rand.Rand, id string) *genUser {
	u := &genUser{id: id}
	n := 1 + r.IntN(3)
	for range n {
		u.apps = append(u.apps, appID(r.IntN(genApps)))
	}
	return u
}

func appID(i int) string { return fmt.Sprintf("app-%02d", i) }

func randomScope(r *rand.Rand, app string) (kind, id string) {
	switch x := r.IntN(100); {
	case x < 15:
		return "app", ""
	case x < 65:
		return "module", fmt.Sprintf("%s-mod-%02d", app, r.IntN(genModulesPerApp))
	default:
		return "item", fmt.Sprintf("%s-item-%04d", app, r.IntN(genItemsPerApp))
	}
}

func randomAdmin(r *rand.Rand) string { return fmt.Sprintf("cms-admin-%02d", r.IntN(genAdmins)) }

// next returns the user's next event (a grant or a revoke) and updates the
// model.
func (u *genUser) next(r *rand.Rand) event.Event {
	by := randomAdmin(r)
	if len(u.held) > 0 && r.Float64() < genRevokeShare {
		i := r.IntN(len(u.held))
		h := &u.held[i]
		drop := h.perms & randomPerms(r)
		if drop == 0 {
			drop = h.perms
		}
		ev := rights.Revoked{UserID: u.id, AppID: h.app, ScopeKind: h.kind, ScopeID: h.id, Permissions: names(drop), By: by}
		h.perms &^= drop
		if h.perms == 0 {
			u.held[i] = u.held[len(u.held)-1]
			u.held = u.held[:len(u.held)-1]
		}
		return wrap(r, ev, ev.AppID, by)
	}
	if len(u.held) > 0 && r.Float64() < genRegrantShare {
		h := &u.held[r.IntN(len(u.held))]
		add := randomPerms(r) &^ h.perms
		if add != 0 {
			h.perms |= add
			ev := rights.Granted{UserID: u.id, AppID: h.app, ScopeKind: h.kind, ScopeID: h.id, Permissions: names(add), By: by}
			return wrap(r, ev, ev.AppID, by)
		}
	}
	app := u.apps[r.IntN(len(u.apps))]
	kind, id := randomScope(r, app)
	perms := randomPerms(r)
	if kind == "app" && r.IntN(10) == 0 {
		perms |= permManage
	}
	for i := range u.held {
		if h := &u.held[i]; h.app == app && h.kind == kind && h.id == id {
			perms &^= h.perms
			if perms == 0 {
				perms = permRWUD &^ h.perms
				if perms == 0 { // holds everything: revoke read instead
					h.perms &^= 1
					ev := rights.Revoked{UserID: u.id, AppID: app, ScopeKind: kind, ScopeID: id, Permissions: names(1), By: by}
					return wrap(r, ev, app, by)
				}
			}
			h.perms |= perms
			ev := rights.Granted{UserID: u.id, AppID: app, ScopeKind: kind, ScopeID: id, Permissions: names(perms), By: by}
			return wrap(r, ev, app, by)
		}
	}
	u.held = append(u.held, heldKey{app: app, kind: kind, id: id, perms: perms})
	ev := rights.Granted{UserID: u.id, AppID: app, ScopeKind: kind, ScopeID: id, Permissions: names(perms), By: by}
	return wrap(r, ev, app, by)
}

// randomGrant is a grant of random permissions at a random scope: the
// append phase's event.
func randomGrant(r *rand.Rand, user string) rights.Granted {
	app := appID(r.IntN(genApps))
	kind, id := randomScope(r, app)
	return rights.Granted{UserID: user, AppID: app, ScopeKind: kind, ScopeID: id,
		Permissions: names(randomPerms(r)), By: randomAdmin(r)}
}

func wrap(r *rand.Rand, data any, app, by string) event.Event {
	return event.Event{Data: data, Meta: event.Metadata{
		Actor:         by,
		App:           app,
		CorrelationID: randomUUID(r),
		ClientIP:      fmt.Sprintf("10.%d.%d.%d", r.IntN(256), r.IntN(256), 1+r.IntN(254)),
	}}
}

// randomUUID is a v4 UUID from r (cheaper than crypto/rand, and this is
// test data).
func randomUUID(r *rand.Rand) string {
	var u uuid.UUID
	hi, lo := r.Uint64(), r.Uint64()
	for i := range 8 {
		u[i] = byte(hi >> (8 * i))
		u[8+i] = byte(lo >> (8 * i))
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u.String()
}
