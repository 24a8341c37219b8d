// Package web serves the CMS front end: the single-page app built by Vite
// from the sources beside this file (src/, see package.json) into embedded/,
// embedded in the binary. Paths under /cms/ that are not files get
// index.html (the app routes them); files under /cms/assets/ are
// content-hashed and cached for a year. Every answer carries a strict
// Content-Security-Policy. A binary built before `make build` built the
// front end serves a page that says how to build it.
package web

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed all:embedded
var embedded embed.FS

// keeper is the committed file that keeps embedded/ when the front end
// is not built; it is not part of the app and is not served.
const keeper = "README.md"

// Prefix is where the app is served.
const Prefix = "/cms/"

// CSP is the Content-Security-Policy of every page: scripts, fonts and
// connections from this origin only, no inline script, no framing.
// Styles allow 'unsafe-inline' because the component library sets style
// attributes (they cannot run script). Images and media may come from
// https URLs, since URL fields point at files kept elsewhere.
const CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; " +
	"img-src 'self' data: blob: https:; media-src 'self' https:; font-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// Handler serves the app under Prefix.
func Handler() http.Handler {
	files, _ := fs.Sub(embedded, "embedded")
	return handlerOf(files)
}

// handlerOf serves the app built into files (index.html and assets/ at
// its root); without index.html, the page that says how to build it.
func handlerOf(files fs.FS) http.Handler {
	built := true
	if _, err := fs.Stat(files, "index.html"); err != nil {
		built = false
	}
	return &handler{files: files, built: built, static: http.FileServerFS(files)}
}

type handler struct {
	files  fs.FS
	built  bool
	static http.Handler
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	secure(w.Header())
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if !h.built {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte(notBuilt))
		return
	}
	name := strings.TrimPrefix(path.Clean("/"+strings.TrimPrefix(r.URL.Path, Prefix)), "/")
	if name != "" && name != "index.html" {
		if st, err := fs.Stat(h.files, name); err == nil && !st.IsDir() && name != keeper {
			if strings.HasPrefix(name, "assets/") {
				w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
			} else {
				w.Header().Set("Cache-Control", "no-cache")
			}
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + name
			h.static.ServeHTTP(w, r2)
			return
		}
		if strings.HasPrefix(name, "assets/") || path.Ext(name) != "" {
			http.NotFound(w, r) // a missing file is not a route of the app
			return
		}
	}
	// The app's routes: index.html, never cached, so a new build is picked up.
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	http.ServeFileFS(w, r, h.files, "index.html")
}

// secure sets the headers every page of the CMS carries.
func secure(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
}

const notBuilt = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>HALO CMS: front end not built</title></head>
<body style="font-family:sans-serif;max-width:40em;margin:4em auto">
<h1>The CMS front end is not built</h1>
<p>This binary was built without the web CMS. Build it with <code>make build</code>
(it runs <code>npm ci</code> and <code>npm run build</code> in <code>adapters/web</code>, then
<code>go build</code>), or run <code>make run</code>.</p>
<p>The API is served all the same: see <a href="/docs">/docs</a>.</p>
</body></html>
`
