package content

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"

	lru "github.com/hashicorp/golang-lru/v2"
)

// answerCache keeps the encoded answers of searches about one app's
// published content, the searches apps make again and again. An answer is
// served from the cache only while it is provably what the search would
// answer now:
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
type answerCache struct {
	entries *lru.Cache[string, cachedAnswer]
}

type cachedAnswer struct {
	version int64 // the app's content version it was computed at
	until   int64 // epoch ms: the next scheduled state change
	body    []byte
}

const maxCachedAnswer = 256 << 10

// newAnswerCache returns a cache of at most n answers (nil when n <= 0).
func newAnswerCache(n int) *answerCache {
	if n <= 0 {
		return nil
	}
	entries, err := lru.New[string, cachedAnswer](n)
	if err != nil {
		panic(err) // only for n <= 0
	}
	return &answerCache{entries: entries}
}

// answerKey identifies a search: the app and the exact request.
func answerKey(app string, request []byte) string {
	h := sha256.New()
	h.Write([]byte(app))
	h.Write([]byte{0})
	h.Write(request)
	return hex.EncodeToString(h.Sum(nil))
}

func (c *answerCache) get(key string) (cachedAnswer, bool) { return c.entries.Get(key) }

func (c *answerCache) put(key string, a cachedAnswer) {
	if len(a.body) <= maxCachedAnswer {
		a.body = slices.Clip(a.body)
		c.entries.Add(key, a)
	}
}
