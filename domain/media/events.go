package media

import "time"

// Events of the media context. Type names are stable: never rename them.
// Who caused an event is in its metadata.

// Bytes is what one version of a file's bytes is.
type Bytes struct {
	SHA256   string // "" for a reference to an external URL
	Size     int64
	MIME     string
	Kind     Kind
	Width    int
	Height   int
	Duration time.Duration
}

// Uploaded: a file was added to an app's library, with its first bytes
// (or, URL set, as a reference to a file kept elsewhere).
type Uploaded struct {
	FileID string
	App    string
	Name   string
	Folder string
	Tags   []string
	URL    string // an external file's address; "" when the bytes are stored here
	Bytes  Bytes
}

// Renamed: the file's name changed.
type Renamed struct{ FileID, App, Name string }

// Described: the file's alt text and caption, per locale, in full.
type Described struct {
	FileID  string
	App     string
	Alt     map[string]string
	Caption map[string]string
}

// Tagged: the file's tags, in full.
type Tagged struct {
	FileID string
	App    string
	Tags   []string
}

// Moved: the file is in another folder ("" is the root).
type Moved struct{ FileID, App, Folder string }

// Replaced: a new version of the file's bytes; its URL stays.
type Replaced struct {
	FileID  string
	App     string
	Version int
	Bytes   Bytes
}

// Deleted: the file is gone from the library. Forced: it was still used
// (by UsedBy, "item:<id>" or "push:<id>") and the user deleted it anyway.
type Deleted struct {
	FileID string
	App    string
	Forced bool
	UsedBy []string
}

// AccessSet: who may read an app's files: anyone (public, the default),
// or only signed URLs and tokens that may read them (Signed).
type AccessSet struct {
	App    string
	Signed bool
}

// AccessStream holds an app's media settings.
func AccessStream(app string) string { return "mediaaccess-" + app }

func (AccessSet) EventType() string { return "media.access_set" }
func (Uploaded) EventType() string  { return "media.file_uploaded" }
func (Renamed) EventType() string   { return "media.file_renamed" }
func (Described) EventType() string { return "media.file_described" }
func (Tagged) EventType() string    { return "media.file_tagged" }
func (Moved) EventType() string     { return "media.file_moved" }
func (Replaced) EventType() string  { return "media.file_replaced" }
func (Deleted) EventType() string   { return "media.file_deleted" }

// Events lists the context's event types, for the codec's registry.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{Uploaded{}, Renamed{}, Described{}, Tagged{}, Moved{}, Replaced{}, Deleted{}, AccessSet{}}
}
