package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// searchCache keeps the encoded answers of content searches about one
// app's published content, the searches apps make again and again. An
// answer is served from the cache only while it is provably what the
// search would answer now:
//
//   - it was computed at the app's current content version (the content
//     projection changes the version with every change to the app's modules
//     or items, in whichever process applied it: the check reads it from
//     PostgreSQL at each request), and
//   - no scheduled publication or expiry of the app's items has taken
//     effect since (the first such instant is read when the answer is
//     computed).
//
// A search by a CMS user, whose answer depends on their rights, is never
// cached. Answers larger than maxCachedAnswer are not kept.
type searchCache struct {
	entries *lru.Cache[string, cachedAnswer]
	lookups *prometheus.CounterVec
}

type cachedAnswer struct {
	version int64 // the app's content version it was computed at
	until   int64 // epoch ms: the next scheduled state change
	body    []byte
}

const maxCachedAnswer = 256 << 10

// newSearchCache returns a cache of at most n answers (nil when n <= 0).
func newSearchCache(n int, m *Metrics) *searchCache {
	if n <= 0 {
		return nil
	}
	entries, err := lru.New[string, cachedAnswer](n)
	if err != nil {
		panic(err) // only for n <= 0
	}
	c := &searchCache{entries: entries, lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "cms_search_cache_lookups_total",
		Help: "Content searches looked up in the answer cache, by result (hit, miss, stale or bypass).",
	}, []string{"result"})}
	m.Register(c.lookups)
	return c
}

// cacheableApp is the app whose published content the scope reads, when
// that is all it reads (app and identified-user tokens).
func (sc readScope) cacheableApp() (string, bool) {
	if sc.all || !sc.publishedOnly || len(sc.apps) != 1 || len(sc.modules) > 0 || len(sc.items) > 0 {
		return "", false
	}
	return sc.apps[0], true
}

// searchKey identifies a search: the app and the exact request body.
func searchKey(app string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(app))
	h.Write([]byte{0})
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

func (c *searchCache) get(key string) (cachedAnswer, bool) { return c.entries.Get(key) }

func (c *searchCache) put(key string, a cachedAnswer) {
	if len(a.body) <= maxCachedAnswer {
		a.body = slices.Clip(a.body)
		c.entries.Add(key, a)
	}
}

func (c *searchCache) count(result string) { c.lookups.WithLabelValues(result).Inc() }

// noCache reports whether the client asks for a fresh answer
// (Cache-Control: no-cache or no-store); the answer is still kept.
func noCache(r *http.Request) bool {
	for _, v := range r.Header.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			if d = strings.ToLower(strings.TrimSpace(d)); d == "no-cache" || d == "no-store" {
				return true
			}
		}
	}
	return false
}

// writeCached writes an encoded JSON answer; X-Cache says how the cache
// lookup went: hit, miss, stale (an answer was kept, but the content
// changed or a scheduled date passed since) or bypass (the client asked
// for a fresh answer).
func writeCached(w http.ResponseWriter, body []byte, lookup string) {
	w.Header().Set("X-Cache", lookup)
	writeEncoded(w, body)
}

// writeEncoded writes an encoded JSON answer with status 200.
func writeEncoded(w http.ResponseWriter, body []byte) {
	writeBody(w, http.StatusOK, body)
}
