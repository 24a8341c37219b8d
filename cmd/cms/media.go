package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/halocms/halocms/adapters/clamd"
	httpmedia "github.com/halocms/halocms/adapters/http/media"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/imaging"
	"github.com/halocms/halocms/adapters/mediaprobe"
	"github.com/halocms/halocms/adapters/mediastore/local"
	"github.com/halocms/halocms/adapters/mediastore/s3"
	"github.com/halocms/halocms/adapters/urlfetch"
	"github.com/halocms/halocms/commands"
	cmdmedia "github.com/halocms/halocms/commands/media"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// mediaStorage is the storage port, as every driver implements it.
type mediaStorage interface {
	cmdmedia.Storage
	httpmedia.Storage
	Sweep(ctx context.Context, age time.Duration) (int, error)
}

// openMediaStorage opens the configured driver.
func openMediaStorage(ctx context.Context, cfg Config) (mediaStorage, error) {
	if cfg.Media.Storage == "s3" {
		c := cfg.Media.S3
		return s3.New(ctx, s3.Config{Endpoint: c.Endpoint, Bucket: c.Bucket, Region: c.Region, AccessKey: c.AccessKey,
			SecretKey: c.SecretKey, UseSSL: c.UseSSL, Prefix: c.Prefix, StagingDir: filepath.Join(cfg.DataDir, "media-staging")})
	}
	return local.New(filepath.Join(cfg.DataDir, "media"))
}

// signingKey is the configured key, or one generated once and kept in
// the data directory.
func signingKey(cfg Config) ([]byte, error) {
	if cfg.Media.SigningKey != "" {
		return []byte(cfg.Media.SigningKey), nil
	}
	path := filepath.Join(cfg.DataDir, "media-signing.key")
	if b, err := os.ReadFile(path); err == nil && len(b) >= 32 {
		return b, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	key := []byte(hex.EncodeToString(b))
	if err := os.MkdirAll(cfg.DataDir, 0o750); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, key, 0o600); err != nil {
		return nil, fmt.Errorf("keep the media signing key: %w", err)
	}
	return key, nil
}

// prober adapts mediaprobe to the commands' port.
type prober struct{ mediaprobe.Options }

func (p prober) Probe(_ context.Context, r io.ReadSeeker, size int64) (media.Probed, error) {
	return p.Options.Probe(r, size)
}

// transforms adapts adapters/imaging to the file server's port.
type transforms struct {
	presets imaging.Presets
	policy  imaging.Policy
	engine  *imaging.Engine
}

func (t transforms) FromQuery(q url.Values) (media.Transform, error) { return t.presets.ParseQuery(q) }

func (t transforms) FromSegment(seg string) (media.Transform, bool, error) {
	return t.presets.ParseSegment(seg)
}

func (t transforms) Allow(path string, tr media.Transform, q url.Values) error {
	return t.policy.Allow(path, tr, q.Get("sig"))
}

func (t transforms) Sign(path string, tr media.Transform) string {
	return t.policy.Signer.Sign(path, tr)
}

func (t transforms) Transform(ctx context.Context, src io.Reader, tr media.Transform) ([]byte, string, error) {
	return t.engine.Transform(ctx, src, tr)
}

// mediaParts are the media library's services.
type mediaParts struct {
	storage mediaStorage
	service *cmdmedia.Service
	store   *rmmedia.Store
	urls    httpmedia.URLs
	key     []byte
	engine  *imaging.Engine
	uploads *httpmedia.Uploads // resumable (tus) uploads
}

