package content

import "time"

// Events of the content context. Type names are stable: never rename them.
// By is the display name of whoever made the change, as HALO shows it in
// createdBy/updatedBy/deletedBy; the actor's id is in the event metadata.

// ModuleCreated: a module (content structure) of an app.
type ModuleCreated struct {
	ModuleID   string
	App        string
	Name       string
	Single     bool
	Tags       []Tag
	Fields     []Field
	ModuleType string
	By         string
}

// ModuleRenamed: the module's name changed (apps that address it by name
// must follow).
type ModuleRenamed struct {
	ModuleID, App, Name, By string
}

// ModuleConfigured: single-item flag or allowed tags changed.
type ModuleConfigured struct {
	ModuleID string
	App      string
	Single   bool
	Tags     []Tag
	By       string
}

// ModuleFieldsChanged: the ordered field list was replaced.
type ModuleFieldsChanged struct {
	ModuleID string
	App      string
	Fields   []Field
	By       string
}

// ModuleDeleted: the module was deleted (logically).
type ModuleDeleted struct{ ModuleID, App, By string }

// ModuleNameClaimed reserves a module name within an app.
type ModuleNameClaimed struct{ App, Name, ModuleID string }

// ModuleNameReleased frees a module name (rename or deletion).
type ModuleNameReleased struct{ App, Name, ModuleID string }

// SingleItemClaimed reserves the one item of a single-item module.
type SingleItemClaimed struct{ ModuleID, ItemID string }

// SingleItemReleased frees a single-item module's reservation: its item
// was deleted, or the module stopped being a single-item module.
type SingleItemReleased struct{ ModuleID, ItemID string }

// ModuleTypeSaved: a module type was created or replaced.
type ModuleTypeSaved struct {
	TypeID string
	Name   string
	Single bool
	Fields []Field
}

// ModuleTypeDeleted: a module type was deleted.
type ModuleTypeDeleted struct{ TypeID string }

// ItemCreated: a content item, with its first content and dates.
type ItemCreated struct {
	ItemID      string
	App         string
	Module      string
	Name        string
	Values      map[string]any
	Tags        []Tag
	ExternalID  string
	PublishedAt time.Time // zero: a concept
	RemovedAt   time.Time
	ArchivedAt  time.Time
	By          string
}

// ItemEdited: name, values, tags or external id changed; the event holds
// the new content in full and the names of what changed.
type ItemEdited struct {
	ItemID     string
	App        string
	Module     string
	Name       string
	Values     map[string]any
	Tags       []Tag
	ExternalID string
	Changed    []string // "name", "tags", "externalId", "values.<field>"
	By         string
}

// ItemPublished: the item is published from PublishedAt on (a future date
// schedules it).
type ItemPublished struct {
	ItemID, App, Module string
	PublishedAt         time.Time
	By                  string
}

// ItemUnpublished: back to concept.
type ItemUnpublished struct{ ItemID, App, Module, By string }

// ItemExpirySet: the item stops being published at RemovedAt (zero: never).
type ItemExpirySet struct {
	ItemID, App, Module string
	RemovedAt           time.Time
	By                  string
}

// ItemArchived: archived from ArchivedAt on (a future date schedules it).
type ItemArchived struct {
	ItemID, App, Module string
	ArchivedAt          time.Time
	By                  string
}

// ItemUnarchived: no longer archived.
type ItemUnarchived struct{ ItemID, App, Module, By string }

// ItemDeleted: deleted logically; it can be restored.
type ItemDeleted struct{ ItemID, App, Module, By string }

// ItemRestored: a deleted item is back.
type ItemRestored struct{ ItemID, App, Module, By string }

// ItemReverted: the content (name, values, tags, external id) was set back
// to what it was at revision ToRevision.
type ItemReverted struct {
	ItemID     string
	App        string
	Module     string
	ToRevision int64
	Name       string
	Values     map[string]any
	Tags       []Tag
	ExternalID string
	By         string
}

func (ModuleCreated) EventType() string       { return "content.module_created" }
func (ModuleRenamed) EventType() string       { return "content.module_renamed" }
func (ModuleConfigured) EventType() string    { return "content.module_configured" }
func (ModuleFieldsChanged) EventType() string { return "content.module_fields_changed" }
func (ModuleDeleted) EventType() string       { return "content.module_deleted" }
func (ModuleNameClaimed) EventType() string   { return "content.module_name_claimed" }
func (ModuleNameReleased) EventType() string  { return "content.module_name_released" }
func (SingleItemClaimed) EventType() string   { return "content.single_item_claimed" }
func (SingleItemReleased) EventType() string  { return "content.single_item_released" }
func (ModuleTypeSaved) EventType() string     { return "content.module_type_saved" }
func (ModuleTypeDeleted) EventType() string   { return "content.module_type_deleted" }
func (ItemCreated) EventType() string         { return "content.item_created" }
func (ItemEdited) EventType() string          { return "content.item_edited" }
func (ItemPublished) EventType() string       { return "content.item_published" }
func (ItemUnpublished) EventType() string     { return "content.item_unpublished" }
func (ItemExpirySet) EventType() string       { return "content.item_expiry_set" }
func (ItemArchived) EventType() string        { return "content.item_archived" }
func (ItemUnarchived) EventType() string      { return "content.item_unarchived" }
func (ItemDeleted) EventType() string         { return "content.item_deleted" }
func (ItemRestored) EventType() string        { return "content.item_restored" }
func (ItemReverted) EventType() string        { return "content.item_reverted" }

// Events lists a zero value of every event type of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{
		ModuleCreated{}, ModuleRenamed{}, ModuleConfigured{}, ModuleFieldsChanged{}, ModuleDeleted{},
		ModuleNameClaimed{}, ModuleNameReleased{}, SingleItemClaimed{}, SingleItemReleased{},
		ModuleTypeSaved{}, ModuleTypeDeleted{},
		ItemCreated{}, ItemEdited{}, ItemPublished{}, ItemUnpublished{}, ItemExpirySet{}, ItemArchived{},
		ItemUnarchived{}, ItemDeleted{}, ItemRestored{}, ItemReverted{},
	}
}

// ItemEvent is an event of an item's stream: it names the item and who
// made the change.
type ItemEvent interface {
	Item() string
	Author() string
}

func (e ItemCreated) Item() string     { return e.ItemID }
func (e ItemEdited) Item() string      { return e.ItemID }
func (e ItemPublished) Item() string   { return e.ItemID }
func (e ItemUnpublished) Item() string { return e.ItemID }
func (e ItemExpirySet) Item() string   { return e.ItemID }
func (e ItemArchived) Item() string    { return e.ItemID }
func (e ItemUnarchived) Item() string  { return e.ItemID }
func (e ItemDeleted) Item() string     { return e.ItemID }
func (e ItemRestored) Item() string    { return e.ItemID }
func (e ItemReverted) Item() string    { return e.ItemID }

func (e ItemCreated) Author() string     { return e.By }
func (e ItemEdited) Author() string      { return e.By }
func (e ItemPublished) Author() string   { return e.By }
func (e ItemUnpublished) Author() string { return e.By }
func (e ItemExpirySet) Author() string   { return e.By }
func (e ItemArchived) Author() string    { return e.By }
func (e ItemUnarchived) Author() string  { return e.By }
func (e ItemDeleted) Author() string     { return e.By }
func (e ItemRestored) Author() string    { return e.By }
func (e ItemReverted) Author() string    { return e.By }
