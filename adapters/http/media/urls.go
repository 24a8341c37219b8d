package media

import (
	"net/url"
	"strings"

	"github.com/halocms/halocms/domain/media"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// URLs of a file (Base is the server's public address, e.g.
// "https://cms.example.com"):
//
//	Base/media/{id}/{name}                  the current version (what content fields hold)
//	Base/media/{id}/{sha256}/{name}         one version, content-addressed: cached forever
//	Base/media/{id}[/{sha256}]/{transform}/{name}, or ?w=&h=&fit=…   a derived image
//
// The name is there for people and downloads; the server ignores it.
type URLs struct{ Base string }

// Stable is the file's URL that always serves its current version.
func (u URLs) Stable(id, name string) string {
	return u.Base + "/media/" + id + "/" + url.PathEscape(name)
}

// Version is the content-addressed URL of one version of the bytes.
func (u URLs) Version(id, sha, name string) string {
	return u.Base + "/media/" + id + "/" + sha + "/" + url.PathEscape(name)
}

// Derived is the URL of a transform of one version (a path segment, as
// Cloudinary writes them: "t_thumb", "w_400,c_fill").
func (u URLs) Derived(id, sha, segment, name string) string {
	return u.Base + "/media/" + id + "/" + sha + "/" + segment + "/" + url.PathEscape(name)
}

// FileID returns the file a URL of this server's media names: one under
// Base, whatever follows the id (a version, a transform, a name, a query:
// a signed URL too).
func (u URLs) FileID(raw string) (string, bool) {
	rest, ok := strings.CutPrefix(raw, u.Base)
	if !ok || (rest != "" && rest[0] != '/') {
		return "", false
	}
	return media.IDOfPath(rest)
}

// fileJSON is a file on the wire.
type fileJSON struct {
	ID           string            `json:"id"`
	App          string            `json:"app"`
	Name         string            `json:"name"`
	Folder       string            `json:"folder"`
	Tags         []string          `json:"tags"`
	Alt          map[string]string `json:"alt"`
	Caption      map[string]string `json:"caption"`
	Kind         string            `json:"kind"`
	MIME         string            `json:"mime"`
	Size         int64             `json:"size"`
	SHA256       string            `json:"sha256,omitempty"`
	Width        int               `json:"width,omitempty"`
	Height       int               `json:"height,omitempty"`
	DurationMS   int64             `json:"durationMs,omitempty"`
	Version      int               `json:"version"`
	External     bool              `json:"external"`
	URL          string            `json:"url"`
	ContentURL   string            `json:"contentUrl,omitempty"`
	ThumbnailURL string            `json:"thumbnailUrl,omitempty"`
	UploadedBy   string            `json:"uploadedBy,omitempty"`
	UploadedAt   int64             `json:"uploadedAt"`
	UpdatedAt    int64             `json:"updatedAt,omitempty"`
	Uses         int               `json:"uses"`
	UsedIn       []useJSON         `json:"usedIn,omitempty"`
	Deleted      bool              `json:"deleted,omitempty"`
}

type useJSON struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Module    string `json:"module,omitempty"`
	Published bool   `json:"published"`
}

func usesJSON(uses []rmmedia.Use) []useJSON {
	out := make([]useJSON, len(uses))
	for i, u := range uses {
		out[i] = useJSON{Type: u.Type, ID: u.ID, Name: u.Name, Module: u.Module, Published: u.Published}
	}
	return out
}

func orEmpty[M ~map[string]string](m M) M {
	if m == nil {
		return M{}
	}
	return m
}
