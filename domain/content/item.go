package content

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

// Content is what an editor writes into an item.
type Content struct {
	Name       string
	Values     map[string]any
	Tags       []Tag
	ExternalID string
}

// Dates are an item's publication dates; a zero time is unset.
type Dates struct {
	PublishedAt time.Time
	RemovedAt   time.Time
	ArchivedAt  time.Time
}

// Item is a content item, rebuilt from its events.
type Item struct {
	ID       string
	App      string
	Module   string
	Content  Content
	Dates    Dates
	Deleted  bool
	Revision int64 // 0 after creation, +1 per event
	exists   bool
}

// Exists reports whether the item was created.
func (i Item) Exists() bool { return i.exists }

// State is an item's state at a moment, as the SDKs compute it.
type State string

const (
	Concept   State = "concept"   // never published (or unpublished)
	Scheduled State = "scheduled" // published from a future date
	Published State = "published"
	Expired   State = "expired" // removedAt passed
	Archived  State = "archived"
	Deleted   State = "deleted"
)

// StateAt is the item's state at now.
func (i Item) StateAt(now time.Time) State { return StateOf(i.Dates, i.Deleted, now) }

// StateOf computes a state from dates.
func StateOf(d Dates, deleted bool, now time.Time) State {
	switch {
	case deleted:
		return Deleted
	case !d.ArchivedAt.IsZero() && !d.ArchivedAt.After(now):
		return Archived
	case !d.RemovedAt.IsZero() && !d.RemovedAt.After(now):
		return Expired
	case d.PublishedAt.IsZero():
		return Concept
	case d.PublishedAt.After(now):
		return Scheduled
	}
	return Published
}

// Apply folds one event into the state.
func (i Item) Apply(ev any) Item {
	if i.exists {
		i.Revision++
	}
	switch e := ev.(type) {
	case ItemCreated:
		i = Item{ID: e.ItemID, App: e.App, Module: e.Module, exists: true,
			Content: Content{Name: e.Name, Values: e.Values, Tags: e.Tags, ExternalID: e.ExternalID},
			Dates:   Dates{PublishedAt: e.PublishedAt, RemovedAt: e.RemovedAt, ArchivedAt: e.ArchivedAt}}
	case ItemEdited:
		i.Content = Content{Name: e.Name, Values: e.Values, Tags: e.Tags, ExternalID: e.ExternalID}
	case ItemReverted:
		i.Content = Content{Name: e.Name, Values: e.Values, Tags: e.Tags, ExternalID: e.ExternalID}
	case ItemPublished:
		i.Dates.PublishedAt = e.PublishedAt
	case ItemUnpublished:
		i.Dates.PublishedAt = time.Time{}
	case ItemExpirySet:
		i.Dates.RemovedAt = e.RemovedAt
	case ItemArchived:
		i.Dates.ArchivedAt = e.ArchivedAt
	case ItemUnarchived:
		i.Dates.ArchivedAt = time.Time{}
	case ItemDeleted:
		i.Deleted = true
	case ItemRestored:
		i.Deleted = false
	}
	return i
}

// StaleRevisionError: a write named a revision the item has moved past.
type StaleRevisionError struct {
	ItemID  string
	Sent    int64
	Current int64
}

func (e *StaleRevisionError) Error() string {
	return fmt.Sprintf("the instance was updated after your data retrieval (revision %d, now %d); resolve the conflict and try again", e.Sent, e.Current)
}

// DeletedError: a write that needs a live item met a deleted one (restore
// it first). It is a Conflict fault; HTTP answers it, as a stale revision,
// with the item as the server has it.
type DeletedError struct{ ItemID string }

func (e *DeletedError) Error() string {
	return fmt.Sprintf("instance %s is deleted; restore it first", e.ItemID)
}

func (e *DeletedError) Unwrap() error { return fault.New(fault.Conflict, "%s", e.Error()) }

// checkContent validates content against the module: name, values, tags.
func checkContent(m Module, c Content) (Content, error) {
	c.Name = strings.TrimSpace(c.Name)
	if c.Name == "" || len([]rune(c.Name)) > 1000 {
		return c, fault.Invalidf("name must be 1 to 1000 characters").With("field", "name")
	}
	if len(c.ExternalID) > 200 {
		return c, fault.Invalidf("externalId must be at most 200 characters").With("field", "externalId")
	}
	for _, s := range []struct{ field, v string }{{"name", c.Name}, {"externalId", c.ExternalID}} {
		if HasNUL(s.v) {
			return c, fault.Invalidf("%s must not contain a NUL character (\\u0000)", s.field).With("field", s.field)
		}
	}
	if c.Values == nil {
		c.Values = map[string]any{}
	}
	c.Values = WithoutUnknownNulls(m.Fields, WholeMillis(m.Fields, c.Values))
	if vs := ValidateValues(m.Fields, c.Values); len(vs) > 0 {
		return c, vs[0].Fault()
	}
	if c.Tags == nil {
		c.Tags = []Tag{}
	}
	for _, t := range c.Tags {
		if t.ID == "" && strings.TrimSpace(t.Name) == "" {
			return c, fault.Invalidf("a tag needs an id or a name").With("field", "tags")
		}
		if HasNUL(t.ID) || HasNUL(t.Name) || HasNUL(t.Value) || HasNUL(t.TagType) {
			return c, fault.Invalidf("tags must not contain a NUL character (\\u0000)").With("field", "tags")
		}
		if len(m.Tags) > 0 && !slices.ContainsFunc(m.Tags, t.Matches) {
			return c, fault.Invalidf("tag %s=%s is not allowed in module %s", t.Name, t.Value, m.Name).With("field", "tags")
		}
	}
	return c, nil
}

