// Package media serves an app's media library: uploads, the library's
// lists and metadata, updateByUrl, and the files themselves with their
// image transforms.
//
// Resumable uploads (/api/media/uploads) speak the tus protocol through
// github.com/tus/tusd/v2 (MIT), the protocol's reference server used as a
// library: the clients apps and browsers use (tus-js-client, TUSKit,
// tus-android-client) work unchanged, on the local and the s3 storage
// alike, where S3 multipart uploads would tie clients to S3 (see
// docs/media-uploads.md). golang.org/x/exp comes with it: tusd logs
// through its slog.
package media

import (
	"context"
	_ "embed"
	"io"
	"strings"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
	cmdmedia "github.com/halocms/halocms/commands/media"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// Commands change the library.
type Commands interface {
	Authorize(ctx context.Context, p rights.Permission, app string) error
	Upload(ctx context.Context, app string, n media.New, r io.Reader) (media.File, error)
	Replace(ctx context.Context, id string, r io.Reader) (media.File, error)
	Change(ctx context.Context, id string, c cmdmedia.Change) (media.File, error)
	Delete(ctx context.Context, id string, force bool) error
	SaveURL(ctx context.Context, b cmdmedia.ByURL) (media.File, bool, error)
	DeleteURL(ctx context.Context, app, url string, force bool) (media.File, error)
	SetAccess(ctx context.Context, app string, signed bool) error
	MaxBytes() int64
}

// Queries read the library.
type Queries interface {
	List(ctx context.Context, req rmmedia.ListRequest) ([]rmmedia.File, int, error)
	File(ctx context.Context, id string) (rmmedia.File, error)
	Facets(ctx context.Context, app string, malformed error) (rmmedia.Facets, error)
	Access(ctx context.Context, app string, malformed error) (bool, error)
}

// Deps are the services the endpoints call. All but Uploads are
// required; without Uploads, the resumable upload endpoints answer 404.
type Deps struct {
	Commands Commands
	Queries  Queries
	Files    *Server  // serves the files (see Server)
	Uploads  *Uploads // resumable (tus) uploads (see NewUploads)
}

// API serves the media endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the media endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil || d.Files == nil {
		panic("media.New: nil dependency")
	}
	d.Files.kit = kit
	api := &API{Deps: d, kit: kit}
	if d.Uploads != nil {
		d.Uploads.api = api
	}
	return api
}

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI is the part of the OpenAPI document that describes these
// endpoints (see httpapi.OpenAPIDocument).
func (s *API) OpenAPI() []byte { return openapiYAML }

// Routes registers the library's endpoints, behind authentication.
func (s *API) Routes(r chi.Router) {
	r.Get("/api/media/file", s.kit.Handle(s.list))
	r.Post("/api/media/file", s.kit.Handle(s.upload))
	r.Post("/api/media/file/updateByUrl", s.kit.Handle(s.updateByURL))
	r.Get("/api/media/file/{id}", s.kit.Handle(s.get))
	r.Patch("/api/media/file/{id}", s.kit.Handle(s.change))
	r.Delete("/api/media/file/{id}", s.kit.Handle(s.delete))
	r.Put("/api/media/file/{id}/content", s.kit.Handle(s.replace))
	r.Get("/api/media/file/{id}/transform", s.kit.Handle(s.transform))
	r.Get("/api/media/facets", s.kit.Handle(s.facets))
	r.Get("/api/media/settings", s.kit.Handle(s.settings))
	r.Put("/api/media/settings", s.kit.Handle(s.setSettings))
	s.uploadRoutes(r)
}

// OptionalAuthRoutes registers the file server: public files need no
// token, the others a signed URL or a token that may read them.
func (s *API) OptionalAuthRoutes(r chi.Router) {
	r.Get("/media/{id}", s.Files.ServeHTTP)
	r.Get("/media/{id}/*", s.Files.ServeHTTP)
	r.Head("/media/{id}", s.Files.ServeHTTP)
	r.Head("/media/{id}/*", s.Files.ServeHTTP)
}

// multipartSlack is what a multipart body may hold beside the file: the
// other fields and the parts' headers.
const multipartSlack = 1 << 20

// BodyLimit lets uploads be as large as the upload limit: multipart ones,
// and the chunks of resumable ones (a creation may carry the first).
func (s *API) BodyLimit(path string) (int64, bool) {
	p := strings.TrimSuffix(path, "/")
	if p == "/api/media/file" || (strings.HasPrefix(p, "/api/media/file/") && strings.HasSuffix(p, "/content")) ||
		p == uploadsPath || strings.HasPrefix(p, uploadsPath+"/") {
		return s.Commands.MaxBytes() + multipartSlack, true
	}
	return 0, false
}