// openMedia wires the media library (storage, probe, commands, read
// model). The file server is made by serve (it needs the image engine).
func (a *app) openMedia(ctx context.Context, waiter commands.Waiter) error {
	st, err := openMediaStorage(ctx, a.cfg)
	if err != nil {
		return fmt.Errorf("media storage: %w", err)
	}
	key, err := signingKey(a.cfg)
	if err != nil {
		return err
	}
	urls := httpmedia.URLs{Base: a.cfg.Media.PublicURL}
	a.media.storage, a.media.key, a.media.urls = st, key, urls
	a.media.store = rmmedia.NewStore(a.pool)
	var allowed mediaprobe.Allowed
	for _, t := range a.cfg.Media.Types {
		if allowed == nil {
			allowed = mediaprobe.Allowed{}
		}
		allowed[t] = true
	}
	deps := cmdmedia.Deps{Store: a.store, Authorizer: a.authz, Storage: st, Prober: prober{mediaprobe.Options{Allowed: allowed}}, Usage: a.media.store,
		Log: a.store, Registered: a.media.store, IDs: ids.Generator{}, Wait: waiter}
	if err := a.mediaSafety(ctx, &deps); err != nil {
		return err
	}
	a.media.service = cmdmedia.NewService(deps, cmdmedia.Config{MaxBytes: a.cfg.Media.MaxBytes, OwnURL: urls.FileID})
	a.content.UseMedia(mediaFiles{store: a.media.store, urls: urls})
	return a.openUploads()
}

var (
	_ cmdmedia.Scanner = (*clamd.Client)(nil)
	_ cmdmedia.Fetcher = (*urlfetch.Fetcher)(nil)
)

// mediaSafety adds the optional scanner (CMS_MEDIA_CLAMD) and fetcher
// (CMS_MEDIA_FETCH_URLS) to deps. A clamd that does not answer yet is
// not fatal (it may still be loading its signatures): uploads are
// refused with 503 until it does.
func (a *app) mediaSafety(ctx context.Context, deps *cmdmedia.Deps) error {
	if addr := a.cfg.Media.ClamdAddr; addr != "" {
		c, err := clamd.New(addr)
		if err != nil {
			return fmt.Errorf("CMS_MEDIA_CLAMD: %w", err)
		}
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		if err := c.Ping(pctx); err != nil {
			a.log.WarnContext(ctx, "clamd does not answer yet: uploads are refused until it does", "addr", addr, "err", err)
		}
		cancel()
		deps.Scanner = c
	}
	if a.cfg.Media.FetchURLs {
		deps.Fetcher = urlfetch.New(urlfetch.Options{MaxBytes: a.cfg.Media.MaxBytes, Timeout: 30 * time.Second,
			AllowPrivate: a.cfg.Media.FetchAllowPrivate})
	}
	return nil
}

// mediaServer makes the file server, with the image engine.
func (a *app) mediaServer() (*httpmedia.Server, error) {
	engine, err := imaging.New(imaging.Options{Logger: a.log, MaxSourceBytes: a.cfg.Media.MaxBytes})
	if err != nil {
		return nil, fmt.Errorf("image engine: %w", err)
	}
	a.media.engine = engine
	presets := imaging.DefaultPresets()
	tr := transforms{presets: presets, engine: engine,
		policy: imaging.Policy{Presets: presets, Signer: imaging.Signer{Key: a.media.key}, SignedOnly: a.cfg.Media.Transforms == "signed"}}
	return httpmedia.NewServer(a.media.storage, a.media.store, a.authz, tr, a.media.store,
		httpmedia.ServerConfig{URLs: a.media.urls, SigningKey: a.media.key}), nil
}

// mediaFiles lets content items name media files by id (their values
// keep the files' stable URLs).
type mediaFiles struct {
	store *rmmedia.Store
	urls  httpmedia.URLs
}

func (m mediaFiles) OwnFile(url string) (string, bool) { return m.urls.FileID(url) }

func (m mediaFiles) FileURL(ctx context.Context, app, id string) (string, string, error) {
	ref, err := m.store.Ref(ctx, id)
	if err != nil {
		return "", "", err
	}
	if ref.App != app {
		return "", "", fault.NotFoundf("media file %s not found", id)
	}
	if ref.URL != "" {
		return ref.URL, ref.Kind, nil
	}
	return m.urls.Stable(ref.ID, ref.Name), ref.Kind, nil
}

// stagedMaxAge is how old a staged upload is when the sweep removes it:
// an upload that a crash or a cut connection left behind.
const stagedMaxAge = time.Hour