func checkDates(d Dates) error {
	if !d.RemovedAt.IsZero() && !d.PublishedAt.IsZero() && !d.RemovedAt.After(d.PublishedAt) {
		return fault.Invalidf("removedAt must be after publishedAt").With("field", "removedAt")
	}
	return nil
}

// CreateItem decides the creation of an item in module m.
func CreateItem(existing Item, id string, m Module, c Content, d Dates, by string) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("instance %s already exists", id)
	}
	if !m.exists || m.Deleted {
		return nil, fault.NotFoundf("module %s not found", m.ID).With("field", "module")
	}
	c, err := checkContent(m, c)
	if err != nil {
		return nil, err
	}
	if err := checkDates(d); err != nil {
		return nil, err
	}
	return []any{ItemCreated{ItemID: id, App: m.App, Module: m.ID, Name: c.Name, Values: c.Values, Tags: c.Tags,
		ExternalID: c.ExternalID, PublishedAt: d.PublishedAt, RemovedAt: d.RemovedAt, ArchivedAt: d.ArchivedAt, By: by}}, nil
}

// CheckRevision refuses a write that was decided on another revision of
// the item than its current one (revision nil: none was given).
func (i Item) CheckRevision(revision *int64) error {
	if revision != nil && *revision != i.Revision {
		return &StaleRevisionError{ItemID: i.ID, Sent: *revision, Current: i.Revision}
	}
	return nil
}

func (i Item) live(revision *int64) error {
	if !i.exists {
		return fault.NotFoundf("Instance not found")
	}
	if err := i.CheckRevision(revision); err != nil {
		return err
	}
	if i.Deleted {
		return &DeletedError{ItemID: i.ID}
	}
	return nil
}

// Edit decides the events that give the item content c and dates d (a
// HALO PUT replaces both). revision, when given, must be the current one.
func (i Item) Edit(m Module, c Content, d Dates, revision *int64, by string) ([]any, error) {
	if err := i.live(revision); err != nil {
		return nil, err
	}
	c, err := checkContent(m, c)
	if err != nil {
		return nil, err
	}
	if err := checkDates(d); err != nil {
		return nil, err
	}
	var evs []any
	if changed := i.Changes(c); len(changed) > 0 {
		evs = append(evs, ItemEdited{ItemID: i.ID, App: i.App, Module: i.Module, Name: c.Name, Values: c.Values,
			Tags: c.Tags, ExternalID: c.ExternalID, Changed: changed, By: by})
	}
	return append(evs, i.dateEvents(d, by)...), nil
}

// Changes names what content c changes of the item's: "name", "tags",
// "externalId", "values.<field>".
func (i Item) Changes(c Content) []string {
	var changed []string
	if c.Name != i.Content.Name {
		changed = append(changed, "name")
	}
	if !sameValue(c.Tags, i.Content.Tags) && !(len(c.Tags) == 0 && len(i.Content.Tags) == 0) {
		changed = append(changed, "tags")
	}
	if c.ExternalID != i.Content.ExternalID {
		changed = append(changed, "externalId")
	}
	var fields []string
	for k, v := range c.Values {
		if old, ok := i.Content.Values[k]; !ok || !sameValue(old, v) {
			fields = append(fields, k)
		}
	}
	for k := range i.Content.Values {
		if _, ok := c.Values[k]; !ok {
			fields = append(fields, k)
		}
	}
	slices.Sort(fields)
	for _, f := range fields {
		changed = append(changed, "values."+f)
	}
	return changed
}

// millis is d to the millisecond, the precision dates have on the wire:
// a date set by a command (now) and sent back by a client compare equal.
func (d Dates) millis() Dates {
	return Dates{d.PublishedAt.Truncate(time.Millisecond), d.RemovedAt.Truncate(time.Millisecond), d.ArchivedAt.Truncate(time.Millisecond)}
}

