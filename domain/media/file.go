package media

import (
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Stream is a file's own stream.
func Stream(id string) string { return "media-" + id }

// Limits of a file's metadata.
const (
	MaxNameLength   = 255
	MaxFolderLength = 255
	MaxFolderDepth  = 8
	MaxTags         = 50
	MaxTagLength    = 64
	MaxLocales      = 50
	MaxTextLength   = 1000 // an alt text or caption
	MaxURLLength    = 2048
)

// File is a media file of an app, rebuilt from its events.
type File struct {
	ID      string
	App     string
	Name    string
	Folder  string
	Tags    []string
	Alt     map[string]string
	Caption map[string]string
	URL     string // an external reference's address ("" when stored here)
	Bytes   Bytes
	Version int // of the bytes: 1 when uploaded, +1 per replacement
	exists  bool
	deleted bool
}

// Exists reports whether the file was uploaded and not deleted.
func (f File) Exists() bool { return f.exists && !f.deleted }

// External reports whether the file is a reference to a file kept
// elsewhere.
func (f File) External() bool { return f.URL != "" }

// Apply folds one event into the state.
func (f File) Apply(ev any) File {
	switch e := ev.(type) {
	case Uploaded:
		f = File{ID: e.FileID, App: e.App, Name: e.Name, Folder: e.Folder, Tags: e.Tags, URL: e.URL, Bytes: e.Bytes,
			Version: 1, exists: true}
	case Renamed:
		f.Name = e.Name
	case Described:
		f.Alt, f.Caption = e.Alt, e.Caption
	case Tagged:
		f.Tags = e.Tags
	case Moved:
		f.Folder = e.Folder
	case Replaced:
		f.Bytes, f.Version, f.URL = e.Bytes, e.Version, ""
	case Deleted:
		f.deleted = true
	}
	return f
}

// New is what a file is added with.
type New struct {
	Name   string
	Folder string
	Tags   []string
	URL    string // a reference to an external file (then Bytes holds what is known of it)
	Bytes  Bytes
}

// Upload decides the addition of a file to app's library.
func Upload(f File, id, app string, n New) ([]any, error) {
	if f.exists {
		return nil, fault.Conflictf("media file %s exists", id)
	}
	name, err := CheckName(n.Name)
	if err != nil {
		return nil, err
	}
	folder, err := CheckFolder(n.Folder)
	if err != nil {
		return nil, err
	}
	tags, err := CheckTags(n.Tags)
	if err != nil {
		return nil, err
	}
	if n.URL != "" {
		if err := CheckURL(n.URL); err != nil {
			return nil, err
		}
	} else if n.Bytes.SHA256 == "" {
		return nil, fault.Invalidf("a file needs bytes or a URL").With("field", "file")
	}
	return []any{Uploaded{FileID: id, App: app, Name: name, Folder: folder, Tags: tags, URL: n.URL, Bytes: n.Bytes}}, nil
}

func (f File) live() error {
	if !f.Exists() {
		return fault.NotFoundf("media file %s not found", f.ID)
	}
	return nil
}

// Rename decides a new name.
func (f File) Rename(name string) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	name, err := CheckName(name)
	if err != nil || name == f.Name {
		return nil, err
	}
	return []any{Renamed{FileID: f.ID, App: f.App, Name: name}}, nil
}

// Describe decides the alt texts and captions (in full: a locale left out
// is removed).
func (f File) Describe(alt, caption map[string]string) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	alt, err := checkTexts("alt", alt)
	if err != nil {
		return nil, err
	}
	if caption, err = checkTexts("caption", caption); err != nil {
		return nil, err
	}
	if maps.Equal(alt, f.Alt) && maps.Equal(caption, f.Caption) {
		return nil, nil
	}
	return []any{Described{FileID: f.ID, App: f.App, Alt: alt, Caption: caption}}, nil
}

// Tag decides the file's tags (in full).
func (f File) Tag(tags []string) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	tags, err := CheckTags(tags)
	if err != nil || slices.Equal(tags, f.Tags) {
		return nil, err
	}
	return []any{Tagged{FileID: f.ID, App: f.App, Tags: tags}}, nil
}

// Move decides the file's folder.
func (f File) Move(folder string) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	folder, err := CheckFolder(folder)
	if err != nil || folder == f.Folder {
		return nil, err
	}
	return []any{Moved{FileID: f.ID, App: f.App, Folder: folder}}, nil
}

// Replace decides a new version of the bytes, of the same kind (a field
// that takes images keeps getting an image).
func (f File) Replace(b Bytes) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	if f.Bytes.Kind != "" && b.Kind != f.Bytes.Kind {
		return nil, fault.New(fault.Unsupported, "a file of kind %s can only be replaced by another %s; this one is %s (%s)",
			f.Bytes.Kind, f.Bytes.Kind, b.Kind, b.MIME).With("field", "file")
	}
	if !f.External() && b.SHA256 == f.Bytes.SHA256 {
		return nil, nil
	}
	return []any{Replaced{FileID: f.ID, App: f.App, Version: f.Version + 1, Bytes: b}}, nil
}

