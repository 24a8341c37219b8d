package content_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	projcontent "github.com/halocms/halocms/projections/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// TestSearchDifferential compares Search with a reference evaluator, written
// in Go from the documented semantics (the README's "Search syntax", §5.2 of
// the wire reference, the doc comments of Query, Expr and the compiler),
// over a few hundred random items of three modules and random searches:
// searchValues and metaSearch trees, relatedTo, segment tags, sorts,
// locales, pagination with and without a total, as an admin and as an app
// token (published items only, with and without the module as read: the
// one-statement path) and by a user with rights on some modules and items,
// of one module, two, or all. Each seed is deterministic; a failure prints
// the query and the items that differ.
//
// Cases the documentation leaves open are not compared (see "AMBIGUOUS"):
// a search that meets one is skipped and counted in the log.
//
// DIFF_SEEDS=n runs n other seeds instead (to look further); DIFF_SLOW=1
// logs the searches that took more than 100 ms.
func TestSearchDifferential(t *testing.T) {
	t.Parallel()
	seeds := []uint64{1, 2, 3}
	if n, err := strconv.Atoi(os.Getenv("DIFF_SEEDS")); err == nil {
		seeds = nil
		for i := range n {
			seeds = append(seeds, uint64(100+i))
		}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			w := newDiffWorld(t, seed)
			built := time.Since(start)
			w.run(100)
			t.Logf("built in %v, searched in %v", built, time.Since(start)-built)
		})
	}
}

// ---- the world: modules and items ----

type dModule struct {
	id, app string
	fields  []content.Field
	defs    map[string]content.Field
	read    rmcontent.Module // as the store reads it (slots, revision)
}

type dItem struct {
	rmcontent.Item                // the attributes as stored (dates, authors)
	vals           map[string]any // the values as written
	tags           []content.Tag
}

type diffWorld struct {
	t        *testing.T
	f        *fixture
	mem      *rmcontent.Store // over the same tables, answering from its in-memory index where it can
	rng      *rand.Rand
	mods     []*dModule
	byID     map[string]*dModule
	items    []*dItem
	ids      []string
	texts    map[string][]string      // field name → texts its items hold
	nums     map[string][]json.Number // field name → numbers its items hold
	attrs    map[string][]any         // meta attribute → values items hold
	bytewise bool                     // the database orders texts by code point (C, C.UTF-8)
	stats    map[string]int
	failures int
}

func choiceField(name, typ string, vals ...string) content.Field {
	f := field(name, typ)
	f.Rules.Values = vals
	return f
}

var diffKinds = []string{"Red", "red", "RED", "Blue", "grün", "GRÜN", "x_y", "50%"}
var diffCats = []string{"a", "B", "b", "ß", "Σ", "σ", "long category name"}

func diffModules() []*dModule {
	headline := field("headline", "01")
	headline.Localized = true
	mA := []content.Field{
		field("title", "01"), field("price", "02"), field("body", "12"), field("active", "08"), field("when", "06"),
		field("color", "09"), choiceField("kind", "18", diffKinds...), field("site", "03"), field("author", "11"),
		field("qty", "02"), field("clock", "07"),
		// beyond the slots: content_keys
		field("subtitle", "01"), field("score", "02"), field("flag", "08"), field("day", "06"), field("ref2", "11"),
		field("clip", "16"), field("release date", "06"), // a name with a space (§4.3)
		choiceField("cats", "17", diffCats...), field("related", "10"), field("label", "15"), headline,
		field("list", "14"), field("meta", "13"),
	}
	mB := []content.Field{
		field("subtitle", "01"), field("score", "02"), field("title", "01"),
		field("price", "01"), // a text here, a number in mA and mC
		choiceField("cats", "17", diffCats...), field("label", "15"), field("flag", "08"), field("body", "12"),
		field("day", "06"), field("author", "11"), choiceField("kind", "18", diffKinds...),
	}
	mC := []content.Field{field("title", "01"), field("price", "02"), field("headline", "01")} // headline: localized in mA
	// No typed columns at all.
	mD := []content.Field{choiceField("cats", "17", diffCats...), field("label", "15"), field("body", "12"), field("meta", "13")}
	var out []*dModule
	for _, m := range []struct {
		id, app string
		fields  []content.Field
	}{{"mA", "a1", mA}, {"mB", "a1", mB}, {"mC", "a2", mC}, {"mD", "a1", mD}} {
		d := &dModule{id: m.id, app: m.app, fields: m.fields, defs: map[string]content.Field{}}
		for _, f := range m.fields {
			d.defs[f.Name] = f
		}
		out = append(out, d)
	}
	return out
}

var diffWords = []string{"Ärger", "ärger", "ÄRGER", "Straße", "STRASSE", "strasse", "Σοφία", "σοφία", "ΣΟΦΙΑ",
	"hello", "Hello", "HELLO", "world", "World", "café", "CAFÉ", "naïve", "100%", "50%", "a_b", "x_y", "abc", "ABC",
	"Zebra", "zebra", "日本語", "🙂ok", "Ωmega", "true", "10", "-5.5", "Hello World", "hello world", `C:\temp`, `c:\TEMP\x`}

var diffNumbers = []string{"0", "-0", "1", "-1", "2.5", "-5.50", "-5.5", "10", "10.0", "100", "1e3", "0.001", "3.14159",
	"9007199254740992", "9007199254740993", "-9007199254740993", "12345678901234567890", "-12345678901234567890", "42"}

var diffURLs = []string{"https://example.com/a", "https://example.com/Äpfel", "http://a.b/x_y", "https://EXAMPLE.com/a",
	"https://example.com/100%25"}

var diffColors = []string{"#fff", "#FFF", "#1a2b3c", "#1A2B3C", "#000000"}

var diffLocales = []string{"en-US", "es-ES", "de-DE"}

var diffTags = []content.Tag{
	{ID: "t1", Name: "Platform", Value: "android", TagType: "x"},
	{ID: "t2", Name: "Platform", Value: "ios", TagType: "x"},
	{Name: "Lang", Value: "es"},
	{Name: "Lang", Value: "Es"},
	{ID: "t9", Name: "Market", Value: "nl"},
}

var diffAuthors = []string{"Ann", "ann", "Émile", "bob", "Bob"}