// dateEvents decides the events that give the item dates d, compared and
// recorded to the millisecond.
func (i Item) dateEvents(d Dates, by string) []any {
	var evs []any
	id, app, mod := i.ID, i.App, i.Module
	d, was := d.millis(), i.Dates.millis()
	if !d.PublishedAt.Equal(was.PublishedAt) {
		if d.PublishedAt.IsZero() {
			evs = append(evs, ItemUnpublished{id, app, mod, by})
		} else {
			evs = append(evs, ItemPublished{id, app, mod, d.PublishedAt, by})
		}
	}
	if !d.RemovedAt.Equal(was.RemovedAt) {
		evs = append(evs, ItemExpirySet{id, app, mod, d.RemovedAt, by})
	}
	if !d.ArchivedAt.Equal(was.ArchivedAt) {
		if d.ArchivedAt.IsZero() {
			evs = append(evs, ItemUnarchived{id, app, mod, by})
		} else {
			evs = append(evs, ItemArchived{id, app, mod, d.ArchivedAt, by})
		}
	}
	return evs
}

// Publish publishes the item from at on (now, or a future date to
// schedule it); it also lifts an expiry or archive date that has passed,
// so that the item is really published.
func (i Item) Publish(at, now time.Time, by string) ([]any, error) {
	if err := i.live(nil); err != nil {
		return nil, err
	}
	d := i.Dates
	d.PublishedAt = at
	if !d.RemovedAt.IsZero() && !d.RemovedAt.After(now) {
		d.RemovedAt = time.Time{}
	}
	if !d.ArchivedAt.IsZero() && !d.ArchivedAt.After(now) {
		d.ArchivedAt = time.Time{}
	}
	if err := checkDates(d); err != nil {
		return nil, err
	}
	return i.dateEvents(d, by), nil
}

// Unpublish makes the item a concept again.
func (i Item) Unpublish(by string) ([]any, error) {
	if err := i.live(nil); err != nil {
		return nil, err
	}
	d := i.Dates
	d.PublishedAt = time.Time{}
	return i.dateEvents(d, by), nil
}

// Archive archives the item from at on.
func (i Item) Archive(at time.Time, by string) ([]any, error) {
	if err := i.live(nil); err != nil {
		return nil, err
	}
	d := i.Dates
	d.ArchivedAt = at
	return i.dateEvents(d, by), nil
}

// Unarchive lifts the archive date.
func (i Item) Unarchive(by string) ([]any, error) {
	if err := i.live(nil); err != nil {
		return nil, err
	}
	d := i.Dates
	d.ArchivedAt = time.Time{}
	return i.dateEvents(d, by), nil
}

// Delete deletes the item logically.
func (i Item) Delete(revision *int64, by string) ([]any, error) {
	if i.exists && i.Deleted {
		return nil, nil // deleted already: a repeated delete changes nothing
	}
	if err := i.live(revision); err != nil {
		return nil, err
	}
	return []any{ItemDeleted{i.ID, i.App, i.Module, by}}, nil
}

// Restore brings a deleted item back.
func (i Item) Restore(m Module, by string) ([]any, error) {
	if !i.exists {
		return nil, fault.NotFoundf("Instance not found")
	}
	if !i.Deleted {
		return nil, nil
	}
	// The module may have changed while the item was deleted (a field
	// change checks live items only): a restored item satisfies the
	// module as any live one does.
	if _, err := checkContent(m, i.Content); err != nil {
		return nil, misfit(err, fault.Conflict, fmt.Sprintf("instance %s no longer fits its module's fields", i.ID))
	}
	return []any{ItemRestored{i.ID, i.App, i.Module, by}}, nil
}

// misfit reports content refused by checkContent as a fault of kind, its
// message after what, whose extra still names the field, the error code
// and the rule.
func misfit(err error, kind fault.Kind, what string) error {
	out := &fault.Error{Kind: kind, Message: what + ": " + err.Error()}
	var fe *fault.Error
	if errors.As(err, &fe) {
		out.Extra = fe.Extra
	}
	return out
}

// Revert sets the content back to what it was at an earlier revision
// (old), checked against the module's current fields.
func (i Item) Revert(m Module, toRevision int64, old Item, by string) ([]any, error) {
	if err := i.live(nil); err != nil {
		return nil, err
	}
	if toRevision < 0 || toRevision >= i.Revision {
		return nil, fault.Invalidf("revision must be between 0 and %d", i.Revision-1).With("field", "revision")
	}
	c, err := checkContent(m, old.Content)
	if err != nil {
		return nil, misfit(err, fault.Invalid, fmt.Sprintf("revision %d no longer fits the module's fields", toRevision))
	}
	if len(i.Changes(c)) == 0 {
		return nil, nil
	}
	return []any{ItemReverted{ItemID: i.ID, App: i.App, Module: i.Module, ToRevision: toRevision, Name: c.Name,
		Values: c.Values, Tags: c.Tags, ExternalID: c.ExternalID, By: by}}, nil
}
