package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"
)

const testIndex = `<!doctype html><html><head><script type="module" src="/cms/assets/index-abc123.js"></script></head><body><div id="root"></div></body></html>`

// built is a front end as Vite leaves it in embedded/.
func built() fstest.MapFS {
	return fstest.MapFS{
		"index.html":              {Data: []byte(testIndex)},
		"assets/index-abc123.js":  {Data: []byte(`console.log("app")`)},
		"assets/index-def456.css": {Data: []byte(`body{margin:0}`)},
		"favicon.svg":             {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"README.md":               {Data: []byte(`# adapters/web/embedded`)},
	}
}

func serve(h http.Handler, method, path string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(method, path, nil))
	return w
}

// expectSecure asserts the headers every answer of the CMS carries.
func expectSecure(t *testing.T, w *httptest.ResponseRecorder, what string) {
	t.Helper()
	h := w.Header()
	for k, want := range map[string]string{"Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff",
		"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer", "Cross-Origin-Opener-Policy": "same-origin"} {
		if got := h.Get(k); got != want {
			t.Errorf("%s: %s %q, want %q", what, k, got, want)
		}
	}
}

func TestAppRoutesGetIndex(t *testing.T) {
	h := handlerOf(built())
	for _, p := range []string{"/cms/", "/cms", "/cms/items", "/cms/apps/6b0b4460/modules/6b0b4461/items/6b0b4462",
		"/cms/assets", "/cms/sign-in?next=%2Fcms%2Fitems"} {
		w := serve(h, http.MethodGet, p)
		if w.Code != http.StatusOK || w.Body.String() != testIndex {
			t.Errorf("GET %s: %d %q, want index.html", p, w.Code, w.Body.String())
		}
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
			t.Errorf("GET %s: Content-Type %q", p, ct)
		}
		if cc := w.Header().Get("Cache-Control"); cc != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache (a new build is picked up)", p, cc)
		}
		expectSecure(t, w, "GET "+p)
	}
	// index.html by name goes to the app's root, as net/http does.
	if w := serve(h, http.MethodGet, "/cms/index.html"); w.Code != http.StatusMovedPermanently || w.Header().Get("Location") != "./" {
		t.Errorf("GET /cms/index.html: %d, Location %q; want 301 to ./", w.Code, w.Header().Get("Location"))
	}
	// HEAD as GET, without a body.
	w := serve(h, http.MethodHead, "/cms/items")
	if w.Code != http.StatusOK || w.Body.Len() != 0 {
		t.Errorf("HEAD /cms/items: %d, %d bytes", w.Code, w.Body.Len())
	}
	expectSecure(t, w, "HEAD")
}

func TestAssets(t *testing.T) {
	h := handlerOf(built())
	for p, ct := range map[string]string{"/cms/assets/index-abc123.js": "javascript", "/cms/assets/index-def456.css": "text/css"} {
		w := serve(h, http.MethodGet, p)
		if w.Code != http.StatusOK || w.Body.String() != string(built()[strings.TrimPrefix(p, "/cms/")].Data) {
			t.Errorf("GET %s: %d %q", p, w.Code, w.Body.String())
		}
		if cc := w.Header().Get("Cache-Control"); cc != "public, max-age=31536000, immutable" {
			t.Errorf("GET %s: Cache-Control %q, want a year, immutable (the names are content-hashed)", p, cc)
		}
		if got := w.Header().Get("Content-Type"); !strings.Contains(got, ct) {
			t.Errorf("GET %s: Content-Type %q, want %s", p, got, ct)
		}
		expectSecure(t, w, "GET "+p)
	}
	// A file outside assets/ is not content-hashed: revalidated.
	w := serve(h, http.MethodGet, "/cms/favicon.svg")
	if w.Code != http.StatusOK || w.Header().Get("Cache-Control") != "no-cache" {
		t.Errorf("GET /cms/favicon.svg: %d, Cache-Control %q", w.Code, w.Header().Get("Cache-Control"))
	}
}

func TestMissingFilesAre404(t *testing.T) {
	h := handlerOf(built())
	// A missing file is not a route of the app: no index.html for it
	// (an old build's asset, a typo), so the browser sees the failure;
	// nor is the README that keeps the folder.
	for _, p := range []string{"/cms/assets/index-old999.js", "/cms/assets/nothing", "/cms/logo.png", "/cms/items/x.json",
		"/cms/../go.mod", "/cms/%2e%2e/web.go", "/cms/README.md"} {
		w := serve(h, http.MethodGet, p)
		if w.Code != http.StatusNotFound {
			t.Errorf("GET %s: %d %q, want 404", p, w.Code, w.Body.String())
		}
		if strings.Contains(w.Body.String(), testIndex) {
			t.Errorf("GET %s: answered index.html", p)
		}
		expectSecure(t, w, "GET "+p)
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	for name, h := range map[string]http.Handler{"built": handlerOf(built()), "not built": handlerOf(fstest.MapFS{})} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch} {
			for _, p := range []string{"/cms/", "/cms/items", "/cms/assets/index-abc123.js"} {
				w := serve(h, m, p)
				if w.Code != http.StatusMethodNotAllowed || w.Header().Get("Allow") != "GET, HEAD" {
					t.Errorf("%s: %s %s: %d, Allow %q; want 405, Allow GET, HEAD", name, m, p, w.Code, w.Header().Get("Allow"))
				}
				expectSecure(t, w, name+" "+m+" "+p)
			}
		}
	}
}

func TestNotBuilt(t *testing.T) {
	// A binary built without the front end: embedded/ holds only its README.
	h := handlerOf(fstest.MapFS{"README.md": {Data: []byte(`# adapters/web/embedded`)}})
	for _, p := range []string{"/cms/", "/cms/items", "/cms/assets/index-abc123.js"} {
		w := serve(h, http.MethodGet, p)
		if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "make build") {
			t.Errorf("GET %s: %d %q, want the page that says how to build the front end", p, w.Code, w.Body.String())
		}
		if w.Header().Get("Cache-Control") != "no-store" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("GET %s: Cache-Control %q, Content-Type %q", p, w.Header().Get("Cache-Control"), w.Header().Get("Content-Type"))
		}
		if strings.Contains(w.Body.String(), "<script") {
			t.Errorf("GET %s: the page has a script, which the CSP would refuse", p)
		}
		expectSecure(t, w, "GET "+p)
	}
}

// The embedded build serves either the app or the page that says how to
// build it, whichever this checkout holds.
func TestEmbedded(t *testing.T) {
	w := serve(Handler(), http.MethodGet, "/cms/")
	if w.Code != http.StatusOK || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Errorf("GET /cms/: %d, Content-Type %q", w.Code, w.Header().Get("Content-Type"))
	}
	expectSecure(t, w, "GET /cms/")
}
