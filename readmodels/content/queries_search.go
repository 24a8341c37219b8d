package content

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/halocms/halocms/domain/content"
)

// MaxAll bounds the items of a search that asks for every match (Skip).
const MaxAll = 10000

// SearchRequest is a content search as a client asks for it (wire
// reference §5.2), its syntax not yet parsed: a search answered from the
// answer cache costs no parsing.
type SearchRequest struct {
	// Key is the request as sent: with the app it identifies an answer
	// in the answer cache.
	Key []byte
	// Fresh: the client asks for an answer not taken from the cache
	// (which still keeps it).
	Fresh bool

	ModuleIDs   []string
	ModuleNames []string
	InstanceIDs []string
	Locale      string
	// SearchValues and MetaSearch are expression trees (ParseExpr), Sort
	// a sort (ParseSort).
	SearchValues, MetaSearch json.RawMessage
	Sort                     string
	RelatedTo                []Relation
	SegmentTags              []Tag
	SegmentTotal             bool
	// Page (from 1) and Limit choose a page; Skip asks for every match
	// (up to MaxAll) without a total.
	Page, Limit int
	Skip        bool
	// Include names the relation fields whose items the answer carries
	// ("all": every one), Fields the fields it keeps.
	Include []string
	Fields  []string
	// PreviewAt, when not zero, asks for what an app's token would get
	// at that instant, for a CMS user (see previewScope): scheduled
	// publications and expiries applied.
	PreviewAt time.Time

	// Encode turns the page into the answer's bytes, which the cache
	// keeps.
	Encode func(Page) ([]byte, error)
}

// Page is what a search found.
type Page struct {
	Items []Item
	// Total is the number of matches (not with Skip).
	Total int
	// Related are the items the included relation fields point at, by id
	// (nil without Include).
	Related map[string]Item

	fields    moduleFields
	freshness Freshness
	index     string
}

// FieldsOf returns the field definitions of an item's module.
func (p *Page) FieldsOf(module string) map[string]content.Field { return p.fields.of(module) }

// Answer is a search's encoded answer.
type Answer struct {
	Body []byte
	// Cache says how the cache lookup went: hit, miss, stale (an answer
	// was kept, but the content changed or a scheduled date passed
	// since), bypass (the client asked for a fresh answer), or "" (the
	// search is not one the cache keeps).
	Cache string
	// Index says where the page came from: memory or postgresql ("" for
	// a hit).
	Index string
}

// Search answers a search for the actor in ctx, within the search
// timeout, waiting in the read line included: one that costs more is
// stopped, in PostgreSQL too (pgx asks the server to cancel a statement
// whose context ended).
func (q *Queries) Search(ctx context.Context, req SearchRequest) (Answer, error) {
	ctx, cancel := q.bounded(ctx)
	defer cancel()
	ans, err := q.search(ctx, req)
	return ans, q.stopped(ctx, err)
}

func (q *Queries) search(ctx context.Context, req SearchRequest) (Answer, error) {
	sc, err := q.scope(ctx)
	if err != nil {
		return Answer{}, err
	}
	now := time.Now().UnixMilli()
	if !req.PreviewAt.IsZero() {
		if sc, err = q.previewScope(ctx, sc, req); err != nil {
			return Answer{}, err
		}
		now = req.PreviewAt.UnixMilli()
	}
	app, cacheable := sc.cacheableApp()
	cacheable = cacheable && q.cache != nil
	var key, lookup string
	if cacheable {
		key = answerKey(app, req.Key)
		if req.Fresh {
			lookup = "bypass"
		} else if a, ok := q.cache.get(key); ok {
			v, err := q.store.Version(ctx, app)
			if err != nil {
				return Answer{}, err
			}
			if v == a.version && now < a.until {
				q.meter.CacheLookup("hit")
				return Answer{Body: a.body, Cache: "hit"}, nil
			}
			lookup = "stale"
		} else {
			lookup = "miss"
		}
		q.meter.CacheLookup(lookup)
	}
	s := Query{InstanceIDs: req.InstanceIDs, Locale: req.Locale, Now: now, Count: true,
		RelatedTo: req.RelatedTo, SegmentTags: req.SegmentTags, SegmentTotal: req.SegmentTotal}
	sc.apply(&s)
	if cacheable {
		// The answer is tagged with the app's state in the search's own
		// snapshot: a change applied since is a newer version, so the
		// answer is never served past it.
		s.FreshnessOf = app
	}
	page, leave, err := q.run(ctx, sc, &s, req)
	if err != nil {
		return Answer{}, err
	}
	defer leave()
	body, err := req.Encode(page)
	if err != nil {
		return Answer{}, err
	}
	if cacheable {
		q.cache.put(key, cachedAnswer{version: page.freshness.Version, until: page.freshness.Until, body: body})
	}
	return Answer{Body: body, Cache: lookup, Index: page.index}, nil
}

