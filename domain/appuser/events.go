package appuser

// Events of the app-user context (app users, identified users and their
// pockets). Type names are stable: never rename them. Every event names its
// app, so that projections and audits never need another stream to place it.

// Created: an app user (a device of an app) was registered, with the
// server-generated alias and what the SDK sent.
type Created struct {
	AppUserID string
	App       string
	Alias     string
	Email     string
	Devices   []Device
	Tags      []Tag
}

// Updated: the app user's email, devices and tags were replaced (the SDKs
// PUT the whole app user); the event holds the new state in full.
type Updated struct {
	AppUserID string
	App       string
	Email     string
	Devices   []Device
	Tags      []Tag
}

// TokenRemoved: one push token of the app user was dropped, for example
// because the push provider reported it invalid.
type TokenRemoved struct {
	AppUserID string
	App       string
	Token     string
	Reason    string
}

// Linked: an identified user signed in on the app user's device; pushes to
// that identified user reach this device from now on.
type Linked struct {
	AppUserID    string
	App          string
	IdentifiedID string
}

// Deleted: the app user is gone; it reaches nothing and reads as unknown.
type Deleted struct {
	AppUserID string
	App       string
}

// IdentifiedRegistered: an identified user (APP+) signed up through an app.
type IdentifiedRegistered struct {
	IdentifiedID string
	App          string
	Email        string
	PasswordHash string
	Network      string
	Profile      UserProfile
}

// IdentifiedEmailClaimed reserves an email within an app (stream
// IdentifiedEmailStream), so that two identified users of an app never
// share one (case-insensitively).
type IdentifiedEmailClaimed struct {
	App          string
	Email        string
	IdentifiedID string
}

// PocketUpdated: an identified user's pocket changed. Data holds the new
// data when DataReplaced; References holds the reference lists that were
// set and Cleared the names that were removed.
type PocketUpdated struct {
	IdentifiedID string
	App          string
	DataReplaced bool
	Data         map[string]any
	References   map[string][]string
	Cleared      []string
}

func (Created) EventType() string                { return "appuser.created" }
func (Updated) EventType() string                { return "appuser.updated" }
func (TokenRemoved) EventType() string           { return "appuser.token_removed" }
func (Linked) EventType() string                 { return "appuser.linked" }
func (Deleted) EventType() string                { return "appuser.deleted" }
func (IdentifiedRegistered) EventType() string   { return "appuser.identified_registered" }
func (IdentifiedEmailClaimed) EventType() string { return "appuser.identified_email_claimed" }
func (PocketUpdated) EventType() string          { return "appuser.pocket_updated" }

// Events lists a zero value of every event type of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{
		Created{}, Updated{}, TokenRemoved{}, Linked{}, Deleted{},
		IdentifiedRegistered{}, IdentifiedEmailClaimed{}, PocketUpdated{},
	}
}

// Event is an event of an app user's stream: it names the app user.
type Event interface{ AppUser() string }

func (e Created) AppUser() string      { return e.AppUserID }
func (e Updated) AppUser() string      { return e.AppUserID }
func (e TokenRemoved) AppUser() string { return e.AppUserID }
func (e Linked) AppUser() string       { return e.AppUserID }
func (e Deleted) AppUser() string      { return e.AppUserID }
