package media

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// SignedURLTTL is how long the URLs the API answers for a signed app's
// files stay valid.
const SignedURLTTL = 24 * time.Hour

// signature of a path valid until exp (unix seconds).
func (s *Server) signature(path string, exp int64) string {
	m := hmac.New(sha256.New, s.cfg.SigningKey)
	m.Write([]byte(path + "\n" + strconv.FormatInt(exp, 10)))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// sign appends exp and sig to a URL of this server (Base + path).
func (s *Server) sign(u string, now time.Time) string {
	exp := now.Add(SignedURLTTL).Unix()
	path := u[len(s.cfg.URLs.Base):]
	return u + "?expires=" + strconv.FormatInt(exp, 10) + "&signature=" + s.signature(path, exp)
}

// signedOK reports whether the request carries a valid, unexpired
// signature of its path.
func (s *Server) signedOK(r *http.Request) bool {
	q := r.URL.Query()
	sig, expS := q.Get("signature"), q.Get("expires")
	if sig == "" || expS == "" {
		return false
	}
	exp, err := strconv.ParseInt(expS, 10, 64)
	if err != nil || time.Now().Unix() > exp {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(s.signature(r.URL.EscapedPath(), exp)))
}

// signedApp reports whether app's media needs signed URLs or tokens,
// from memory for RefTTL.
func (s *Server) signedApp(ctx context.Context, app string) (bool, error) {
	if v, ok := s.signedCache.Get(app); ok {
		return v, nil
	}
	v, err := s.access.Signed(ctx, app)
	if err == nil {
		s.signedCache.Add(app, v)
	}
	return v, err
}

// allowed decides who may read a file: anyone when its app's media is
// public (public true); otherwise a valid signed URL, a CMS user who may
// read the app, or the app's own tokens (app and identified users) for a
// file a published item references.
func (s *Server) allowed(r *http.Request, ref rmmedia.Ref) (public bool, err error) {
	ctx := r.Context()
	signed, err := s.signedApp(ctx, ref.App)
	if err != nil || !signed {
		return err == nil, err
	}
	if s.signedOK(r) {
		return false, nil
	}
	a := access.From(ctx)
	switch a.Kind {
	case access.Anonymous:
		return false, fault.New(fault.Unauthenticated, "this app's media needs a signed URL or a token")
	case access.User, access.System:
		return false, s.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: ref.App})
	}
	if a.ClientApp() == ref.App {
		ok, err := s.refs.Published(ctx, ref.App, ref.ID)
		if err != nil || ok {
			return false, err
		}
	}
	return false, fault.Forbiddenf("this token may read only the media that the app's published content uses")
}

// fileJSON is a file on the wire, with its URLs (signed for an app whose
// media is not public). single: with what uses it.
func (s *Server) fileJSON(ctx context.Context, f rmmedia.File, single bool) fileJSON {
	out := fileJSON{ID: f.ID, App: f.App, Name: f.Name, Folder: f.Folder, Tags: f.Tags, Alt: orEmpty(f.Alt), Caption: orEmpty(f.Caption),
		Kind: f.Kind, MIME: f.MIME, Size: f.Size, SHA256: f.SHA256, Width: f.Width, Height: f.Height, DurationMS: f.DurationMS,
		Version: f.Version, External: f.URL != "", UploadedBy: f.UploadedBy, UploadedAt: f.UploadedAt, UpdatedAt: f.UpdatedAt, Uses: f.Uses}
	if out.Tags == nil {
		out.Tags = []string{}
	}
	if single {
		out.UsedIn = usesJSON(f.UsedIn)
	}
	if f.URL != "" {
		out.URL = f.URL
		return out
	}
	u := s.cfg.URLs
	out.URL = u.Stable(f.ID, f.Name)
	out.ContentURL = u.Version(f.ID, f.SHA256, f.Name)
	if f.Kind == "image" && f.MIME != "image/svg+xml" {
		out.ThumbnailURL = u.Derived(f.ID, f.SHA256, "t_thumb", f.Name)
	}
	if signed, err := s.signedApp(ctx, f.App); err != nil || signed {
		// Unknown (the database failed a moment): signed URLs work either way.
		now := time.Now()
		out.URL, out.ContentURL = s.sign(out.URL, now), s.sign(out.ContentURL, now)
		if out.ThumbnailURL != "" {
			out.ThumbnailURL = s.sign(out.ThumbnailURL, now)
		}
	}
	return out
}

// transformURL is the signed URL of the transform t of one version of f
// (and, for a signed app, signed for access too).
func (s *Server) transformURL(ctx context.Context, f rmmedia.File, t media.Transform) string {
	path := "/media/" + f.ID + "/" + f.SHA256 + "/" + f.Name // as the server reads it (unescaped)
	q := url.Values{}
	for k, v := range map[string]string{"w": itoa(t.Width), "h": itoa(t.Height), "fit": string(t.Fit), "g": string(t.Gravity),
		"q": itoa(t.Quality), "fm": string(t.Format)} {
		if v != "" {
			q.Set(k, v)
		}
	}
	q.Set("sig", s.transforms.Sign(path, t))
	u := s.cfg.URLs.Version(f.ID, f.SHA256, f.Name)
	if signed, err := s.signedApp(ctx, f.App); err != nil || signed {
		u = s.sign(u, time.Now())
		return u + "&" + q.Encode()
	}
	return u + "?" + q.Encode()
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
