package media

import (
	"context"
	"path"
	"strings"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
)

// Change is a change of a file's metadata; nil fields stay as they are.
type Change struct {
	Name    *string
	Folder  *string
	Tags    *[]string
	Alt     *map[string]string
	Caption *map[string]string
}

// Change applies c to file id (update right on its app), as one append.
func (s *Service) Change(ctx context.Context, id string, c Change) (media.File, error) {
	cur, err := s.load(ctx, rights.Update, id)
	if err != nil {
		return cur, err
	}
	f, res, err := commands.Update(ctx, s.Store, media.Stream(id), cur.App, media.File{}, apply, func(f media.File) ([]any, error) {
		var out []any
		step := func(decide func(media.File) ([]any, error)) error {
			evs, err := decide(f)
			for _, e := range evs {
				f = f.Apply(e)
			}
			out = append(out, evs...)
			return err
		}
		if c.Name != nil {
			if err := step(func(f media.File) ([]any, error) { return f.Rename(*c.Name) }); err != nil {
				return nil, err
			}
		}
		if c.Folder != nil {
			if err := step(func(f media.File) ([]any, error) { return f.Move(*c.Folder) }); err != nil {
				return nil, err
			}
		}
		if c.Tags != nil {
			if err := step(func(f media.File) ([]any, error) { return f.Tag(*c.Tags) }); err != nil {
				return nil, err
			}
		}
		if c.Alt != nil || c.Caption != nil {
			alt, caption := f.Alt, f.Caption
			if c.Alt != nil {
				alt = *c.Alt
			}
			if c.Caption != nil {
				caption = *c.Caption
			}
			if err := step(func(f media.File) ([]any, error) { return f.Describe(alt, caption) }); err != nil {
				return nil, err
			}
		}
		return out, nil
	})
	if err != nil {
		return f, err
	}
	s.settle(ctx, res.Last)
	return f, nil
}

// Delete deletes file id (delete right on its app); while items or pushes
// use it, only with force.
func (s *Service) Delete(ctx context.Context, id string, force bool) error {
	cur, err := s.load(ctx, rights.Delete, id)
	if err != nil {
		return err
	}
	last, err := s.Log.Last(ctx)
	if err != nil {
		return err
	}
	if !s.Wait.WaitFor(ctx, last, Projections...) {
		// What uses the file is not known yet: deleting now could delete
		// a file an item saved a moment ago uses.
		return fault.Conflictf("the media library is catching up with recent changes; try the delete again shortly").With("retry", true)
	}
	usedBy, err := s.Usage.UsedBy(ctx, cur.App, id)
	if err != nil {
		return err
	}
	_, res, err := commands.Update(ctx, s.Store, media.Stream(id), cur.App, media.File{}, apply, func(f media.File) ([]any, error) {
		return f.Delete(force, usedBy)
	})
	if err != nil {
		return err
	}
	s.settle(ctx, res.Last)
	return nil
}

// ByURL is updateByUrl's save.
type ByURL struct {
	App    string
	URL    string
	Name   string
	Folder string
	Tags   []string
	// Fetch downloads the file and stores its bytes, as an upload,
	// instead of registering a reference (only with a Fetcher).
	Fetch bool
}

// SaveURL registers url in app's library and returns the file (write
// right on the app): this server's own media URL answers its file; a URL
// registered already answers the same file; another becomes a reference
// to a file kept elsewhere, or with Fetch is downloaded and stored (see
// fetchURL).
func (s *Service) SaveURL(ctx context.Context, b ByURL) (media.File, bool, error) {
	if err := s.Authorize(ctx, rights.Write, b.App); err != nil {
		return media.File{}, false, err
	}
	if err := media.CheckURL(b.URL); err != nil {
		return media.File{}, false, err
	}
	if b.Fetch {
		return s.fetchURL(ctx, b)
	}
	if f, ok, err := s.known(ctx, b.App, b.URL); ok || err != nil {
		return f, false, err
	}
	name := b.Name
	if name == "" {
		name = nameOf(b.URL)
	}
	f, err := s.add(ctx, b.App, media.New{Name: name, Folder: b.Folder, Tags: b.Tags, URL: b.URL,
		Bytes: media.Bytes{Kind: kindOfName(b.URL)}})
	return f, err == nil, err
}

// DeleteURL deletes the file of app registered under url (delete right on
// the app; while used, only with force).
func (s *Service) DeleteURL(ctx context.Context, app, url string, force bool) (media.File, error) {
	if err := s.Authorize(ctx, rights.Delete, app); err != nil {
		return media.File{}, err
	}
	f, ok, err := s.known(ctx, app, url)
	if err != nil {
		return f, err
	}
	if !ok {
		return f, fault.NotFoundf("no media file of app %s is registered under %s", app, url).With("field", "url")
	}
	return f, s.Delete(ctx, f.ID, force)
}

// known finds the file of app that url names: this server's own media URL
// or a registered reference.
func (s *Service) known(ctx context.Context, app, url string) (media.File, bool, error) {
	id, own := s.cfg.OwnURL(url)
	if !own && s.Registered != nil {
		var err error
		if id, err = s.Registered.FileByURL(ctx, app, url); err != nil {
			return media.File{}, false, err
		}
	}
	if id == "" {
		return media.File{}, false, nil
	}
	f, _, err := commands.Load(ctx, s.Store, media.Stream(id), media.File{}, apply)
	if err != nil {
		return f, false, err
	}
	if !f.Exists() || f.App != app {
		if own {
			return f, false, fault.Invalidf("%s is not a media file of app %s", url, app).With("field", "url")
		}
		return media.File{}, false, nil
	}
	return f, true, nil
}

// nameOf is a URL's last path segment, or its host.
func nameOf(u string) string {
	rest := u[strings.Index(u, "://")+3:]
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	if name := path.Base(rest); strings.Contains(rest, "/") && name != "/" && name != "." {
		if n, err := media.CheckName(name); err == nil {
			return n
		}
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

// kindOfName guesses a reference's kind from its extension (a reference's
// bytes are not here to sniff).
func kindOfName(u string) media.Kind {
	ext := strings.ToLower(path.Ext(nameOf(u)))
	switch ext {
	case ".jpg", ".jpeg", ".png", ".gif", ".webp", ".avif", ".svg":
		return media.Image
	case ".mp4", ".mov", ".webm", ".m4v":
		return media.Video
	case ".mp3", ".m4a", ".ogg", ".wav", ".flac", ".aac":
		return media.Audio
	}
	return media.Document
}

// SetAccess sets whether app's files need a signed URL or a token
// (update right on the app).
func (s *Service) SetAccess(ctx context.Context, app string, signed bool) error {
	if err := s.Authorize(ctx, rights.Update, app); err != nil {
		return err
	}
	type state struct{ signed bool }
	_, res, err := commands.Update(ctx, s.Store, media.AccessStream(app), app, state{},
		func(st state, ev any) state {
			if e, ok := ev.(media.AccessSet); ok {
				st.signed = e.Signed
			}
			return st
		},
		func(st state) ([]any, error) {
			if st.signed == signed {
				return nil, nil
			}
			return []any{media.AccessSet{App: app, Signed: signed}}, nil
		})
	if err != nil {
		return err
	}
	s.settle(ctx, res.Last)
	return nil
}