// Delete decides the file's deletion. usedBy names what uses it
// ("item:<id>", "push:<id>"): while anything does, only a forced delete
// goes through.
func (f File) Delete(force bool, usedBy []string) ([]any, error) {
	if err := f.live(); err != nil {
		return nil, err
	}
	if len(usedBy) > 0 && !force {
		return nil, fault.Conflictf("media file %s is used by %d item(s) or push(es); remove it from them first, or delete with force",
			f.ID, len(usedBy)).With("usedBy", usedBy)
	}
	return []any{Deleted{FileID: f.ID, App: f.App, Forced: len(usedBy) > 0, UsedBy: usedBy}}, nil
}

// CheckFiling refuses a folder or tags that a file may not be filed
// under (Upload checks them again, with the rest of the file): what a
// command checks before a byte of the file comes.
func CheckFiling(folder string, tags []string) error {
	if _, err := CheckFolder(folder); err != nil {
		return err
	}
	_, err := CheckTags(tags)
	return err
}

// CheckName returns a file name trimmed, or why it is refused: a name is
// shown and sent as the download's name, never used as a path.
func CheckName(s string) (string, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) error {
		return fault.Invalidf("the file name %s", why).With("field", "name")
	}
	switch {
	case s == "":
		return "", bad("is empty")
	case !utf8.ValidString(s):
		return "", bad("is not valid UTF-8")
	case utf8.RuneCountInString(s) > MaxNameLength:
		return "", bad("is longer than 255 characters")
	case s == "." || s == "..":
		return "", bad("may not be . or ..")
	case strings.ContainsAny(s, `/\`):
		return "", bad("may not contain / or \\ (put the file in a folder instead)")
	case strings.IndexFunc(s, unicode.IsControl) >= 0:
		return "", bad("may not contain control characters")
	}
	return s, nil
}

// CheckFolder returns a folder path in its canonical form ("a/b", no
// leading or trailing slash; "" is the root), or why it is refused.
func CheckFolder(s string) (string, error) {
	s = strings.Trim(strings.TrimSpace(s), "/")
	if s == "" {
		return "", nil
	}
	bad := func(why string) error { return fault.Invalidf("the folder %s", why).With("field", "folder") }
	if !utf8.ValidString(s) || len(s) > MaxFolderLength {
		return "", bad("is longer than 255 bytes or not valid UTF-8")
	}
	parts := strings.Split(s, "/")
	if len(parts) > MaxFolderDepth {
		return "", bad("is more than 8 levels deep")
	}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		switch {
		case p == "":
			return "", bad("has an empty level")
		case p == "." || p == "..":
			return "", bad("may not have a . or .. level")
		case strings.ContainsRune(p, '\\') || strings.IndexFunc(p, unicode.IsControl) >= 0:
			return "", bad("may not contain \\ or control characters")
		}
		parts[i] = p
	}
	return strings.Join(parts, "/"), nil
}

// CheckTags returns tags trimmed and without repeats, in their order, or
// why they are refused.
func CheckTags(tags []string) ([]string, error) {
	if len(tags) > MaxTags {
		return nil, fault.Invalidf("a file has at most %d tags", MaxTags).With("field", "tags")
	}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if t == "" || !utf8.ValidString(t) || utf8.RuneCountInString(t) > MaxTagLength || strings.IndexFunc(t, unicode.IsControl) >= 0 {
			return nil, fault.Invalidf("a tag is 1 to %d characters, with no control characters", MaxTagLength).With("field", "tags")
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

var localePattern = regexp.MustCompile(`^[A-Za-z]{2,3}([-_][A-Za-z0-9]{2,8}){0,2}$`)

func checkTexts(field string, m map[string]string) (map[string]string, error) {
	if len(m) > MaxLocales {
		return nil, fault.Invalidf("%s has at most %d locales", field, MaxLocales).With("field", field)
	}
	out := map[string]string{}
	for loc, v := range m {
		if !localePattern.MatchString(loc) {
			return nil, fault.Invalidf("%q is not a locale (like en, en-GB or nl_NL)", loc).With("field", field)
		}
		v = strings.TrimSpace(v)
		if !utf8.ValidString(v) || utf8.RuneCountInString(v) > MaxTextLength {
			return nil, fault.Invalidf("%s.%s is longer than %d characters or not valid UTF-8", field, loc, MaxTextLength).With("field", field)
		}
		if v != "" {
			out[loc] = v
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// CheckURL refuses what is not an absolute http(s) URL.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || len(s) > MaxURLLength || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fault.Invalidf("url must be an absolute http or https URL without credentials, at most %d characters", MaxURLLength).With("field", "url")
	}
	return nil
}

// KindOfMIME is the kind of a MIME type ("" when none applies).
func KindOfMIME(mime string) Kind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return Image
	case strings.HasPrefix(mime, "video/"):
		return Video
	case strings.HasPrefix(mime, "audio/"):
		return Audio
	case mime != "":
		return Document
	}
	return ""
}
