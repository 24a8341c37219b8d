// Package rights is the user-rights context: which CMS user may do what on
// which app, module or item. Grants and revokes are events on the user's
// rights stream, so an auditor can replay every change. Pure.
package rights

import (
	"maps"
	"slices"
	"sort"

	"github.com/halocms/halocms/domain/fault"
)

// Stream names a user's rights stream.
func Stream(userID string) string { return "rights-" + userID }

// Permission is one of the actions a right allows.
type Permission struct{ name string }

var (
	Read   = Permission{"read"}
	Write  = Permission{"write"}
	Update = Permission{"update"}
	Delete = Permission{"delete"}
	// Manage allows granting and revoking rights on the app (only at app
	// scope). It is the "right-management permission".
	Manage = Permission{"manage"}
)

// AllPermissions in canonical order.
var AllPermissions = []Permission{Read, Write, Update, Delete, Manage}

func (p Permission) String() string { return p.name }

// IsZero reports whether p is unset.
func (p Permission) IsZero() bool { return p.name == "" }

// ParsePermission parses a permission name.
func ParsePermission(s string) (Permission, error) {
	for _, p := range AllPermissions {
		if p.name == s {
			return p, nil
		}
	}
	return Permission{}, fault.Invalidf("unknown permission %q (want read, write, update, delete or manage)", s).With("field", "permissions")
}

// ScopeKind says what a right covers.
type ScopeKind struct{ name string }

var (
	// AppScope covers every module and item of the app.
	AppScope    = ScopeKind{"app"}
	ModuleScope = ScopeKind{"module"}
	ItemScope   = ScopeKind{"item"}
)

func (k ScopeKind) String() string { return k.name }

// CoveringModule and CoveringItem are the kinds of scope whose rights
// cover a module and its items, or an item: a right on a module allows
// its permissions on the module and its items, a right on an item on that
// item only.
var (
	CoveringModule = []ScopeKind{AppScope, ModuleScope}
	CoveringItem   = []ScopeKind{AppScope, ModuleScope, ItemScope}
)

// ParseScopeKind parses a stored scope kind.
func ParseScopeKind(s string) (ScopeKind, error) {
	for _, k := range []ScopeKind{AppScope, ModuleScope, ItemScope} {
		if k.name == s {
			return k, nil
		}
	}
	return ScopeKind{}, fault.Invalidf("unknown scope %q", s)
}

// Scope is what one right covers inside an app.
type Scope struct {
	Kind ScopeKind
	ID   string // module or item id; empty for AppScope
}

// NewScope builds the scope of a grant or revoke: neither module nor item
// means the whole app; both is refused.
func NewScope(module, item string) (Scope, error) {
	switch {
	case module != "" && item != "":
		return Scope{}, fault.Invalidf("give either module or item, not both").With("field", "item")
	case module != "":
		return Scope{Kind: ModuleScope, ID: module}, nil
	case item != "":
		return Scope{Kind: ItemScope, ID: item}, nil
	}
	return Scope{Kind: AppScope}, nil
}

// Key identifies one right: an app and a scope inside it.
type Key struct {
	App   string
	Scope Scope
}

// Resource is what an action is attempted on: an app, optionally a module,
// optionally an item of that module.
type Resource struct {
	App    string
	Module string
	Item   string
}

// Covers reports whether a right at key applies to resource r.
func (k Key) Covers(r Resource) bool {
	if k.App != r.App {
		return false
	}
	switch k.Scope.Kind {
	case AppScope:
		return true
	case ModuleScope:
		return r.Module != "" && k.Scope.ID == r.Module
	case ItemScope:
		return r.Item != "" && k.Scope.ID == r.Item
	}
	return false
}

// Set is a set of permissions.
type Set map[Permission]struct{}

// Sorted lists the permission names in canonical order.
func (s Set) Sorted() []string {
	out := make([]string, 0, len(s))
	for _, p := range AllPermissions {
		if _, ok := s[p]; ok {
			out = append(out, p.name)
		}
	}
	return out
}

// Rights is the state of one user's rights stream.
type Rights struct {
	UserID string
	Held   map[Key]Set
}

// NewRights returns the empty state for a user.
func NewRights(userID string) Rights { return Rights{UserID: userID, Held: map[Key]Set{}} }

// Granted: permissions were added to a user's right at a scope.
type Granted struct {
	UserID      string
	AppID       string
	ScopeKind   string
	ScopeID     string
	Permissions []string
	By          string
}