func newDiffWorld(t *testing.T, seed uint64) *diffWorld {
	w := &diffWorld{t: t, f: newFixture(t), rng: rand.New(rand.NewPCG(seed, 0x5eed)), byID: map[string]*dModule{},
		texts: map[string][]string{}, nums: map[string][]json.Number{}, attrs: map[string][]any{}, stats: map[string]int{}}
	var coll string
	if err := w.f.pool.QueryRow(w.f.ctx, `SELECT datcollate FROM pg_database WHERE datname = current_database()`).Scan(&coll); err != nil {
		t.Fatal(err)
	}
	switch strings.ToLower(coll) {
	case "c", "posix", "c.utf-8", "c.utf8":
		w.bytewise = true
	default:
		// Texts order by the collation: the reference knows code point
		// order only, so text ranges and text sorts are not generated.
		t.Logf("database collation %s: no text ranges or text sorts", coll)
	}
	w.mods = diffModules()
	for _, m := range w.mods {
		w.byID[m.id] = m
	}
	counts := map[string]int{"mA": 200, "mB": 70, "mC": 12, "mD": 10}
	for _, m := range w.mods {
		for i := 1; i <= counts[m.id]; i++ {
			w.ids = append(w.ids, fmt.Sprintf("%s%03d", strings.ToLower(m.id[1:]), i))
		}
	}
	w.build(counts)
	w.mem = rmcontent.NewStore(w.f.pool, pgtest.Generic(t, w.f.pool))
	w.mem.KeepInMemory(1000)
	for _, m := range w.mods {
		if err := w.mem.LoadInMemory(w.f.ctx, m.id, seed%2 == 1); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// text is a random text of at most max characters: words, phrases, empty,
// around the length of an equality token (16), around the cut (500
// characters, or 800 bytes).
func (w *diffWorld) text(max int) string {
	r := w.rng
	var s string
	switch n := r.IntN(20); {
	case n < 6:
		s = diffWords[r.IntN(len(diffWords))]
	case n < 10:
		var parts []string
		for range 2 + r.IntN(3) {
			parts = append(parts, diffWords[r.IntN(len(diffWords))])
		}
		s = strings.Join(parts, " ")
	case n < 11:
		s = ""
	case n < 14:
		alpha := []rune("aAäÄσΣz_%")
		if r.IntN(2) == 0 {
			alpha = []rune("abcXYZ")
		}
		var b strings.Builder
		for range 15 + r.IntN(3) {
			b.WriteRune(alpha[r.IntN(len(alpha))])
		}
		s = b.String()
	case n < 18:
		base := strings.Repeat("lorem Ipsum dolor ", 28)[:495]
		if r.IntN(3) == 0 {
			base = string([]rune(strings.Repeat("Ärger σοφία 日本語 ", 40))[:495])
		}
		// 495 to 555 characters: past the cut (500), at it, before it.
		ends := []string{"", "x", "xyz", "abcd", "abcde", "abcdE", "abcdef", "needle", "NEEDLE thread", strings.Repeat("ab ", 20), "Straße"}
		s = base + ends[r.IntN(len(ends))]
		if r.IntN(3) == 0 {
			s = strings.Repeat("z", r.IntN(3)) + s
		}
	default:
		shared := []string{"Hello World", "hello world", "HELLO WORLD", "exactly sixteen!", "exactly seventeen", "ÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄÄ"}
		s = shared[r.IntN(len(shared))]
	}
	if rs := []rune(s); len(rs) > max {
		s = string(rs[:max])
	}
	return s
}

func (w *diffWorld) number() json.Number {
	if w.rng.IntN(3) == 0 {
		return json.Number(strconv.Itoa(w.rng.IntN(201) - 100))
	}
	return json.Number(diffNumbers[w.rng.IntN(len(diffNumbers))])
}

func (w *diffWorld) date() json.Number {
	dates := []int64{t0, t0 - day, t0 + day, t0 + 1, 0, 1_600_000_000_000}
	if w.rng.IntN(2) == 0 {
		return json.Number(strconv.FormatInt(dates[w.rng.IntN(len(dates))], 10))
	}
	return json.Number(strconv.FormatInt(t0+int64(w.rng.IntN(2001)-1000)*1000, 10))
}

func (w *diffWorld) subset(from []string, max int) []any {
	out := []any{}
	for _, i := range w.rng.Perm(len(from))[:w.rng.IntN(max+1)] {
		out = append(out, from[i])
	}
	return out
}

func (w *diffWorld) value(f content.Field) any {
	r := w.rng
	switch f.Kind() {
	case content.KindText:
		if f.Type == content.LongTextType {
			s := w.text(1000)
			if r.IntN(4) == 0 {
				s += " " + w.text(1000)
			}
			return s
		}
		return w.text(1000)
	case content.KindNumber:
		return w.number()
	case content.KindTimestamp:
		return w.date()
	case content.KindBoolean:
		return r.IntN(2) == 0
	case content.KindColor:
		return diffColors[r.IntN(len(diffColors))]
	case content.KindURL:
		return diffURLs[r.IntN(len(diffURLs))]
	case content.KindChoice:
		return f.Rules.Values[r.IntN(len(f.Rules.Values))]
	case content.KindRelation:
		if r.IntN(8) == 0 {
			return "gone-1"
		}
		return w.ids[r.IntN(len(w.ids))]
	case content.KindRelations:
		return w.subset(w.ids[:40], 3)
	case content.KindChoices:
		return w.subset(f.Rules.Values, 3)
	case content.KindLocalized:
		m := map[string]any{}
		for _, l := range w.subset(diffLocales, 3) {
			m[l.(string)] = w.text(600)
		}
		return m
	case content.KindList:
		out := []any{}
		for range r.IntN(4) {
			switch r.IntN(5) {
			case 0, 1:
				out = append(out, w.number())
			case 2, 3:
				out = append(out, w.text(40))
			default:
				out = append(out, r.IntN(2) == 0)
			}
		}
		return out
	case content.KindObject:
		if r.IntN(2) == 0 {
			return map[string]any{"k": diffWords[r.IntN(len(diffWords))]}
		}
		return map[string]any{"bb": diffWords[r.IntN(len(diffWords))], "a": json.Number(strconv.Itoa(r.IntN(100)))}
	}
	panic("no value for " + f.Name)
}

// build records the modules and items as events, projects them through
// the real projector, and reads back the items' attributes.
func (w *diffWorld) build(counts map[string]int) {
	t, r := w.t, w.rng
	type rec struct {
		at int64
		ev interface{ EventType() string }
	}
	var recs []rec
	for _, m := range w.mods {
		recs = append(recs, rec{t0 - 30*day, content.ModuleCreated{ModuleID: m.id, App: m.app, Name: m.id, Fields: m.fields, By: "Ann"}})
	}
	at := t0 - 20*day
	n := 0
	byItem := map[string]*dItem{}
	for _, m := range w.mods {
		for i := range counts[m.id] {
			if m.id == "mB" && i == counts[m.id]/2 {
				// New fields in front: every typed column moves, and the
				// module's items are keyed again.
				fields := slices.Concat([]content.Field{field("extra", "01"), field("rating", "02")}, m.fields)
				recs = append(recs, rec{at + 1, content.ModuleFieldsChanged{ModuleID: m.id, App: m.app, Fields: fields, By: "Ann"}})
				m.fields = fields
				for _, f := range fields {
					m.defs[f.Name] = f
				}
			}
			id := w.ids[n]
			n++
			if r.IntN(8) != 0 { // otherwise created at the same instant as the previous item
				at += 1000 + int64(r.IntN(1000))
			}
			vals := map[string]any{}
			for _, f := range m.fields {
				switch r.IntN(10) {
				case 0:
					continue // missing
				case 1:
					vals[f.Name] = nil
				default:
					vals[f.Name] = w.value(f)
				}
			}
			if vs := content.ValidateValues(m.fields, vals); len(vs) > 0 {
				t.Fatalf("generated values of %s are invalid: %+v", id, vs)
			}
			var tags []content.Tag
			for _, i := range r.Perm(len(diffTags))[:r.IntN(3)] {
				tags = append(tags, diffTags[i])
			}
			ev := content.ItemCreated{ItemID: id, App: m.app, Module: m.id, Name: w.text(40) + "", Values: vals, Tags: tags,
				By: diffAuthors[r.IntN(len(diffAuthors))]}
			if strings.TrimSpace(ev.Name) == "" {
				ev.Name = "untitled"
			}
			if r.IntN(4) == 0 {
				ev.ExternalID = []string{"ext-1", "ext-2", "EXT-1", fmt.Sprintf("ext-%s", id)}[r.IntN(4)]
			}
			ms := func(v int64) time.Time { return time.UnixMilli(v) }
			switch r.IntN(11) {
			case 10: // on the edges of now: published from now, expired or archived at now
				ev.PublishedAt = ms(now)
				if r.IntN(2) == 0 {
					ev.PublishedAt = ms(at)
					if r.IntN(2) == 0 {
						ev.RemovedAt = ms(now)
					} else {
						ev.ArchivedAt = ms(now)
					}
				}
			case 0: // concept
			case 1: // scheduled
				ev.PublishedAt = ms(now + int64(1+r.IntN(5))*day)
			case 2: // expired
				ev.PublishedAt, ev.RemovedAt = ms(at), ms(at+int64(1+r.IntN(1000)))
			case 3: // to expire
				ev.PublishedAt, ev.RemovedAt = ms(at), ms(now+day)
			case 4: // archived
				ev.PublishedAt, ev.ArchivedAt = ms(at), ms(at+500)
			case 5: // to be archived
				ev.PublishedAt, ev.ArchivedAt = ms(at), ms(now+day)
			default:
				ev.PublishedAt = ms(at - int64(r.IntN(3))*1000)
			}
			recs = append(recs, rec{at, ev})
			byItem[id] = &dItem{vals: vals, tags: tags}
			if r.IntN(6) == 0 {
				ed := content.ItemEdited{ItemID: id, App: m.app, Module: m.id, Name: ev.Name + " v2", Values: vals, Tags: tags,
					ExternalID: ev.ExternalID, Changed: []string{"name"}, By: diffAuthors[r.IntN(len(diffAuthors))]}
				recs = append(recs, rec{at + 10, ed})
			}
			if r.IntN(12) == 0 {
				recs = append(recs, rec{at + 20, content.ItemDeleted{ItemID: id, App: m.app, Module: m.id, By: diffAuthors[r.IntN(len(diffAuthors))]}})
			}
		}
	}
	for len(recs) > 0 {
		k := min(len(recs), 150)
		var batch []event.Recorded
		for _, x := range recs[:k] {
			w.f.pos++
			batch = append(batch, event.Recorded{Position: event.Position{TxID: uint64(w.f.pos), Pos: w.f.pos},
				StreamID: "s", Type: x.ev.EventType(), Data: x.ev, RecordedAt: time.UnixMilli(x.at)})
		}
		if err := (projcontent.Projector{}).Apply(w.f.ctx, w.f.pool, "public", batch); err != nil {
			t.Fatal(err)
		}
		recs = recs[k:]
	}
	stored, err := w.f.store.Items(w.f.ctx, w.ids)
	if err != nil || len(stored) != len(w.ids) {
		t.Fatalf("read back %d items of %d: %v", len(stored), len(w.ids), err)
	}
	for _, it := range stored {
		d := byItem[it.ID]
		d.Item = it
		w.items = append(w.items, d)
	}
	slices.SortFunc(w.items, func(a, b *dItem) int { return strings.Compare(a.ID, b.ID) })
	for _, m := range w.mods {
		read, err := w.f.store.Module(w.f.ctx, m.id)
		if err != nil {
			t.Fatal(err)
		}
		m.read = read
	}
	// What the items hold, to search for.
	for _, it := range w.items {
		for name, v := range it.vals {
			var walk func(any)
			walk = func(v any) {
				switch x := v.(type) {
				case string:
					w.texts[name] = append(w.texts[name], x)
				case bool:
					w.texts[name] = append(w.texts[name], strconv.FormatBool(x))
				case json.Number:
					w.nums[name] = append(w.nums[name], x)
				case []any:
					for _, e := range x {
						walk(e)
					}
				case map[string]any:
					for _, e := range x {
						walk(e)
					}
				}
			}
			walk(v)
		}
		for _, a := range diffMetaAttrs {
			if v := metaValue(it, a); v != nil {
				w.attrs[a] = append(w.attrs[a], v)
			}
		}
	}
}

// ---- the reference evaluator ----

// errInvalid is the reference's 400.
var errInvalid = fmt.Errorf("invalid")

// kv is one searchable value of an item's field: a text or a number.
type kv struct {
	text   string
	isText bool
	num    *big.Rat
}

func rat(s string) (*big.Rat, bool) {
	if s == "" || len(s) > 1000 {
		return nil, false
	}
	// json.Number, numeric strings: decimal literals, exponents allowed.
	for _, c := range s {
		if !strings.ContainsRune("0123456789+-.eE", c) {
			return nil, false
		}
	}
	return new(big.Rat).SetString(s)
}

// scalarKV is one JSON scalar as a searchable value: strings and booleans
// are texts, numbers numbers.
func scalarKV(v any) (kv, bool) {
	switch x := v.(type) {
	case string:
		return kv{text: x, isText: true}, true
	case bool:
		return kv{text: strconv.FormatBool(x), isText: true}, true
	case json.Number:
		n, ok := rat(string(x))
		return kv{num: n}, ok
	}
	return kv{}, false
}

// fieldValues are the values of an item's field a search compares: one
// for a single-valued field, each element of a multi-valued field or a
// list, the text in the locale (or, without a locale, every text) of a
// localized one.
func fieldValues(def content.Field, v any, locale string) []kv {
	var out []kv
	add := func(v any) {
		if x, ok := scalarKV(v); ok {
			out = append(out, x)
		}
	}
	switch k := def.Kind(); {
	case k == content.KindLocalized:
		m, _ := v.(map[string]any)
		if locale != "" {
			add(m[locale])
		} else {
			for _, l := range slices.Sorted(maps.Keys(m)) {
				if s, ok := m[l].(string); ok {
					add(s)
				}
			}
		}
	case k.Multi() || k == content.KindList:
		arr, _ := v.([]any)
		for _, e := range arr {
			add(e)
		}
	default:
		add(v)
	}
	return out
}

// asText is a query value compared as text: a string, a boolean, a number
// as written.
// listOperand reads the array of an in/!in: its values, each converted
// by conv, and whether it holds null; errInvalid if it is not an array or
// a value does not convert.
func listOperand[T any](v any, conv func(any) (T, bool)) ([]T, bool, error) {
	l, ok := v.([]any)
	if !ok {
		return nil, false, errInvalid
	}
	var vals []T
	withNull := false
	for _, x := range l {
		if x == nil {
			withNull = true
			continue
		}
		c, ok := conv(x)
		if !ok {
			return nil, false, errInvalid
		}
		vals = append(vals, c)
	}
	return vals, withNull, nil
}

func asText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case bool:
		return strconv.FormatBool(x), true
	case json.Number:
		if _, ok := rat(string(x)); ok {
			return string(x), true
		}
	}
	return "", false
}

