package appuser

import (
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

// Limits of a pocket's references (the size of its data is bounded where
// it is read, in bytes).
const (
	MaxReferenceNames  = 100
	MaxReferenceIDs    = 1000
	MaxReferenceLength = 256 // names and ids, characters
)

// Pocket is an identified user's pocket: free-form data and named lists of
// ids (favourites and the like), rebuilt from its events.
type Pocket struct {
	IdentifiedID string
	App          string
	Data         map[string]any
	References   map[string][]string
}

// Apply folds one event into the pocket.
func (p Pocket) Apply(ev any) Pocket {
	e, ok := ev.(PocketUpdated)
	if !ok {
		return p
	}
	p.IdentifiedID, p.App = e.IdentifiedID, e.App
	if e.DataReplaced {
		p.Data = e.Data
	}
	refs := maps.Clone(p.References)
	if refs == nil {
		refs = map[string][]string{}
	}
	for _, name := range e.Cleared {
		delete(refs, name)
	}
	for name, ids := range e.References {
		refs[name] = ids
	}
	p.References = refs
	return p
}

// PocketChange is a PUT of a pocket: Data replaces the data when SetData;
// References sets the named lists, and a nil list removes its name.
type PocketChange struct {
	SetData    bool
	Data       map[string]any
	References map[string][]string
}

// Change decides a change of the pocket of identified user id of app.
// A change that leaves the pocket as it is records nothing.
func (p Pocket) Change(id, app string, c PocketChange) ([]any, error) {
	bad := Problems{}
	e := PocketUpdated{IdentifiedID: id, App: app, References: map[string][]string{}}
	if c.SetData {
		e.DataReplaced = true
		e.Data = c.Data
		if e.Data == nil {
			e.Data = map[string]any{}
		}
		if reflect.DeepEqual(e.Data, p.Data) || (len(e.Data) == 0 && len(p.Data) == 0) {
			e.DataReplaced, e.Data = false, nil
		}
	}
	for name, ids := range c.References {
		at := "references." + name
		switch {
		case strings.TrimSpace(name) == "":
			bad.Add("references", CodeInvalid)
			continue
		case tooLong(name, MaxReferenceLength):
			bad.Add(at, CodeTooLong)
			continue
		}
		old, had := p.References[name]
		if ids == nil {
			if had {
				e.Cleared = append(e.Cleared, name)
			}
			continue
		}
		if len(ids) > MaxReferenceIDs {
			bad.Add(at, CodeTooMany)
			continue
		}
		if slices.ContainsFunc(ids, func(s string) bool { return tooLong(s, MaxReferenceLength) }) {
			bad.Add(at, CodeTooLong)
			continue
		}
		if !had || !slices.Equal(old, ids) {
			e.References[name] = slices.Clone(ids)
		}
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	names := len(p.References) - len(e.Cleared)
	for name := range e.References {
		if _, had := p.References[name]; !had {
			names++
		}
	}
	if names > MaxReferenceNames {
		return nil, fault.Invalidf("a pocket holds at most %d reference lists", MaxReferenceNames).With("references", CodeTooMany)
	}
	if !e.DataReplaced && len(e.References) == 0 && len(e.Cleared) == 0 {
		return nil, nil
	}
	sort.Strings(e.Cleared)
	return []any{e}, nil
}

// PocketOwner returns the identified user whose pocket the actor reads and
// writes, and their app: only an identified user has one.
func PocketOwner(a access.Actor) (id, app string, err error) {
	switch a.Kind {
	case access.Anonymous:
		return "", "", access.ErrUnauthenticated
	case access.Identified:
		return a.ID, a.App, nil
	}
	return "", "", fault.Forbiddenf("the pocket belongs to an identified user: sign in through /api/segmentation/identified/login first")
}