// run parses and resolves a search that the cache did not answer, then
// runs it (see route). The caller calls leave once it has encoded the
// page: the search keeps its place in the read line until then.
func (q *Queries) run(ctx context.Context, sc scope, s *Query, req SearchRequest) (p Page, leave func(), err error) {
	mods := q.knownModule(sc, s, req.ModuleIDs, req.ModuleNames)
	if !s.Known {
		if mods, err = q.searchModules(ctx, sc, s, req.ModuleIDs, req.ModuleNames); err != nil {
			return Page{}, nil, err
		}
	}
	if s.SearchValues, err = ParseExpr(req.SearchValues, "searchValues"); err != nil {
		return Page{}, nil, err
	}
	if s.MetaSearch, err = ParseExpr(req.MetaSearch, "metaSearch"); err != nil {
		return Page{}, nil, err
	}
	if s.Sort, err = ParseSort(req.Sort); err != nil {
		return Page{}, nil, err
	}
	if req.Skip {
		s.Limit, s.Count = MaxAll, false
	} else {
		s.Offset, s.Limit = (req.Page-1)*req.Limit, req.Limit
	}
	s.RawValues = len(req.Include) == 0 && len(req.Fields) == 0 // the answer passes them on as they are
	res, leave, err := q.route(ctx, sc, s, req, &mods)
	if err != nil {
		return Page{}, nil, err
	}
	index := "postgresql"
	if res.InMemory {
		index = "memory"
	}
	q.meter.Searched(index)
	p = Page{Items: res.Items, Total: res.Total, fields: moduleFields{one: s.Fields, mods: mods},
		freshness: res.Freshness, index: index}
	if len(req.Include) > 0 {
		if p.Related, err = q.related(ctx, *s, &p, req.Include); err != nil {
			leave()
			return Page{}, nil, err
		}
	}
	return p, leave, nil
}

// route answers s from the in-memory copy of its module when it can (not
// with included items, which are read from PostgreSQL), else from
// PostgreSQL, in the read line either way; leave gives the place back.
// The copy reads PostgreSQL once, by primary key, so it takes one place;
// when it cannot answer, the search gives its place back and waits for
// PostgreSQL's: two places for a search answered by one statement, which
// keeps PostgreSQL busy from start to end, where the others leave it idle
// between their statements. A search of a module as last read (Known)
// that PostgreSQL could not verify reads the modules afresh into mods.
func (q *Queries) route(ctx context.Context, sc scope, s *Query, req SearchRequest, mods *[]Module) (Result, func(), error) {
	oneStatement := OneStatement(s) // compiled once, for either search
	if len(req.Include) == 0 && InMemoryShape(*s) {
		leave, err := q.line.Enter(ctx, 1)
		if err != nil {
			return Result{}, nil, err
		}
		res, done, err := q.store.SearchInMemory(ctx, *s)
		if err != nil || !done {
			leave()
		}
		if err != nil {
			return Result{}, nil, err
		}
		if done {
			return res, leave, nil
		}
	}
	weight := int64(1)
	if oneStatement {
		weight = 2
	}
	leave, err := q.line.Enter(ctx, weight)
	if err != nil {
		return Result{}, nil, err
	}
	res, err := q.store.Search(ctx, *s)
	if errors.Is(err, ErrModuleUnverified) {
		s.Known = false
		if *mods, err = q.searchModules(ctx, sc, s, req.ModuleIDs, req.ModuleNames); err == nil {
			res, err = q.store.Search(ctx, *s)
		}
	}
	if err != nil {
		leave()
		return Result{}, nil, err
	}
	return res, leave, nil
}

// related reads the items that the included relation fields of the page's
// items point at, with the search's visibility: each item's relations are
// those of its own module's fields, and the related items are localized
// with their own modules' fields.
func (q *Queries) related(ctx context.Context, s Query, p *Page, include []string) (map[string]Item, error) {
	var ids []string
	for _, it := range p.Items {
		defs := p.FieldsOf(it.Module)
		for name, v := range it.Values {
			if f, ok := defs[name]; ok && Includes(include, name) {
				ids = append(ids, content.RelationIDs(f, v)...)
			}
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rq := Query{AllApps: s.AllApps, Apps: s.Apps, VisibleModules: s.VisibleModules, VisibleItems: s.VisibleItems,
		PublishedOnly: s.PublishedOnly, InstanceIDs: ids, Limit: len(ids), Locale: s.Locale, Now: s.Now}
	res, err := q.store.Search(ctx, rq)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Item, len(res.Items))
	for _, it := range res.Items {
		out[it.ID] = it
	}
	return out, nil
}

// Includes reports whether include names the field name.
func Includes(include []string, name string) bool {
	return slices.Contains(include, "all") || slices.Contains(include, name)
}

// moduleFields gives the field definitions of an item's module: those of
// one, when the search had one module or none (fieldsOf of them), or else
// those of the item's module among mods, by name, made when first asked
// for (one when the module is not among them).
type moduleFields struct {
	one  map[string]content.Field
	mods []Module
	by   map[string]map[string]content.Field
}

func (d *moduleFields) of(module string) map[string]content.Field {
	if len(d.mods) <= 1 {
		return d.one
	}
	if f, ok := d.by[module]; ok {
		return f
	}
	i := slices.IndexFunc(d.mods, func(m Module) bool { return m.ID == module })
	if i < 0 {
		return d.one
	}
	if d.by == nil {
		d.by = map[string]map[string]content.Field{}
	}
	f := fieldsOf(d.mods[i : i+1])
	d.by[module] = f
	return f
}