// asNumber is a query value compared as a number: a number, or a numeric
// string.
func asNumber(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		return rat(string(x))
	case string:
		return rat(x)
	}
	return nil, false
}

func isNullExpr(e *rmcontent.Expr) bool { return e.Value == nil || strings.EqualFold(e.Type, "null") }

func likeText(e *rmcontent.Expr) (string, bool) {
	s, ok := e.Value.(string)
	return strings.ToLower(s), ok && utf8.RuneCountInString(s) >= 3
}

// match is a compiled condition on one item; amb, when set, says that the
// item meets a case the documentation leaves open.
type match func(it *dItem, amb *string) bool

// refCompiler compiles a tree for the items of some modules, with one
// definition per field name (defs) and the search's locale.
type refCompiler struct {
	defs   map[string]content.Field
	locale string
	w      *diffWorld
}

func (c *refCompiler) tree(e *rmcontent.Expr, leaf func(*rmcontent.Expr) (match, error)) (match, error) {
	if e.Cond == "" {
		return leaf(e)
	}
	var ms []match
	for _, o := range e.Operands {
		m, err := c.tree(o, leaf)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m)
	}
	and := strings.EqualFold(e.Cond, "and")
	return func(it *dItem, amb *string) bool {
		for _, m := range ms {
			if m(it, amb) != and {
				return !and
			}
		}
		return and
	}, nil
}

// value is what an item holds under field name, when its module has it.
func (c *refCompiler) value(it *dItem, name string) any {
	if _, ok := c.w.byID[it.Module].defs[name]; !ok {
		return nil
	}
	return it.vals[name]
}

func (c *refCompiler) valueLeaf(e *rmcontent.Expr) (match, error) {
	op := strings.ToLower(strings.TrimSpace(e.Op))
	if !slices.Contains([]string{"=", "!=", ">", ">=", "<", "<=", "in", "!in", "like"}, op) {
		return nil, errInvalid
	}
	name := strings.TrimPrefix(e.Property, "values.")
	if name == "" {
		return nil, errInvalid
	}
	def, known := c.defs[name]
	kind := def.Kind()
	null := isNullExpr(e)
	not := func(m match) match { return func(it *dItem, amb *string) bool { return !m(it, amb) } }
	neg := op == "!=" || op == "!in"

	// Object fields: whether there is a value, and like on its JSON text.
	if known && kind == content.KindObject {
		has := func(it *dItem, _ *string) bool { return c.value(it, name) != nil }
		switch {
		case op == "=" && null:
			return not(has), nil
		case op == "!=" && null:
			return has, nil
		case op == "like":
			pat, ok := likeText(e)
			if !ok {
				return nil, errInvalid
			}
			return func(it *dItem, _ *string) bool {
				v := c.value(it, name)
				return v != nil && strings.Contains(strings.ToLower(jsonbText(v)), pat)
			}, nil
		}
		return nil, errInvalid
	}

	// Boolean fields compare by =, !=, in and !in with true, false (as
	// text too) or null; anything else is refused.
	if known && kind == content.KindBoolean {
		if !slices.Contains([]string{"=", "!=", "in", "!in"}, op) {
			return nil, errInvalid
		}
		if !null {
			vals := []any{e.Value}
			if l, ok := e.Value.([]any); ok {
				vals = l
			}
			for _, v := range vals {
				switch v {
				case nil, true, false, "true", "false":
				default:
					return nil, errInvalid
				}
			}
		}
	}

	// Long text: not indexed, compared on the value itself.
	if known && !def.Indexed() {
		get := func(it *dItem) (string, bool) {
			s, ok := c.value(it, name).(string)
			return s, ok
		}
		if null {
			if op != "=" && op != "!=" {
				return nil, errInvalid
			}
			return func(it *dItem, amb *string) bool {
				s, ok := get(it)
				if ok && s == "" {
					// AMBIGUOUS: is an empty long text a value? An
					// indexed text's "" is one ("= null" does not find
					// it), a long text's is not (longTextLeaf:
					// coalesce(v, '') = ''); the documentation does not
					// say.
					*amb = "empty long text compared with null"
				}
				return ok == (op == "!=")
			}, nil
		}
		switch op {
		case "like":
			pat, ok := likeText(e)
			if !ok {
				return nil, errInvalid
			}
			return func(it *dItem, _ *string) bool {
				s, ok := get(it)
				return ok && strings.Contains(strings.ToLower(s), pat)
			}, nil
		case "in", "!in":
			vals, withNull, err := listOperand(e.Value, asText)
			if err != nil {
				return nil, err
			}
			in := func(it *dItem, amb *string) bool {
				s, ok := get(it)
				if withNull && ok && s == "" {
					*amb = "empty long text compared with null" // as above
				}
				return ok && slices.Contains(vals, s) || withNull && !ok
			}
			if neg {
				return not(in), nil
			}
			return in, nil
		}
		if _, isList := e.Value.([]any); isList {
			return nil, errInvalid
		}
		v, ok := asText(e.Value)
		if !ok {
			return nil, errInvalid
		}
		if !c.w.bytewise && op != "=" && op != "!=" {
			panic("text range generated with a collation the reference does not know")
		}
		cmpOK := cmpOp(op)
		return func(it *dItem, _ *string) bool {
			s, ok := get(it)
			if op == "!=" {
				return !ok || s != v
			}
			return ok && cmpOK(strings.Compare(s, v))
		}, nil
	}

	// Indexed fields: numbers compare as numbers, the rest as texts. An
	// unknown field, or a list (whose elements may be either), compares as
	// the value (or the first of a list) is typed.
	numeric := known && kind.Numeric()
	if !known || kind == content.KindList {
		v := e.Value
		if l, ok := v.([]any); ok && len(l) > 0 {
			v = l[0]
		}
		_, isNum := v.(json.Number)
		numeric = isNum || e.Type == "number" || e.Type == "date"
	}
	vals := func(it *dItem) []kv {
		if !known {
			return nil
		}
		return fieldValues(def, c.value(it, name), c.locale)
	}
	has := func(it *dItem, _ *string) bool { return len(vals(it)) > 0 }
	// one is "one of the item's values (of the compared type) satisfies ok".
	one := func(okText func(string) bool, okNum func(*big.Rat) bool) match {
		return func(it *dItem, _ *string) bool {
			for _, x := range vals(it) {
				if numeric && x.num != nil && okNum(x.num) || !numeric && x.isText && okText(x.text) {
					return true
				}
			}
			return false
		}
	}
	switch op {
	case "=", "!=":
		var m match
		if null {
			m = not(has)
		} else {
			if _, isList := e.Value.([]any); isList {
				return nil, errInvalid
			}
			if numeric {
				n, ok := asNumber(e.Value)
				if !ok {
					return nil, errInvalid
				}
				m = one(nil, func(x *big.Rat) bool { return x.Cmp(n) == 0 })
			} else {
				s, ok := asText(e.Value)
				if !ok {
					return nil, errInvalid
				}
				m = one(func(x string) bool { return x == s }, nil)
			}
		}
		if neg {
			return not(m), nil
		}
		return m, nil
	case ">", ">=", "<", "<=":
		if null {
			return nil, errInvalid
		}
		if _, isList := e.Value.([]any); isList {
			return nil, errInvalid
		}
		ok := cmpOp(op)
		if numeric {
			n, valid := asNumber(e.Value)
			if !valid {
				return nil, errInvalid
			}
			return one(nil, func(x *big.Rat) bool { return ok(x.Cmp(n)) }), nil
		}
		s, valid := asText(e.Value)
		if !valid {
			return nil, errInvalid
		}
		if !c.w.bytewise {
			panic("text range generated with a collation the reference does not know")
		}
		return one(func(x string) bool { return ok(strings.Compare(x, s)) }, nil), nil
	case "in", "!in":
		var texts []string
		var nums []*big.Rat
		var withNull bool
		var err error
		if numeric {
			nums, withNull, err = listOperand(e.Value, asNumber)
		} else {
			texts, withNull, err = listOperand(e.Value, asText)
		}
		if err != nil {
			return nil, err
		}
		in := one(func(x string) bool { return slices.Contains(texts, x) },
			func(x *big.Rat) bool {
				return slices.ContainsFunc(nums, func(n *big.Rat) bool { return n.Cmp(x) == 0 })
			})
		m := in
		if withNull {
			m = func(it *dItem, amb *string) bool { return in(it, amb) || !has(it, amb) }
		}
		if neg {
			return not(m), nil
		}
		return m, nil
	default: // like
		if known && kind.Numeric() {
			return nil, errInvalid
		}
		pat, ok := likeText(e)
		if !ok {
			return nil, errInvalid
		}
		numeric = false
		return one(func(x string) bool { return strings.Contains(strings.ToLower(x), pat) }, nil), nil
	}
}

