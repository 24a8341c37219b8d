package media

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"golang.org/x/sync/singleflight"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// Storage is the part of the media storage port the file server uses.
type Storage interface {
	Open(ctx context.Context, key string) (io.ReadSeekCloser, media.ObjectInfo, error)
	Put(ctx context.Context, key string, r io.Reader) error
}

// Refs reads what the server needs of a file, and whether a published
// item of an app references it.
type Refs interface {
	Ref(ctx context.Context, id string) (rmmedia.Ref, error)
	Published(ctx context.Context, app, id string) (bool, error)
}

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
}

// Transforms reads transform requests, bounds them and computes derived
// images (adapters/imaging).
type Transforms interface {
	FromQuery(q url.Values) (media.Transform, error)
	FromSegment(seg string) (media.Transform, bool, error)
	// Allow refuses a transform the caller may not ask for (not a preset,
	// not signed, not an allowed size): path is the request's path.
	Allow(path string, t media.Transform, q url.Values) error
	Transform(ctx context.Context, src io.Reader, t media.Transform) ([]byte, string, error)
	// Sign is the signature (`sig`) of the transform t of the file at
	// path, which Allow accepts.
	Sign(path string, t media.Transform) string
}

// Access tells whose files need a token or a signed URL (an app's media
// is public unless its settings say signed).
type Access interface {
	Signed(ctx context.Context, app string) (bool, error)
}

// ServerConfig configures the file server.
type ServerConfig struct {
	URLs URLs
	// SigningKey signs the URLs of apps whose media is not public.
	SigningKey []byte
	// DerivedCacheBytes bounds the derived images kept in memory (default
	// 64 MiB); each is also kept in storage.
	DerivedCacheBytes int64
	// RefTTL is how long a file's Ref is kept in memory (default 2 s): a
	// replaced file's stable URL serves the old bytes at most that long.
	RefTTL time.Duration
}

// Server serves the files: originals with ETag, Range and caching, and
// derived images, each computed once and kept.
type Server struct {
	cfg         ServerConfig
	storage     Storage
	refs        Refs
	authz       Authorizer
	transforms  Transforms
	access      Access
	kit         *httpapi.Kit
	refCache    *expirable.LRU[string, rmmedia.Ref]
	signedCache *expirable.LRU[string, bool]
	derived     *lru.Cache[string, derivedImage]
	flight      singleflight.Group
}

// derivedImage is a derived image kept in memory.
type derivedImage struct {
	body []byte
	mime string
	at   time.Time
}

// NewServer returns the file server; every dependency is required.
func NewServer(storage Storage, refs Refs, authz Authorizer, transforms Transforms, acc Access, cfg ServerConfig) *Server {
	if storage == nil || refs == nil || authz == nil || transforms == nil || acc == nil {
		panic("media.NewServer: nil dependency")
	}
	if cfg.DerivedCacheBytes <= 0 {
		cfg.DerivedCacheBytes = 64 << 20
	}
	if cfg.RefTTL <= 0 {
		cfg.RefTTL = 2 * time.Second
	}
	// Entries are counted, not weighed: a thumbnail is some 10 KiB.
	derived, _ := lru.New[string, derivedImage](int(cfg.DerivedCacheBytes / (32 << 10)))
	return &Server{cfg: cfg, storage: storage, refs: refs, authz: authz, transforms: transforms, access: acc,
		refCache:    expirable.NewLRU[string, rmmedia.Ref](100_000, nil, cfg.RefTTL),
		signedCache: expirable.NewLRU[string, bool](10_000, nil, cfg.RefTTL), derived: derived}
}

var (
	shaSegment = regexp.MustCompile(`^[0-9a-f]{64}$`)
	idPattern  = regexp.MustCompile(`^[0-9a-f]{24}$`)
)

// request is a file request, parsed.
type request struct {
	ref       rmmedia.Ref
	sha       string // the version asked for
	addressed bool   // by its content (immutable)
	transform media.Transform
	segment   bool // the transform came as a path segment
}

func (s *Server) ref(ctx context.Context, id string) (rmmedia.Ref, error) {
	if r, ok := s.refCache.Get(id); ok {
		return r, nil
	}
	r, err := s.refs.Ref(ctx, id)
	if err == nil {
		s.refCache.Add(id, r)
	}
	return r, err
}

// parse reads the rest of /media/{id}[/{sha}][/{transform}/{name}] and
// the query. A transform in the path comes before a name (as in the URLs
// the API answers), so a file named "t_shirt" or "w_draft" is a name.
func (s *Server) parse(r *http.Request, ref rmmedia.Ref) (request, error) {
	req := request{ref: ref, sha: ref.SHA256}
	segs := strings.Split(strings.Trim(chi.URLParam(r, "*"), "/"), "/")
	if len(segs) > 0 && shaSegment.MatchString(segs[0]) {
		if !slices.Contains(ref.SHAs, segs[0]) {
			// A version newer than the record kept in memory (a
			// replacement a moment ago): read the record again.
			fresh, err := s.refs.Ref(r.Context(), ref.ID)
			if err != nil || !slices.Contains(fresh.SHAs, segs[0]) {
				return request{}, fault.NotFoundf("media file %s has no version %s", ref.ID, segs[0])
			}
			s.refCache.Add(ref.ID, fresh)
			req.ref = fresh
		}
		req.sha, req.addressed, segs = segs[0], true, segs[1:]
	}
	switch {
	case len(segs) > 2:
		return request{}, fault.NotFoundf("no such media path")
	case len(segs) == 2:
		t, ok, err := s.transforms.FromSegment(segs[0])
		if err != nil {
			return request{}, err
		}
		if !ok {
			return request{}, fault.NotFoundf("no such media path: %q is not a transform", segs[0])
		}
		req.transform, req.segment = t, true
	}
	t, err := s.transforms.FromQuery(r.URL.Query())
	if err != nil {
		return request{}, err
	}
	if !t.IsZero() {
		if req.segment {
			return request{}, fault.Invalidf("give a transform in the path or in the query, not both")
		}
		req.transform = t
	}
	return req, nil
}

