package media

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// maxField bounds the multipart fields before the file, together (they
// are read before the caller's right is checked); maxFields counts them.
const (
	maxField  = 64 << 10
	maxFields = 64
)

// parts reads a multipart body's fields up to its part "file", which it
// returns unread: the file is streamed to storage, never held in memory.
func (s *API) parts(r *http.Request) (map[string][]string, *multipart.Part, error) {
	if r.ContentLength > s.Commands.MaxBytes()+multipartSlack {
		return nil, nil, tooLarge(s.Commands.MaxBytes())
	}
	ct, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || ct != "multipart/form-data" || params["boundary"] == "" {
		return nil, nil, fault.New(fault.Unsupported, "send the file as multipart/form-data with a part named file")
	}
	mr := multipart.NewReader(r.Body, params["boundary"])
	fields := map[string][]string{}
	parts, size := 0, 0
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return nil, nil, fault.Invalidf("the body has no part named file").With("field", "file")
		}
		if err != nil {
			return nil, nil, bodyError(err)
		}
		name := p.FormName()
		if name == "file" {
			return fields, p, nil
		}
		b, err := io.ReadAll(io.LimitReader(p, maxField+1))
		if err != nil {
			return nil, nil, bodyError(err)
		}
		if len(b) > maxField {
			return nil, nil, fault.Invalidf("the field %s is longer than %d bytes", name, maxField).With("field", name)
		}
		if parts, size = parts+1, size+len(b); parts > maxFields || size > maxField {
			return nil, nil, fault.Invalidf("the fields before the file are more than %d parts or %d bytes", maxFields, maxField)
		}
		fields[name] = append(fields[name], string(b))
	}
}

func tooLarge(limit int64) error {
	return fault.New(fault.TooLarge, "the file is larger than the upload limit of %d bytes", limit).With("limit", limit)
}

// bodyError is what a failure to read the request body means: too large
// (the body limit), or cut off or malformed.
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return fault.New(fault.TooLarge, "the body is larger than %d bytes", mbe.Limit).With("limit", mbe.Limit)
	}
	if fault.KindOf(err) != fault.Internal || errors.Is(err, context.Canceled) {
		return err
	}
	return fault.Invalidf("the upload was cut off or is not valid multipart: %v", err).With("field", "file")
}

// bodyReader turns a read failure of the file part into what it means for
// the client (Stage passes it on).
type bodyReader struct{ r io.Reader }

func (b bodyReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		err = bodyError(err)
	}
	return n, err
}

func first(fields map[string][]string, name string) string {
	if v := fields[name]; len(v) > 0 {
		return strings.TrimSpace(v[0])
	}
	return ""
}

// tagsOf reads the tags fields: repeated, comma-separated, or both.
func tagsOf(fields map[string][]string) []string {
	var out []string
	for _, v := range fields["tags"] {
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				out = append(out, t)
			}
		}
	}
	return out
}

// upload serves POST /api/media/file (multipart: app, name, folder, tags,
// then file).
func (s *API) upload(w http.ResponseWriter, r *http.Request) error {
	fields, part, err := s.parts(r)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Write, err)
	}
	app, err := s.kit.AppOfField(r.Context(), first(fields, "app"), "app")
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Write, err)
	}
	// Refused before a byte of the file is read.
	if err := s.Commands.Authorize(r.Context(), rights.Write, app); err != nil {
		return err
	}
	name := first(fields, "name")
	if name == "" {
		name = part.FileName()
	}
	f, err := s.Commands.Upload(r.Context(), app, media.New{Name: name, Folder: first(fields, "folder"), Tags: tagsOf(fields)},
		bodyReader{part})
	if err != nil {
		return err
	}
	return s.answerFile(w, r, http.StatusCreated, f)
}

// replace serves PUT /api/media/file/{id}/content (multipart: file).
func (s *API) replace(w http.ResponseWriter, r *http.Request) error {
	_, part, err := s.parts(r)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Update, err)
	}
	f, err := s.Commands.Replace(r.Context(), chi.URLParam(r, "id"), bodyReader{part})
	if err != nil {
		return err
	}
	return s.answerFile(w, r, http.StatusOK, f)
}

// answerFile writes the file as the read model has it (the command
// waited for it), or, when the read model is behind (its projection slow
// or stopped) or the caller may not read it, as the command decided it:
// a file just stored is never answered as missing.
func (s *API) answerFile(w http.ResponseWriter, r *http.Request, status int, f media.File) error {
	out, err := s.Queries.File(r.Context(), f.ID)
	if err != nil && !fault.Is(err, fault.NotFound) && !fault.Is(err, fault.Forbidden) {
		return fmt.Errorf("read back %s: %w", f.ID, err)
	}
	if err != nil || out.Version != f.Version || out.Name != f.Name || out.Folder != f.Folder {
		uses, usedIn := out.Uses, out.UsedIn
		out = fromDomain(f)
		out.Uses, out.UsedIn = uses, usedIn
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", "/api/media/file/"+f.ID)
	}
	httpapi.WriteJSON(w, status, s.Files.fileJSON(r.Context(), out, true))
	return nil
}

// fromDomain is a file as its events make it, in the read model's shape
// (without who uploaded it and when, which the events' metadata holds).
func fromDomain(f media.File) rmmedia.File {
	b := f.Bytes
	var shas []string
	if b.SHA256 != "" {
		shas = []string{b.SHA256}
	}
	return rmmedia.File{ID: f.ID, App: f.App, Name: f.Name, Folder: f.Folder, Tags: f.Tags, Alt: f.Alt, Caption: f.Caption,
		URL: f.URL, SHA256: b.SHA256, SHAs: shas, Size: b.Size, MIME: b.MIME, Kind: string(b.Kind), Width: b.Width,
		Height: b.Height, DurationMS: b.Duration.Milliseconds(), Version: f.Version}
}