func cmpOp(op string) func(int) bool {
	switch op {
	case ">":
		return func(c int) bool { return c > 0 }
	case ">=":
		return func(c int) bool { return c >= 0 }
	case "<":
		return func(c int) bool { return c < 0 }
	case "<=":
		return func(c int) bool { return c <= 0 }
	case "=":
		return func(c int) bool { return c == 0 }
	}
	return func(c int) bool { return c != 0 }
}

// jsonbText is how PostgreSQL writes a jsonb object of scalars: keys by
// length, then bytes; ": " and ", ".
func jsonbText(v any) string {
	m, ok := v.(map[string]any)
	if !ok {
		b, _ := json.Marshal(v)
		return string(b)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	var b strings.Builder
	b.WriteString("{")
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(k)
		b.WriteString(strings.TrimSpace(buf.String()) + ": ")
		buf.Reset()
		_ = enc.Encode(m[k])
		b.WriteString(strings.TrimSpace(buf.String()))
	}
	b.WriteString("}")
	return b.String()
}

var diffMetaAttrs = []string{"name", "id", "module", "externalId", "createdAt", "updatedAt", "publishedAt", "removedAt",
	"archivedAt", "deletedAt", "createdBy", "updatedBy", "deletedBy"}

func isDateAttr(a string) bool { return strings.HasSuffix(strings.ToLower(a), "at") }

// metaValue is an item's attribute: a string, an int64, or nil.
func metaValue(it *dItem, attr string) any {
	str := func(s *string) any {
		if s == nil {
			return nil
		}
		return *s
	}
	date := func(d *int64) any {
		if d == nil {
			return nil
		}
		return *d
	}
	switch strings.ToLower(attr) {
	case "name":
		return it.Name
	case "id":
		return it.ID
	case "module":
		return it.Module
	case "externalid":
		if it.ExternalID == "" {
			return nil
		}
		return it.ExternalID
	case "createdat":
		return it.CreatedAt
	case "updatedat":
		return date(it.UpdatedAt)
	case "publishedat":
		return date(it.PublishedAt)
	case "removedat":
		return date(it.RemovedAt)
	case "archivedat":
		return date(it.ArchivedAt)
	case "deletedat":
		return date(it.DeletedAt)
	case "createdby":
		return it.CreatedBy
	case "updatedby":
		return str(it.UpdatedBy)
	case "deletedby":
		return str(it.DeletedBy)
	}
	panic(attr)
}

func (c *refCompiler) metaLeaf(e *rmcontent.Expr, mentionsDelete *bool) (match, error) {
	op := strings.ToLower(strings.TrimSpace(e.Op))
	if !slices.Contains([]string{"=", "!=", ">", ">=", "<", "<=", "in", "!in", "like"}, op) {
		return nil, errInvalid
	}
	attr := ""
	for _, a := range diffMetaAttrs {
		if strings.EqualFold(a, e.Property) {
			attr = a
		}
	}
	if attr == "" {
		return nil, errInvalid
	}
	if attr == "deletedAt" {
		*mentionsDelete = true
	}
	date := isDateAttr(attr)
	// operand is a query value as the attribute compares it.
	operand := func(v any) (any, bool) {
		if date {
			return asNumber(v)
		}
		return asText(v)
	}
	// cmp compares an attribute's value (not nil) with an operand.
	cmp := func(a, v any) int {
		if date {
			return new(big.Rat).SetInt64(a.(int64)).Cmp(v.(*big.Rat))
		}
		if !c.w.bytewise {
			panic("text range generated with a collation the reference does not know")
		}
		return strings.Compare(a.(string), v.(string))
	}
	eq := func(a, v any) bool {
		if date {
			return cmp(a, v) == 0
		}
		return a.(string) == v.(string)
	}
	get := func(it *dItem) any { return metaValue(it, attr) }
	switch op {
	case "=", "!=", ">", ">=", "<", "<=":
		if isNullExpr(e) {
			switch op {
			case "=":
				return func(it *dItem, _ *string) bool { return get(it) == nil }, nil
			case "!=":
				return func(it *dItem, _ *string) bool { return get(it) != nil }, nil
			}
			return nil, errInvalid
		}
		if _, isList := e.Value.([]any); isList {
			return nil, errInvalid
		}
		v, ok := operand(e.Value)
		if !ok {
			return nil, errInvalid
		}
		if op == "=" || op == "!=" {
			return func(it *dItem, _ *string) bool {
				a := get(it)
				return (a != nil && eq(a, v)) == (op == "=")
			}, nil
		}
		ok2 := cmpOp(op)
		return func(it *dItem, _ *string) bool {
			a := get(it)
			return a != nil && ok2(cmp(a, v))
		}, nil
	case "in", "!in":
		vs, withNull, err := listOperand(e.Value, operand)
		if err != nil {
			return nil, err
		}
		return func(it *dItem, _ *string) bool {
			a := get(it)
			in := a == nil && withNull || a != nil && slices.ContainsFunc(vs, func(v any) bool { return eq(a, v) })
			return in == (op == "in")
		}, nil
	default: // like
		if date {
			return nil, errInvalid
		}
		pat, ok := likeText(e)
		if !ok {
			return nil, errInvalid
		}
		return func(it *dItem, _ *string) bool {
			a, ok := get(it).(string)
			return ok && strings.Contains(strings.ToLower(a), pat)
		}, nil
	}
}

// names lists the field names a tree names.
func names(e *rmcontent.Expr) []string {
	if e == nil {
		return nil
	}
	if e.Cond == "" {
		return []string{strings.TrimPrefix(e.Property, "values.")}
	}
	var out []string
	for _, o := range e.Operands {
		out = append(out, names(o)...)
	}
	return out
}

// differ reports whether two modules of defs define one of names with
// another kind, or one indexes it and the other not.
func differ(defs map[string]map[string]content.Field, names []string) bool {
	for _, n := range names {
		var first *content.Field
		for _, fs := range defs {
			if f, ok := fs[n]; ok {
				if first == nil {
					first = &f
				} else if f.Kind() != first.Kind() || f.Indexed() != first.Indexed() {
					return true
				}
			}
		}
	}
	return false
}

func cutText(s string) string { return projcontent.KeyCut(s) }

// sortValue is an item's value for one sort key: nil (missing: the
// smallest), a text (lower-cased, cut) or a number.
func (w *diffWorld) sortValue(it *dItem, k rmcontent.SortKey, q *rmcontent.Query) any {
	if k.Attr != "" {
		v := metaValue(it, k.Attr)
		switch x := v.(type) {
		case string:
			return strings.ToLower(x)
		case int64:
			return new(big.Rat).SetInt64(x)
		}
		return nil
	}
	def, ok := w.byID[it.Module].defs[k.Field]
	if !ok {
		return nil
	}
	vs := fieldValues(def, it.vals[k.Field], q.Locale)
	if len(vs) == 0 {
		return nil
	}
	if vs[0].isText {
		return strings.ToLower(cutText(vs[0].text))
	}
	return vs[0].num
}