// Revoked: permissions were removed from exactly that scope.
type Revoked struct {
	UserID      string
	AppID       string
	ScopeKind   string
	ScopeID     string
	Permissions []string
	By          string
}

func (Granted) EventType() string { return "rights.granted" }
func (Revoked) EventType() string { return "rights.revoked" }

// Events lists the event types of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{Granted{}, Revoked{}}
}

func keyOf(app, kind, id string) Key {
	k, _ := ParseScopeKind(kind)
	return Key{App: app, Scope: Scope{Kind: k, ID: id}}
}

// Apply folds one event into the state. It never modifies r: the result
// has its own map.
func (r Rights) Apply(ev any) Rights {
	r.Held = maps.Clone(r.Held)
	if r.Held == nil {
		r.Held = map[Key]Set{}
	}
	switch e := ev.(type) {
	case Granted:
		k := keyOf(e.AppID, e.ScopeKind, e.ScopeID)
		s := maps.Clone(r.Held[k])
		if s == nil {
			s = Set{}
		}
		for _, n := range e.Permissions {
			if p, err := ParsePermission(n); err == nil {
				s[p] = struct{}{}
			}
		}
		r.Held[k] = s
	case Revoked:
		k := keyOf(e.AppID, e.ScopeKind, e.ScopeID)
		s := maps.Clone(r.Held[k])
		for _, n := range e.Permissions {
			if p, err := ParsePermission(n); err == nil {
				delete(s, p)
			}
		}
		if len(s) == 0 {
			delete(r.Held, k)
		} else {
			r.Held[k] = s
		}
	}
	return r
}

// Change is the input of Grant and Revoke.
type Change struct {
	App         string
	Scope       Scope
	Permissions []Permission
	By          string
}

func (c Change) validate() error {
	if c.App == "" {
		return fault.Invalidf("app is required").With("field", "app")
	}
	if len(c.Permissions) == 0 {
		return fault.Invalidf("permissions must list at least one permission").With("field", "permissions")
	}
	if c.Scope.Kind != AppScope && slices.Contains(c.Permissions, Manage) {
		return fault.Invalidf("the manage permission can only be granted on a whole app").With("field", "permissions")
	}
	return nil
}

func names(ps []Permission) []string {
	set := Set{}
	for _, p := range ps {
		set[p] = struct{}{}
	}
	return set.Sorted()
}

// Grant decides a grant: it records only the permissions not held yet, and
// nothing at all when every one is held already.
func (r Rights) Grant(c Change) ([]any, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	held := r.Held[Key{App: c.App, Scope: c.Scope}]
	var add []Permission
	for _, p := range c.Permissions {
		if _, ok := held[p]; !ok {
			add = append(add, p)
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	return []any{Granted{UserID: r.UserID, AppID: c.App, ScopeKind: c.Scope.Kind.name, ScopeID: c.Scope.ID,
		Permissions: names(add), By: c.By}}, nil
}

// Revoke decides a revoke: it removes the listed permissions from exactly
// that scope, recording only those actually held.
func (r Rights) Revoke(c Change) ([]any, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	held := r.Held[Key{App: c.App, Scope: c.Scope}]
	var drop []Permission
	for _, p := range c.Permissions {
		if _, ok := held[p]; ok {
			drop = append(drop, p)
		}
	}
	if len(drop) == 0 {
		return nil, nil
	}
	return []any{Revoked{UserID: r.UserID, AppID: c.App, ScopeKind: c.Scope.Kind.name, ScopeID: c.Scope.ID,
		Permissions: names(drop), By: c.By}}, nil
}

// Allows reports whether the rights allow p on resource.
func (r Rights) Allows(p Permission, res Resource) bool {
	for k, s := range r.Held {
		if _, ok := s[p]; ok && k.Covers(res) {
			return true
		}
	}
	return false
}

// Entry is one right, for listing.
type Entry struct {
	App         string
	Scope       Scope
	Permissions []string
}

// List returns the rights held, optionally for one app, in a stable order.
func (r Rights) List(app string) []Entry {
	var out []Entry
	for k, s := range r.Held {
		if app != "" && k.App != app {
			continue
		}
		out = append(out, Entry{App: k.App, Scope: k.Scope, Permissions: s.Sorted()})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.App != b.App {
			return a.App < b.App
		}
		if a.Scope.Kind != b.Scope.Kind {
			return a.Scope.Kind.name < b.Scope.Kind.name
		}
		return a.Scope.ID < b.Scope.ID
	})
	return out
}
