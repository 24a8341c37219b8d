// Package media holds the media library's commands: uploading a file
// (its bytes streamed to storage, sniffed, bounded and stored once per
// content), changing its metadata, replacing its bytes, deleting it, and
// HALO's updateByUrl.
package media

import (
	"context"
	"io"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
)

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
}

// Storage is the part of the media storage port uploads use (see
// adapters/mediastore/storetest for the whole contract).
type Storage interface {
	Stage(ctx context.Context, r io.Reader, limit int64) (media.Staged, error)
	OpenStaged(ctx context.Context, s media.Staged) (io.ReadSeekCloser, error)
	Commit(ctx context.Context, s media.Staged, key string) error
	Discard(ctx context.Context, s media.Staged) error
}

// Prober tells what staged bytes are, from the bytes: a refusal is a
// fault (Unsupported for a type not allowed, TooLarge for an image of too
// many pixels, Invalid for a truncated file).
type Prober interface {
	Probe(ctx context.Context, r io.ReadSeeker, size int64) (media.Probed, error)
}

// Scanner scans bytes for malware (clamd); a finding is a fault.Invalid
// naming it. Optional.
type Scanner interface {
	Scan(ctx context.Context, r io.Reader) error
}

// Fetcher downloads an external URL's bytes for updateByUrl with fetch:
// true, and names the file; a refused URL is a fault. Optional: without
// it, fetching is refused.
type Fetcher interface {
	Fetch(ctx context.Context, url string) (body io.ReadCloser, name string, err error)
}

// Usage tells what of app uses a file ("item:<id>", "push:<id>"), from
// the usage read model.
type Usage interface {
	UsedBy(ctx context.Context, app, fileID string) ([]string, error)
}

// Registered finds a file of app registered under an external URL.
type Registered interface {
	FileByURL(ctx context.Context, app, url string) (string, error) // "" when none
}

// Log tells where the log ends: a delete waits for the usage projection
// to reach it, so that an item saved a moment ago counts.
type Log interface {
	Last(ctx context.Context) (event.Position, error)
}

// IDs generates identifiers.
type IDs interface{ NewID() string }

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{"media"}

// Config bounds uploads.
type Config struct {
	MaxBytes int64 // per file; default 100 MiB
	// OwnURL returns the file id a URL of this server's media names, if it
	// is one (updateByUrl answers the file itself for it).
	OwnURL func(url string) (fileID string, ok bool)
}

// Deps are the service's dependencies; Scanner, Fetcher and Registered
// are optional.
type Deps struct {
	Store      commands.EventStore
	Authorizer Authorizer
	Storage    Storage
	Prober     Prober
	Scanner    Scanner
	Fetcher    Fetcher
	Usage      Usage
	Log        Log
	Registered Registered
	IDs        IDs
	Wait       commands.Waiter
}

// Service runs the media commands.
type Service struct {
	Deps
	cfg Config
	now func() time.Time
}

// DefaultMaxBytes bounds an upload when Config leaves it unset.
const DefaultMaxBytes = 100 << 20

// NewService wires the service.
func NewService(d Deps, cfg Config) *Service {
	if d.Store == nil || d.Authorizer == nil || d.Storage == nil || d.Prober == nil || d.Usage == nil || d.Log == nil || d.IDs == nil || d.Wait == nil {
		panic("media.NewService: nil dependency")
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.OwnURL == nil {
		cfg.OwnURL = func(string) (string, bool) { return "", false }
	}
	return &Service{Deps: d, cfg: cfg, now: time.Now}
}

// MaxBytes is the upload limit.
func (s *Service) MaxBytes() int64 { return s.cfg.MaxBytes }

func apply(f media.File, ev any) media.File { return f.Apply(ev) }

// caller refuses anonymous callers (401) and app tokens (403): the
// library is managed by CMS users.
func caller(ctx context.Context) (access.Actor, error) {
	return access.CMSUser(ctx, fault.Forbiddenf("app tokens (and app users' tokens) may not change the media library; use a CMS user's token"))
}

// Authorize needs permission p on app from a CMS user: the upload
// endpoint asks before it reads the body.
func (s *Service) Authorize(ctx context.Context, p rights.Permission, app string) error {
	a, err := caller(ctx)
	if err != nil {
		return err
	}
	if app == "" {
		return fault.Invalidf("app is required").With("field", "app")
	}
	if err := s.Authorizer.Authorize(ctx, a, p, rights.Resource{App: app}); err != nil {
		return err
	}
	return s.appExists(ctx, app)
}

// appExists refuses an app that does not exist: 400 naming the field, as
// everywhere a body names an app.
func (s *Service) appExists(ctx context.Context, app string) error {
	a, _, err := commands.Load(ctx, s.Store, identity.AppStream(app), identity.App{}, identity.App.Apply)
	if err != nil {
		return err
	}
	if !a.Exists() {
		return fault.Invalidf("app %s not found", app).With("field", "app")
	}
	return nil
}

// load reads a file and checks the caller holds p on its app; a file that
// does not exist is a 404 (after the caller is known to be a CMS user).
func (s *Service) load(ctx context.Context, p rights.Permission, id string) (media.File, error) {
	a, err := caller(ctx)
	if err != nil {
		return media.File{}, err
	}
	f, _, err := commands.Load(ctx, s.Store, media.Stream(id), media.File{}, apply)
	if err != nil {
		return f, err
	}
	if !f.Exists() {
		return f, fault.NotFoundf("media file %s not found", id)
	}
	if err := s.Authorizer.Authorize(ctx, a, p, rights.Resource{App: f.App}); err != nil {
		return f, err
	}
	return f, nil
}

func (s *Service) settle(ctx context.Context, pos event.Position) {
	if !pos.IsZero() {
		s.Wait.WaitFor(ctx, pos, Projections...)
	}
}