func compareSortValues(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	switch x := a.(type) {
	case string:
		return strings.Compare(x, b.(string))
	case *big.Rat:
		return x.Cmp(b.(*big.Rat))
	}
	panic("sort value")
}

// expect is the reference's answer to q: the page, the total, or
// errInvalid; amb is set when an item meets a case the documentation
// leaves open.
func (w *diffWorld) expect(q rmcontent.Query) (page []string, total int, amb string, err error) {
	// The modules searched, and which items are visible.
	inScope := map[string]bool{}
	for _, m := range w.mods {
		if q.ModuleIDs == nil || slices.Contains(q.ModuleIDs, m.id) {
			inScope[m.id] = true
		}
	}
	// An admin sees every item; others the items of their apps, of the
	// modules and the items they have a right on.
	visible := func(it *dItem) bool {
		return q.AllApps || slices.Contains(q.Apps, it.App) || slices.Contains(q.VisibleModules, it.Module) ||
			slices.Contains(q.VisibleItems, it.ID)
	}
	// searchValues: with each module's definitions where the modules
	// define a named field differently, else with Fields'.
	var sv func(it *dItem, amb *string) bool
	if q.SearchValues != nil {
		if len(q.ModuleFields) < 2 || !differ(q.ModuleFields, names(q.SearchValues)) {
			c := &refCompiler{defs: q.Fields, locale: q.Locale, w: w}
			m, err := c.tree(q.SearchValues, c.valueLeaf)
			if err != nil {
				return nil, 0, "", err
			}
			sv = m
		} else {
			byModule := map[string]match{}
			valid := false
			for id, defs := range q.ModuleFields {
				c := &refCompiler{defs: defs, locale: q.Locale, w: w}
				if m, err := c.tree(q.SearchValues, c.valueLeaf); err == nil {
					byModule[id], valid = m, true
				}
			}
			if !valid {
				return nil, 0, "", errInvalid
			}
			sv = func(it *dItem, amb *string) bool {
				m, ok := byModule[it.Module]
				return ok && m(it, amb)
			}
		}
	}
	mentionsDelete := false
	var ms match
	if q.MetaSearch != nil {
		c := &refCompiler{w: w}
		m, err := c.tree(q.MetaSearch, func(e *rmcontent.Expr) (match, error) { return c.metaLeaf(e, &mentionsDelete) })
		if err != nil {
			return nil, 0, "", err
		}
		ms = m
	}
	// Sort keys: attributes, or single-valued fields (localized text with
	// a locale) that the modules searched define alike.
	keys := q.Sort
	if len(keys) == 0 {
		keys = []rmcontent.SortKey{{Attr: "createdAt"}}
	}
	for _, k := range keys {
		if k.Field == "" {
			continue
		}
		f, ok := q.Fields[k.Field]
		if !ok || differ(q.ModuleFields, []string{k.Field}) {
			return nil, 0, "", errInvalid
		}
		if kind := f.Kind(); !kind.Scalar() && !(kind == content.KindLocalized && q.Locale != "") || !f.Indexed() {
			return nil, 0, "", errInvalid
		}
	}
	var matches []*dItem
	for _, it := range w.items {
		if !inScope[it.Module] || !visible(it) {
			continue
		}
		if q.InstanceIDs != nil && !slices.Contains(q.InstanceIDs, it.ID) {
			continue
		}
		if it.DeletedAt != nil && !mentionsDelete && !q.IncludeDeleted {
			continue
		}
		if q.PublishedOnly && !(it.DeletedAt == nil && it.PublishedAt != nil && *it.PublishedAt <= q.Now &&
			(it.RemovedAt == nil || *it.RemovedAt > q.Now) && (it.ArchivedAt == nil || *it.ArchivedAt > q.Now)) {
			continue
		}
		var a string
		if sv != nil && !sv(it, &a) || ms != nil && !ms(it, &a) {
			if a != "" {
				amb = a
			}
			continue
		}
		if a != "" {
			amb = a
		}
		if !w.related(it, q.RelatedTo) || !segmentMatch(it, q.SegmentTags, q.SegmentTotal) {
			continue
		}
		matches = append(matches, it)
	}
	slices.SortStableFunc(matches, func(a, b *dItem) int {
		for _, k := range keys {
			c := compareSortValues(w.sortValue(a, k, &q), w.sortValue(b, k, &q))
			if k.Desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		c := strings.Compare(a.ID, b.ID)
		if keys[len(keys)-1].Desc {
			c = -c
		}
		return c
	})
	total = len(matches)
	if q.Offset < len(matches) {
		matches = matches[q.Offset:]
	} else {
		matches = nil
	}
	if q.Limit > 0 && len(matches) > q.Limit {
		matches = matches[:q.Limit]
	}
	page = []string{}
	for _, it := range matches {
		page = append(page, it.ID)
	}
	return page, total, amb, nil
}

// related: the item's relation field points at one of the ids ("*": at
// any item).
func (w *diffWorld) related(it *dItem, rels []rmcontent.Relation) bool {
	for _, r := range rels {
		def, ok := w.byID[it.Module].defs[r.Field]
		if !ok || def.Kind() != content.KindRelation && def.Kind() != content.KindRelations {
			return false // only a relation field relates items
		}
		found := false
		for _, v := range fieldValues(def, it.vals[r.Field], "") {
			if v.isText && (slices.Contains(r.IDs, "*") || slices.Contains(r.IDs, v.text)) {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// segmentMatch: a tag matches by id, or by name and value; partial: one
// of the tags, total: every one.
func segmentMatch(it *dItem, tags []rmcontent.Tag, total bool) bool {
	if len(tags) == 0 {
		return true
	}
	has := func(q rmcontent.Tag) bool {
		return slices.ContainsFunc(it.tags, func(t content.Tag) bool {
			return q.ID != "" && t.ID == q.ID || q.Name != "" && t.Name == q.Name && t.Value == q.Value
		})
	}
	n := 0
	for _, q := range tags {
		if has(q) {
			n++
		}
	}
	if total {
		return n == len(tags)
	}
	return n > 0
}

// ---- random searches ----

// scope is what a search names: one module, two, or all.
type diffScope struct {
	name    string
	modules []*dModule // named, or nil: all
}

func (w *diffWorld) scopes() []diffScope {
	a, b, d := w.byID["mA"], w.byID["mB"], w.byID["mD"]
	return []diffScope{{"mA", []*dModule{a}}, {"mA", []*dModule{a}}, {"mA", []*dModule{a}}, {"mB", []*dModule{b}},
		{"mA+mB", []*dModule{a, b}}, {"mB+mD", []*dModule{b, d}}, {"all", nil}, {"all", nil}}
}

// fieldNames are the names of the fields of modules, in order, first
// definitions first.
func fieldNames(mods []*dModule) ([]string, map[string]content.Field) {
	var out []string
	defs := map[string]content.Field{}
	for _, m := range mods {
		for _, f := range m.fields {
			if _, ok := defs[f.Name]; !ok {
				defs[f.Name] = f
				out = append(out, f.Name)
			}
		}
	}
	return out, defs
}

func (w *diffWorld) pick(xs []string) string { return xs[w.rng.IntN(len(xs))] }

// sdkType is the type an SDK sends with a value.
func (w *diffWorld) sdkType(v any, date bool) string {
	if l, ok := v.([]any); ok {
		if len(l) == 0 {
			return "string"
		}
		v = l[0]
	}
	switch v.(type) {
	case nil:
		if w.rng.IntN(3) == 0 {
			return ""
		}
		return "null"
	case json.Number:
		if date && w.rng.IntN(2) == 0 {
			return "date"
		}
		return "number"
	}
	return "string"
}

func caseVariant(r *rand.Rand, s string) string {
	switch r.IntN(3) {
	case 0:
		return strings.ToUpper(s)
	case 1:
		return strings.ToLower(s)
	}
	rs := []rune(s)
	for i, c := range rs {
		if r.IntN(2) == 0 {
			rs[i] = []rune(strings.ToUpper(string(c)))[0]
		}
	}
	return string(rs)
}

// likePattern is a random like value: mostly a piece of a text items hold.
func (w *diffWorld) likePattern(name string) string {
	r := w.rng
	src := w.texts[name]
	if len(src) == 0 || r.IntN(6) == 0 {
		src = diffWords
	}
	if r.IntN(40) == 0 {
		return "ab" // too short: a 400
	}
	for range 5 {
		rs := []rune(src[r.IntN(len(src))])
		if len(rs) < 3 {
			continue
		}
		n := 3 + r.IntN(min(6, len(rs)-2))
		if r.IntN(5) == 0 && len(rs) > 20 {
			n = min(len(rs), 20+r.IntN(len(rs)))
		}
		i := r.IntN(len(rs) - n + 1)
		p := string(rs[i : i+n])
		if r.IntN(3) == 0 {
			p = caseVariant(r, p)
		}
		return p
	}
	return w.pick([]string{"hel", "ÄRG", "σοφ", "0%", "0% ", "a_b", "_b", "ell", "DLE", "rue"})
}

// scalarValue is a random value to compare field name with.
func (w *diffWorld) scalarValue(name string, numeric bool) any {
	r := w.rng
	if numeric {
		switch n := r.IntN(100); {
		case n < 50 && len(w.nums[name]) > 0:
			return w.nums[name][r.IntN(len(w.nums[name]))]
		case n < 80:
			if r.IntN(2) == 0 {
				return w.date()
			}
			return w.number()
		case n < 90:
			return string(w.number()) // a numeric string
		case n < 97:
			return json.Number(fmt.Sprintf("%d.5", r.IntN(20)-10))
		case n < 99:
			return "abc" // not a number: a 400
		default:
			return true
		}
	}
	switch n := r.IntN(100); {
	case n < 45 && len(w.texts[name]) > 0:
		return w.texts[name][r.IntN(len(w.texts[name]))]
	case n < 60 && len(w.texts[name]) > 0:
		return caseVariant(r, w.texts[name][r.IntN(len(w.texts[name]))])
	case n < 70 && len(w.texts[name]) > 0:
		// The cut of a text past it (500 characters, or fewer in 800
		// bytes), which a text column holds.
		for range 10 {
			if s := w.texts[name][r.IntN(len(w.texts[name]))]; cutText(s) != s {
				return cutText(s)
			}
		}
		return w.texts[name][r.IntN(len(w.texts[name]))]
	case n < 80:
		return w.pick(diffWords)
	case n < 85:
		return w.number()
	case n < 90:
		return r.IntN(2) == 0
	case n < 93:
		return ""
	default:
		return w.text(1000)
	}
}

// cutLeaf is an operation on a text field name with a text near the cut:
// one an item holds, its cut, a like-pattern across or past the cut.
func (w *diffWorld) cutLeaf(name string) *rmcontent.Expr {
	r := w.rng
	var long []string
	for _, x := range w.texts[name] {
		if utf8.RuneCountInString(x) >= 490 {
			long = append(long, x)
		}
	}
	text := func() string {
		x := long[r.IntN(len(long))]
		switch r.IntN(4) {
		case 0:
			return cutText(x)
		case 1:
			rs := []rune(x)
			return string(rs[:min(len(rs), 499+r.IntN(3))])
		}
		return x
	}
	e := &rmcontent.Expr{Property: name, Type: "string"}
	e.Op = w.pick([]string{"=", "!=", "in", "!in", ">", ">=", "<", "<=", "like", "like"})
	if !w.bytewise && strings.ContainsAny(e.Op, "<>") {
		e.Op = "="
	}
	switch e.Op {
	case "like":
		rs := []rune(long[r.IntN(len(long))])
		cut := utf8.RuneCountInString(cutText(string(rs)))
		i := max(0, min(cut-r.IntN(6), len(rs)-3))
		n := min(len(rs)-i, 3+r.IntN(6))
		e.Value = caseVariant(r, string(rs[i:i+n]))
	case "in", "!in":
		l := []any{}
		for range 1 + r.IntN(3) {
			l = append(l, text())
		}
		if r.IntN(3) == 0 {
			l = append(l, nil)
		}
		e.Value = l
	default:
		e.Value = text()
	}
	return e
}

// valueLeaf is a random operation on a values field of the scope.
func (w *diffWorld) valueLeaf(fields []string, defs map[string]content.Field) *rmcontent.Expr {
	r := w.rng
	name := w.pick(fields)
	if r.IntN(30) == 0 {
		name = "nosuch"
	}
	def, known := defs[name]
	kind := def.Kind()
	numeric := known && kind.Numeric()
	if !known || kind == content.KindList {
		numeric = r.IntN(2) == 0
	}
	if known && kind == content.KindLocalized && r.IntN(2) == 0 {
		numeric = false
	}
	date := known && kind == content.KindTimestamp
	prop := name
	if r.IntN(10) == 0 {
		prop = "values." + name
	}
	e := &rmcontent.Expr{Property: prop}
	ops := []string{"=", "=", "!=", ">", ">=", "<", "<=", "in", "in", "!in", "like", "like"}
	if known && kind == content.KindObject {
		ops = []string{"=", "!=", "like", "like", "=", "!=", "like", "like", ">"}
	}
	e.Op = w.pick(ops)
	if !numeric && !w.bytewise && strings.ContainsAny(e.Op, "<>") {
		e.Op = "="
	}
	if e.Op == "like" && known && kind.Numeric() && r.IntN(8) > 0 {
		e.Op = "=" // like on a number: a 400, now and then
	}
	switch {
	case e.Op == "like":
		e.Value = w.likePattern(name)
		if r.IntN(40) == 0 {
			e.Value = json.Number("123") // a 400
		}
	case (e.Op == "=" || e.Op == "!=") && r.IntN(5) == 0 || known && kind == content.KindObject:
		e.Value = nil
		if r.IntN(30) == 0 && e.Op != "like" {
			e.Op = w.pick([]string{">", "<="}) // a 400
		}
	case e.Op == "in" || e.Op == "!in":
		l := []any{}
		nulls := 8
		if known && !def.Indexed() {
			nulls = 3 // long text: read from the values, null apart
		}
		for range r.IntN(5) {
			if r.IntN(nulls) == 0 {
				l = append(l, nil)
			} else {
				l = append(l, w.scalarValue(name, numeric))
			}
		}
		e.Value = l
		if r.IntN(40) == 0 {
			e.Value = w.scalarValue(name, numeric) // not a list: a 400
		}
	default:
		e.Value = w.scalarValue(name, numeric)
		if r.IntN(40) == 0 {
			e.Value = []any{e.Value} // a list: a 400
		}
	}
	e.Type = w.sdkType(e.Value, date)
	return e
}

// metaLeaf is a random operation on an attribute.
func (w *diffWorld) metaLeaf() *rmcontent.Expr {
	r := w.rng
	attr := w.pick(diffMetaAttrs)
	if attr == "deletedAt" && r.IntN(3) == 0 {
		attr = "updatedAt"
	}
	date := isDateAttr(attr)
	e := &rmcontent.Expr{Property: attr}
	if r.IntN(10) == 0 {
		e.Property = strings.ToLower(attr)
	}
	e.Op = w.pick([]string{"=", "!=", ">", ">=", "<", "<=", "in", "!in", "like"})
	if !date && !w.bytewise && strings.ContainsAny(e.Op, "<>") {
		e.Op = "="
	}
	if e.Op == "like" && date && r.IntN(8) > 0 {
		e.Op = "<=" // like on a date: a 400, now and then
	}
	value := func() any {
		pool := w.attrs[attr]
		if len(pool) == 0 || r.IntN(5) == 0 {
			if date {
				if r.IntN(5) == 0 {
					return json.Number(w.pick([]string{"99999999999999999999", "-99999999999999999999", "1e13", "1.7e12"}))
				}
				return json.Number(strconv.FormatInt(now+int64(r.IntN(3)-1)*day, 10))
			}
			return w.pick(diffWords)
		}
		v := pool[r.IntN(len(pool))]
		if d, ok := v.(int64); ok {
			if r.IntN(2) == 0 {
				d += int64(r.IntN(3) - 1)
			}
			if r.IntN(6) == 0 {
				return strconv.FormatInt(d, 10)
			}
			if r.IntN(8) == 0 {
				return json.Number(strconv.FormatInt(d, 10) + ".5")
			}
			return json.Number(strconv.FormatInt(d, 10))
		}
		s := v.(string)
		if r.IntN(4) == 0 {
			s = caseVariant(r, s)
		}
		return s
	}
	switch {
	case e.Op == "like":
		src := w.attrs[attr]
		e.Value = "hel"
		if len(src) > 0 {
			if s, ok := src[r.IntN(len(src))].(string); ok && utf8.RuneCountInString(s) >= 3 {
				rs := []rune(s)
				n := 3 + r.IntN(len(rs)-2)
				i := r.IntN(len(rs) - n + 1)
				e.Value = caseVariant(r, string(rs[i:i+n]))
			}
		}
	case (e.Op == "=" || e.Op == "!=") && r.IntN(4) == 0:
		e.Value = nil
	case e.Op == "in" || e.Op == "!in":
		l := []any{}
		for range r.IntN(4) {
			if r.IntN(6) == 0 {
				l = append(l, nil)
			} else {
				l = append(l, value())
			}
		}
		e.Value = l
	default:
		e.Value = value()
	}
	e.Type = w.sdkType(e.Value, date)
	return e
}

func (w *diffWorld) tree(depth int, leaf func() *rmcontent.Expr) *rmcontent.Expr {
	r := w.rng
	if depth >= 3 || r.IntN(2+depth) > 0 {
		return leaf()
	}
	e := &rmcontent.Expr{Cond: w.pick([]string{"and", "or"})}
	for range 1 + r.IntN(4) {
		e.Operands = append(e.Operands, w.tree(depth+1, leaf))
	}
	return e
}

// sortKeys is a random sort of the scope's items.
func (w *diffWorld) sortKeys(mods []*dModule, locale string) []rmcontent.SortKey {
	r := w.rng
	if r.IntN(4) == 0 {
		return nil
	}
	attrs := []string{"name", "createdAt", "updatedAt", "publishedAt", "removedAt", "archivedAt", "deletedAt", "createdBy", "updatedBy", "deletedBy"}
	fields, defs := fieldNames(mods)
	var sortable []string
	for _, n := range fields {
		f := defs[n]
		if k := f.Kind(); f.Indexed() && (k.Scalar() || k == content.KindLocalized && locale != "") {
			if !w.bytewise && !k.Numeric() {
				continue
			}
			sortable = append(sortable, n)
		}
	}
	if !w.bytewise {
		attrs = []string{"createdAt", "updatedAt", "publishedAt", "removedAt", "archivedAt", "deletedAt"}
	}
	var keys []rmcontent.SortKey
	for range 1 + r.IntN(3) {
		k := rmcontent.SortKey{Desc: r.IntN(2) == 0}
		switch n := r.IntN(40); {
		case n == 0:
			k.Field = w.pick(fields) // perhaps not sortable: a 400
		case n < 17:
			k.Attr = w.pick(attrs)
		default:
			k.Field = w.pick(sortable)
		}
		keys = append(keys, k)
	}
	return keys
}

// search is one random search, without its shape (who asks, paging).
type diffSearch struct {
	scope    diffScope
	sv, ms   *rmcontent.Expr
	sort     []rmcontent.SortKey
	locale   string
	ids      []string
	related  []rmcontent.Relation
	tags     []rmcontent.Tag
	tagTotal bool
}

func (w *diffWorld) randomSearch() diffSearch {
	r := w.rng
	sc := w.scopes()
	s := diffSearch{scope: sc[r.IntN(len(sc))]}
	mods := s.scope.modules
	if mods == nil {
		mods = w.mods
	}
	fields, defs := fieldNames(mods)
	if r.IntN(3) == 0 {
		s.locale = w.pick(diffLocales)
	}
	switch mode := r.IntN(13); {
	case mode < 3 && len(mods) == 1:
		// Only typed columns, sorted by them: the shapes read from
		// content_fields alone (fieldsFilter, pageWithTotal, the one
		// statement).
		var slotted []string
		for _, n := range fields {
			if _, ok := mods[0].read.Slots[n]; ok {
				slotted = append(slotted, n)
			}
		}
		s.sv = w.tree(0, func() *rmcontent.Expr { return w.valueLeaf(slotted, defs) })
		for range 1 + r.IntN(2) {
			if f := w.pick(slotted); w.bytewise || defs[f].Kind().Numeric() {
				s.sort = append(s.sort, rmcontent.SortKey{Field: f, Desc: r.IntN(2) == 0})
			}
		}
		return s
	case mode < 5:
		// Texts past the cut: compared, matched and sorted whole (or
		// by the cut).
		var long []string
		for _, n := range fields {
			for _, x := range w.texts[n] {
				if utf8.RuneCountInString(x) >= 490 {
					long = append(long, n)
					break
				}
			}
		}
		if len(long) > 0 {
			s.sv = w.tree(1, func() *rmcontent.Expr { return w.cutLeaf(w.pick(long)) })
			if w.bytewise && r.IntN(2) == 0 {
				s.sort = []rmcontent.SortKey{{Field: w.pick(long), Desc: r.IntN(2) == 0}}
			}
			return s
		}
		fallthrough
	case mode < 7:
		// One equality: counted from an index alone (keyCount, fieldsCount).
		if len(mods) == 1 && r.IntN(2) == 0 {
			// on content_keys, or not indexed at all
			var keyed []string
			for _, n := range fields {
				if _, ok := mods[0].read.Slots[n]; !ok && defs[n].Kind().Scalar() {
					keyed = append(keyed, n)
					if !defs[n].Indexed() {
						keyed = append(keyed, n, n) // read from the values
					}
				}
			}
			fields = keyed
		}
		e := w.valueLeaf(fields, defs)
		for e.Op != "=" || e.Value == nil {
			e = w.valueLeaf(fields, defs)
		}
		s.sv = e
		s.sort = w.sortKeys(mods, s.locale)
		return s
	case mode < 9:
		// Attributes only.
		s.ms = w.tree(1, w.metaLeaf)
		s.sort = w.sortKeys(mods, s.locale)
		return s
	}
	if r.IntN(6) > 0 {
		s.sv = w.tree(0, func() *rmcontent.Expr { return w.valueLeaf(fields, defs) })
	}
	if r.IntN(2) == 0 {
		s.ms = w.tree(0, w.metaLeaf)
	}
	s.sort = w.sortKeys(mods, s.locale)
	if r.IntN(12) == 0 {
		for _, i := range r.Perm(len(w.ids))[:r.IntN(30)] {
			s.ids = append(s.ids, w.ids[i])
		}
	}
	if r.IntN(8) == 0 {
		rel := rmcontent.Relation{Field: w.pick([]string{"author", "related", "ref2", "nosuch", "title", "kind"})}
		if r.IntN(3) == 0 {
			rel.IDs = []string{"*"}
		} else {
			for range 1 + r.IntN(3) {
				rel.IDs = append(rel.IDs, w.ids[r.IntN(45)])
			}
		}
		s.related = []rmcontent.Relation{rel}
	}
	if r.IntN(8) == 0 {
		// By id, or by name and value. AMBIGUOUS, so not generated: a
		// tag sent with both an id and a name, which Search matches by
		// either ("the item has the id, or the name and value"), while
		// content.Tag.Matches (module tags) compares ids alone when both
		// sides have one.
		for range 1 + r.IntN(2) {
			t := diffTags[r.IntN(len(diffTags))]
			if t.ID != "" && r.IntN(2) == 0 {
				s.tags = append(s.tags, rmcontent.Tag{ID: t.ID})
			} else {
				s.tags = append(s.tags, rmcontent.Tag{Name: t.Name, Value: t.Value})
			}
		}
		s.tagTotal = r.IntN(2) == 0
	}
	return s
}

// Who asks a search.
const (
	asAdmin  = iota // every item
	asApp           // an app's token: published items of app a1, counted and paged
	asRights        // a user with rights on some modules and items
)

// query is the search asked in one shape: by whom, paged, counted, with
// the module as read or not.
func (w *diffWorld) query(s diffSearch, who int) rmcontent.Query {
	r := w.rng
	q := rmcontent.Query{Now: now, SearchValues: s.sv, MetaSearch: s.ms, Sort: s.sort, Locale: s.locale, InstanceIDs: s.ids,
		RelatedTo: s.related, SegmentTags: s.tags, SegmentTotal: s.tagTotal}
	app := who == asApp
	switch who {
	case asApp:
		q.Apps, q.PublishedOnly, q.Count = []string{"a1"}, true, r.IntN(6) > 0
	case asAdmin:
		q.AllApps = true
		q.Count = r.IntN(2) == 0
		q.IncludeDeleted = r.IntN(10) == 0
	default:
		if r.IntN(2) == 0 {
			q.Apps = []string{"a2"}
		}
		for _, m := range []string{"mA", "mB", "mC", "mD"} {
			if r.IntN(3) == 0 {
				q.VisibleModules = append(q.VisibleModules, m)
			}
		}
		for _, i := range r.Perm(len(w.ids))[:r.IntN(40)] {
			q.VisibleItems = append(q.VisibleItems, w.ids[i])
		}
		q.PublishedOnly, q.Count = r.IntN(2) == 0, r.IntN(2) == 0
	}
	mods := s.scope.modules
	var visible []*dModule
	for _, m := range w.mods {
		if q.AllApps || who == asRights || slices.Contains(q.Apps, m.app) {
			visible = append(visible, m)
		}
	}
	if mods == nil {
		mods = visible
	} else {
		for _, m := range mods {
			q.ModuleIDs = append(q.ModuleIDs, m.id)
		}
	}
	_, q.Fields = fieldNames(mods)
	if len(mods) > 1 || s.scope.modules == nil {
		q.ModuleFields = map[string]map[string]content.Field{}
		for _, m := range mods {
			q.ModuleFields[m.id] = m.defs
		}
	}
	if len(q.ModuleIDs) == 1 && q.Count && r.IntN(2) == 0 {
		q.Slots, q.Revision = w.byID[q.ModuleIDs[0]].read.Slots, w.byID[q.ModuleIDs[0]].read.Revision
	}
	limits := []int{0, 1, 5, 10, 50}
	if q.Count || app && r.IntN(2) == 0 {
		limits = limits[1:]
	}
	q.Limit = limits[r.IntN(len(limits))]
	if r.IntN(3) == 0 {
		q.Offset = []int{1, 3, 10, 40, 500}[r.IntN(5)]
	}
	return q
}

func (w *diffWorld) run(searches int) {
	for range searches {
		s := w.randomSearch()
		for _, who := range []int{asAdmin, asApp, asRights}[:2+w.rng.IntN(2)] {
			if w.failures >= 8 {
				w.t.Fatalf("too many differences")
			}
			w.check(w.query(s, who))
		}
	}
	w.t.Logf("%v", w.stats)
}

func (w *diffWorld) check(q rmcontent.Query) {
	t := w.t
	t.Helper()
	wantPage, wantTotal, amb, wantErr := w.expect(q)
	if amb != "" {
		w.stats["skipped: "+amb]++
		return
	}
	// As the HTTP layer does: OneStatement first, whose statement Search
	// then runs.
	one := rmcontent.OneStatement(&q)
	start := time.Now()
	res, err := w.f.store.Search(w.f.ctx, q)
	if d := time.Since(start); d > 100*time.Millisecond && os.Getenv("DIFF_SLOW") != "" {
		t.Logf("slow (%v): %s", d, showQuery(q))
	}
	if err != nil && !fault.Is(err, fault.Invalid) {
		t.Fatalf("search %s: %v", showQuery(q), err)
	}
	switch {
	case wantErr != nil && err != nil:
		w.stats["invalid"]++
		return
	case wantErr != nil:
		w.failures++
		t.Errorf("search %s: got %d items, want a 400", showQuery(q), len(res.Items))
		return
	case err != nil:
		w.failures++
		t.Errorf("search %s: got %v, want %d items", showQuery(q), err, wantTotal)
		return
	}
	got := ids(res.Items)
	w.sameInMemory(q, res)
	if one {
		w.stats["one statement"]++
	}
	if wantTotal == 0 {
		w.stats["empty"]++
	} else {
		w.stats["found"]++
	}
	if slices.Equal(got, wantPage) && (!q.Count || res.Total == wantTotal) {
		return
	}
	w.failures++
	var diff []string
	for _, id := range got {
		if !slices.Contains(wantPage, id) {
			diff = append(diff, id)
		}
	}
	for _, id := range wantPage {
		if !slices.Contains(got, id) {
			diff = append(diff, id)
		}
	}
	t.Errorf("search %s:\n got  %v (total %d)\n want %v (total %d)\n items that differ:\n%s",
		showQuery(q), got, res.Total, wantPage, wantTotal, w.showItems(diff, q))
}

func showExpr(e *rmcontent.Expr) string {
	if e == nil {
		return "-"
	}
	if e.Cond != "" {
		var parts []string
		for _, o := range e.Operands {
			parts = append(parts, showExpr(o))
		}
		return e.Cond + "(" + strings.Join(parts, ", ") + ")"
	}
	v, _ := json.Marshal(e.Value)
	s := string(v)
	if rs := []rune(s); len(rs) > 80 {
		s = string(rs[:60]) + fmt.Sprintf("…(%d bytes)", len(s))
	}
	return fmt.Sprintf("%s %s %s:%s", e.Property, e.Op, s, e.Type)
}

func showQuery(q rmcontent.Query) string {
	return fmt.Sprintf("{modules %v apps %v all %v visible %v %v deleted %v published %v sv %s ms %s sort %+v locale %q ids %v related %+v tags %+v total %v count %v offset %d limit %d slots %v}",
		q.ModuleIDs, q.Apps, q.AllApps, q.VisibleModules, q.VisibleItems, q.IncludeDeleted, q.PublishedOnly, showExpr(q.SearchValues), showExpr(q.MetaSearch), q.Sort, q.Locale,
		q.InstanceIDs, q.RelatedTo, q.SegmentTags, q.SegmentTotal, q.Count, q.Offset, q.Limit, q.Slots != nil)
}

func (w *diffWorld) showItems(ids []string, q rmcontent.Query) string {
	var b strings.Builder
	fields := names(q.SearchValues)
	for _, k := range q.Sort {
		if k.Field != "" {
			fields = append(fields, k.Field)
		}
	}
	for _, id := range ids {
		i, _ := slices.BinarySearchFunc(w.items, id, func(it *dItem, id string) int { return strings.Compare(it.ID, id) })
		it := w.items[i]
		vals := map[string]any{}
		for _, f := range fields {
			if v, ok := it.vals[f]; ok {
				vals[f] = v
			}
		}
		v, _ := json.Marshal(vals)
		s := string(v)
		if rs := []rune(s); len(rs) > 300 {
			s = string(rs[:300]) + "…"
		}
		fmt.Fprintf(&b, "   %s (%s) name %q published %v removed %v archived %v deleted %v: %s\n", it.ID, it.Module, it.Name,
			ptr(it.PublishedAt), ptr(it.RemovedAt), ptr(it.ArchivedAt), ptr(it.DeletedAt), s)
	}
	return b.String()
}

func ptr(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// sameInMemory checks that when the store with an in-memory index answers
// q in memory, it answers as Search did (res): the same page, in the same
// order, with the same items and total.
func (w *diffWorld) sameInMemory(q rmcontent.Query, res rmcontent.Result) {
	t := w.t
	t.Helper()
	rmcontent.OneStatement(&q)
	got, done, err := w.mem.SearchInMemory(w.f.ctx, q)
	if err != nil {
		w.failures++
		t.Errorf("search %s in memory: %v", showQuery(q), err)
		return
	}
	if !done {
		return
	}
	w.stats["in memory"]++
	if !slices.Equal(ids(got.Items), ids(res.Items)) || got.Total != res.Total || !reflect.DeepEqual(got.Items, res.Items) {
		w.failures++
		t.Errorf("search %s (in memory: %v): page %v of %d, want %v of %d", showQuery(q), got.InMemory,
			ids(got.Items), got.Total, ids(res.Items), res.Total)
	}
}

// TestSearchInMemory checks the in-memory index (rc.Store.KeepInMemory)
// on the searches it answers: an app's searches of one module's typed
// columns (equalities on texts, likes, comparisons of numbers and dates,
// and/or trees of them), sorted by numbers, paged, with a total. Each is
// checked against the reference and, through sameInMemory, against the
// store without the index; most must be answered in memory (likes on
// texts beyond ASCII, numbers of more than 15 digits and empty pages are
// left to PostgreSQL). Sorts are by timestamps: a column holding a number
// of more than 15 digits is left to PostgreSQL whole.
func TestSearchInMemory(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{11, 12} { // likes by trigram lists, and not
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			w := newDiffWorld(t, seed)
			m := w.byID["mA"]
			// The world's numbers include some of more than 15 digits,
			// which leave their columns to PostgreSQL: dates and times
			// (timestamps) are mostly what the searches compare and sort.
			var texts, numbers, stamps []string
			for n, col := range m.read.Slots {
				switch {
				case col[0] == 't':
					texts = append(texts, n)
				case m.defs[n].Kind() == content.KindTimestamp:
					stamps = append(stamps, n)
				default:
					numbers = append(numbers, n)
				}
			}
			slices.Sort(texts)
			slices.Sort(numbers)
			slices.Sort(stamps)
			numeric := func() []string {
				if w.rng.IntN(5) == 0 {
					return numbers
				}
				return stamps
			}
			for range 300 {
				q := rmcontent.Query{Now: now, Apps: []string{"a1"}, PublishedOnly: true, Count: true, ModuleIDs: []string{m.id},
					Fields: m.defs, Slots: m.read.Slots, Revision: m.read.Revision,
					Limit: []int{1, 5, 20, 50}[w.rng.IntN(4)], Offset: []int{0, 0, 0, 1, 3, 10, 40}[w.rng.IntN(7)]}
				q.SearchValues = w.tree(1, func() *rmcontent.Expr { return w.memLeaf(texts, numeric()) })
				if w.rng.IntN(2) == 0 { // an equality to start from
					q.SearchValues = &rmcontent.Expr{Cond: "and", Operands: []*rmcontent.Expr{w.memEq(texts), q.SearchValues}}
				}
				for range 1 + w.rng.IntN(2) {
					q.Sort = append(q.Sort, rmcontent.SortKey{Field: w.pick(stamps), Desc: w.rng.IntN(2) == 0})
				}
				w.check(q)
			}
			t.Logf("%v", w.stats)
			if w.stats["in memory"] < 60 {
				t.Errorf("%d of 300 searches answered in memory, want at least 60", w.stats["in memory"])
			}
		})
	}
}

// memEq is an equality on a text column, mostly with a text items hold.
func (w *diffWorld) memEq(texts []string) *rmcontent.Expr {
	f := w.pick(texts)
	v := w.pick(diffWords)
	if held := w.texts[f]; len(held) > 0 && w.rng.IntN(4) > 0 {
		v = w.pick(held)
	}
	return &rmcontent.Expr{Op: "=", Property: f, Value: v, Type: "string"}
}

// memLeaf is an operation of the kinds the in-memory index judges, and a
// few it leaves to PostgreSQL.
func (w *diffWorld) memLeaf(texts, numbers []string) *rmcontent.Expr {
	r := w.rng
	switch n := r.IntN(10); {
	case n < 3:
		return w.memEq(texts)
	case n < 6:
		f := w.pick(texts)
		s := w.pick(diffWords)
		if held := w.texts[f]; len(held) > 0 && r.IntN(3) > 0 {
			s = w.pick(held)
		}
		if rs := []rune(s); len(rs) > 3 {
			i := r.IntN(len(rs) - 2)
			s = string(rs[i : i+3+r.IntN(len(rs)-i-2)])
		}
		if utf8.RuneCountInString(s) < 3 {
			s = "abc"
		}
		if r.IntN(2) == 0 {
			s = strings.ToUpper(s)
		}
		return &rmcontent.Expr{Op: "like", Property: f, Value: s, Type: "string"}
	case n < 9:
		f := w.pick(numbers)
		var v any = json.Number(w.pick(diffNumbers))
		if held := w.nums[f]; len(held) > 0 && r.IntN(3) > 0 {
			v = held[r.IntN(len(held))]
		}
		typ := "number"
		if w.byID["mA"].defs[f].Kind() == content.KindTimestamp {
			typ = "date"
			if len(w.nums[f]) == 0 || r.IntN(3) == 0 {
				v = json.Number(strconv.FormatInt(now+int64(r.IntN(200_000)-100_000)*1000, 10))
			}
		}
		return &rmcontent.Expr{Op: w.pick([]string{"=", ">", ">=", "<", "<="}), Property: f, Value: v, Type: typ}
	}
	// Left to PostgreSQL.
	return &rmcontent.Expr{Op: w.pick([]string{"!=", "in"}), Property: w.pick(texts), Value: []any{w.pick(diffWords)}, Type: "string"}
}
