// Package media is the media library of an app: files (their bytes live
// in a storage port, content-addressed by SHA-256), their metadata, and
// the image transforms served from them.
package media

import "time"

// Kind is what a file is, from its sniffed MIME type.
type Kind string

const (
	Image    Kind = "image"
	Video    Kind = "video"
	Audio    Kind = "audio"
	Document Kind = "document"
)

// Staged is bytes written to storage and hashed but not kept yet: a
// storage driver's temporary object, committed under a key or discarded.
type Staged struct {
	Token  string // the driver's handle of the temporary object
	SHA256 string // lower-case hex
	Size   int64
}

// ObjectInfo describes a kept object.
type ObjectInfo struct {
	Size    int64
	ModTime time.Time
}

// Probed is what the bytes of a file are, read from the bytes only (the
// name and the type a client declares are never trusted).
type Probed struct {
	MIME     string // e.g. "image/jpeg"
	Ext      string // e.g. ".jpg"
	Kind     Kind
	Width    int           // pixels, images and videos (0: unknown)
	Height   int           // pixels
	Duration time.Duration // audio and video (0: unknown)
}

// BlobKey is where the bytes of a given SHA-256 are kept: the same bytes
// are stored once, whoever uploads them.
func BlobKey(sha256 string) string { return "blobs/" + sha256[:2] + "/" + sha256 }

// DerivedKey is where a derived image (a transform of the blob sha256,
// canonical spec) is kept.
func DerivedKey(sha256, spec string) string {
	return "derived/" + sha256[:2] + "/" + sha256 + "/" + spec
}