// ServeHTTP serves a file (see URLs).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := s.serve(w, r); err != nil {
		s.kit.Fail(w, r, err)
	}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	if !idPattern.MatchString(id) {
		return fault.NotFoundf("no media file %q", id)
	}
	ref, err := s.ref(r.Context(), id)
	if err != nil {
		return err
	}
	// Who may read the file comes first: nothing about a file the caller
	// may not read (which versions it has) is told.
	public, err := s.allowed(r, ref)
	if err != nil {
		return err
	}
	req, err := s.parse(r, ref)
	if err != nil {
		return err
	}
	if req.ref.URL != "" {
		// A reference to a file kept elsewhere: its bytes are not here.
		http.Redirect(w, r, req.ref.URL, http.StatusFound)
		return nil
	}
	cache := "private, max-age=60, must-revalidate"
	if req.addressed {
		cache = "private, max-age=31536000, immutable"
	}
	if public {
		cache = strings.Replace(cache, "private", "public", 1)
	}
	h := w.Header()
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	if !req.transform.IsZero() {
		return s.serveDerived(w, r, req)
	}
	rc, info, err := s.storage.Open(r.Context(), media.BlobKey(req.sha))
	if errors.Is(err, fs.ErrNotExist) {
		return fault.NotFoundf("the bytes of media file %s are missing from storage", req.ref.ID)
	}
	if err != nil {
		return err
	}
	defer rc.Close()
	safety(h, req.ref)
	h.Set("ETag", `"`+req.sha+`"`)
	h.Set("Content-Type", req.ref.MIME)
	http.ServeContent(w, r, "", info.ModTime, rc)
	return nil
}

// safety keeps a file from running as a page of this origin: only media
// and PDF are shown inline; everything else (SVG, HTML, text) is an
// attachment, sandboxed.
func safety(h http.Header, ref rmmedia.Ref) {
	inline := ref.MIME == "application/pdf" || (ref.Kind != string(media.Document) && ref.MIME != "image/svg+xml")
	if !inline {
		h.Set("Content-Disposition", `attachment; filename*=UTF-8''`+url.PathEscape(ref.Name))
	}
	if ref.MIME != "application/pdf" {
		h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
	}
}

// serveDerived serves a transform of the version asked for: from memory,
// from storage, or computed once (concurrent requests for the same image
// wait for one computation) and kept in both.
func (s *Server) serveDerived(w http.ResponseWriter, r *http.Request, req request) error {
	if err := req.transform.Validate(media.DefaultBounds); err != nil {
		return err
	}
	if err := s.transforms.Allow(r.URL.Path, req.transform, r.URL.Query()); err != nil {
		return err
	}
	if req.ref.Kind != string(media.Image) || req.ref.MIME == "image/svg+xml" {
		return fault.Invalidf("only raster images can be transformed; this file is %s", req.ref.MIME)
	}
	req.transform = req.transform.Resolve(req.ref.MIME)
	key := media.DerivedKey(req.sha, req.transform.Canonical())
	img, ok := s.derived.Get(key)
	if !ok {
		v, err, _ := s.flight.Do(key, func() (any, error) { return s.derive(r.Context(), req, key) })
		if err != nil {
			return err
		}
		img = v.(derivedImage)
	}
	h := w.Header()
	h.Set("ETag", `"`+req.sha+"-"+req.transform.Canonical()+`"`)
	h.Set("Content-Type", img.mime)
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	http.ServeContent(w, r, "", img.at, bytes.NewReader(img.body))
	return nil
}

func (s *Server) derive(ctx context.Context, req request, key string) (derivedImage, error) {
	// Another request's cancellation must not fail this one's waiters.
	ctx = context.WithoutCancel(ctx)
	if rc, info, err := s.storage.Open(ctx, key); err == nil {
		defer rc.Close()
		body, err := io.ReadAll(rc)
		if err != nil {
			return derivedImage{}, err
		}
		img := derivedImage{body: body, mime: mimeOfFormat(req.transform.Canonical()), at: info.ModTime}
		s.derived.Add(key, img)
		return img, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return derivedImage{}, err
	}
	src, _, err := s.storage.Open(ctx, media.BlobKey(req.sha))
	if err != nil {
		return derivedImage{}, err
	}
	defer src.Close()
	body, mime, err := s.transforms.Transform(ctx, src, req.transform)
	if err != nil {
		return derivedImage{}, err
	}
	if err := s.storage.Put(ctx, key, bytes.NewReader(body)); err != nil {
		return derivedImage{}, err
	}
	img := derivedImage{body: body, mime: mime, at: time.Now()}
	s.derived.Add(key, img)
	return img, nil
}

// mimeOfFormat is the type of a derived image, from its canonical spec's
// extension.
func mimeOfFormat(canonical string) string {
	switch canonical[strings.LastIndexByte(canonical, '.')+1:] {
	case "webp":
		return "image/webp"
	case "avif":
		return "image/avif"
	case "png":
		return "image/png"
	case "gif":
		return "image/gif"
	}
	return "image/jpeg"
}
