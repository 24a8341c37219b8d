package media

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"
	"github.com/tus/tusd/v2/pkg/memorylocker"
	xslog "golang.org/x/exp/slog"
)

// Resumable uploads speak the tus protocol (https://tus.io, v1.0.0)
// through github.com/tus/tusd/v2 (MIT): the reference server's own Go
// packages, so that every tus client (tus-js-client, TUSKit,
// tus-android-client, tus-java-client) works unchanged. Only its
// unrouted handler and its file store are used: the routes are ours
// (behind authentication, like every other endpoint), and so is every
// decision about who may create, resume or finish an upload.

// uploadsPath is where the resumable uploads live; an upload's URL is
// uploadsPath/<id>.
const uploadsPath = "/api/media/uploads"

// Upload metadata keys: what a client sends (app, filename, folder, tags)
// and what the server adds at creation (owner), overwriting anything the
// client sent under that name. app is kept as the resolved app id.
const (
	metaApp      = "app"
	metaFilename = "filename"
	metaFolder   = "folder"
	metaTags     = "tags"
	metaOwner    = "owner"
)

// The headers a finished upload's answer carries: the media file it
// became.
const (
	HeaderFileID  = "Media-File-Id"
	HeaderFileURL = "Media-File-Url"
)

// UploadsConfig configures the resumable uploads.
type UploadsConfig struct {
	// Dir keeps the uploads in progress (CMS_DATA_DIR/media-uploads): the
	// bytes received so far and a .info file of each.
	Dir string
	// BaseURL is the server's public address: an upload's Location starts
	// with it. Empty: the request's own host.
	BaseURL string
	// MaxBytes bounds an upload (the media service's MaxBytes).
	MaxBytes int64
	// Logger receives tusd's own warnings and errors (nil: none).
	Logger *slog.Logger
	// Stall is how long a chunk's body may send nothing before the
	// request ends, keeping what came (default 60 s).
	Stall time.Duration
}

// Uploads are the resumable (tus) uploads: partial files kept in a
// directory until they are complete, then added to the library and
// removed. Pass it to New in Deps.Uploads; Sweep removes abandoned ones.
type Uploads struct {
	store  filestore.FileStore
	locker *memorylocker.MemoryLocker
	tus    *tusd.UnroutedHandler
	// The tusd handlers, each behind its protocol middleware.
	post, head, patch, del, options http.Handler
	api                             *API // set by New: the completion adds the file through it
}

// NewUploads opens the uploads' directory and makes the tus handler.
func NewUploads(cfg UploadsConfig) (*Uploads, error) {
	if cfg.Dir == "" || cfg.MaxBytes <= 0 {
		return nil, fmt.Errorf("media uploads: a directory and a size limit are required")
	}
	if err := os.MkdirAll(cfg.Dir, 0o750); err != nil {
		return nil, fmt.Errorf("media uploads: %w", err)
	}
	u := &Uploads{store: filestore.New(cfg.Dir), locker: memorylocker.New()}
	u.store.DirModePerm, u.store.FileModePerm = 0o750, 0o640
	// Core, termination and locks only: no concatenation (a final upload
	// could name someone else's parts), no deferred length (the size is
	// checked against the limit before a byte is taken), no download.
	composer := tusd.NewStoreComposer()
	composer.UseCore(u.store)
	composer.UseTerminater(u.store)
	u.locker.UseIn(composer)
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h, err := tusd.NewUnroutedHandler(tusd.Config{
		StoreComposer:             composer,
		MaxSize:                   cfg.MaxBytes,
		BasePath:                  strings.TrimSuffix(cfg.BaseURL, "/") + uploadsPath + "/",
		DisableDownload:           true,
		DisableConcatenation:      true,
		Cors:                      &tusd.CorsConfig{Disable: true}, // same-origin CMS and native apps, as the rest of the API
		Logger:                    xslog.New(warnings{logger.Handler()}),
		NetworkTimeout:            cfg.Stall,
		PreUploadCreateCallback:   u.created,
		PreFinishResponseCallback: u.finished,
	})
	if err != nil {
		return nil, fmt.Errorf("media uploads: %w", err)
	}
	u.tus = h
	mw := h.Middleware
	u.post, u.head = mw(http.HandlerFunc(h.PostFile)), mw(http.HandlerFunc(h.HeadFile))
	u.patch, u.del = mw(http.HandlerFunc(h.PatchFile)), mw(http.HandlerFunc(h.DelFile))
	u.options = mw(http.NotFoundHandler()) // the middleware answers OPTIONS itself
	return u, nil
}

// creationKey carries the metadata an upload is created with, from the
// checks before tusd to its creation callback.
type creationKey struct{}

// created is tusd's creation callback: the upload gets the metadata the
// checks before it settled (resolved app, owner).
func (u *Uploads) created(hook tusd.HookEvent) (tusd.HTTPResponse, tusd.FileInfoChanges, error) {
	meta, ok := hook.Context.Value(creationKey{}).(map[string]string)
	if !ok {
		return tusd.HTTPResponse{}, tusd.FileInfoChanges{}, fmt.Errorf("media uploads: an upload created without its checks")
	}
	return tusd.HTTPResponse{}, tusd.FileInfoChanges{MetaData: meta}, nil
}

// info reads an upload's state; ok is false when there is none.
func (u *Uploads) info(ctx context.Context, id string) (tusd.FileInfo, bool, error) {
	if !validUploadID(id) {
		return tusd.FileInfo{}, false, nil
	}
	up, err := u.store.GetUpload(ctx, id)
	if errors.Is(err, tusd.ErrNotFound) {
		return tusd.FileInfo{}, false, nil
	}
	if err != nil {
		return tusd.FileInfo{}, false, fmt.Errorf("read upload %s: %w", id, err)
	}
	info, err := up.GetInfo(ctx)
	return info, err == nil, err
}

// remove deletes an upload's files (a failure leaves them to the sweep).
func (u *Uploads) remove(ctx context.Context, id string) error {
	up, err := u.store.GetUpload(ctx, id)
	if errors.Is(err, tusd.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return u.store.AsTerminatableUpload(up).Terminate(ctx)
}

// validUploadID accepts the ids tusd's file store makes (32 hex digits),
// so that an id is never a path of its own.
func validUploadID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for _, c := range id {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// warnings passes tusd's warnings and errors on to the server's log
// (tusd logs every request at Info, and through golang.org/x/exp/slog).
type warnings struct{ h slog.Handler }

func (w warnings) Enabled(ctx context.Context, l xslog.Level) bool {
	return l >= xslog.LevelWarn && w.h.Enabled(ctx, slog.Level(l))
}

func (w warnings) Handle(ctx context.Context, r xslog.Record) error {
	rec := slog.NewRecord(r.Time, slog.Level(r.Level), "tus: "+r.Message, r.PC)
	r.Attrs(func(a xslog.Attr) bool {
		rec.AddAttrs(slog.Any(a.Key, a.Value.Any()))
		return true
	})
	return w.h.Handle(ctx, rec)
}

func (w warnings) WithAttrs(as []xslog.Attr) xslog.Handler {
	out := make([]slog.Attr, len(as))
	for i, a := range as {
		out[i] = slog.Any(a.Key, a.Value.Any())
	}
	return warnings{w.h.WithAttrs(out)}
}

func (w warnings) WithGroup(name string) xslog.Handler { return warnings{w.h.WithGroup(name)} }
