package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Search and sync request bodies (wire reference §5.2, §5.6).

type relationBody struct {
	FieldName   string   `json:"fieldName"`
	InstanceIDs []string `json:"instanceIds"`
}

type paginationBody struct {
	Page  any `json:"page"`
	Limit any `json:"limit"`
	Skip  any `json:"skip"`
}

type searchBody struct {
	ModuleIDs    []string        `json:"moduleIds"`
	ModuleName   *string         `json:"moduleName"`
	ModuleNames  []string        `json:"moduleNames"`
	InstanceIDs  []string        `json:"instanceIds"`
	RelatedTo    []relationBody  `json:"relatedTo"`
	SearchValues json.RawMessage `json:"searchValues"`
	MetaSearch   json.RawMessage `json:"metaSearch"`
	Fields       []string        `json:"fields"`
	Include      json.RawMessage `json:"include"`
	Pagination   *paginationBody `json:"pagination"`
	SegmentTags  []tagBody       `json:"segmentTags"`
	Tags         []tagBody       `json:"tags"` // iOS's SearchQuery.tags(_:): more segment tags
	SegmentMode  string          `json:"segmentMode"`
	Sort         string          `json:"sort"`
	Locale       string          `json:"locale"`
}

// Limits on expression trees.
const (
	maxExprDepth = 32
	maxExprNodes = 500
	// maxExprValues bounds the values of a tree's in and !in lists, all
	// together: each is compared with every candidate's values.
	maxExprValues = 1000
)

// parseExpr reads a searchValues/metaSearch tree strictly: a node is a
// condition {condition, operands} or an operation {operation, property,
// value, type}; anything else is a 400.
func parseExpr(raw json.RawMessage, where string) (*rmcontent.Expr, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fault.Invalidf("%s: malformed expression", where).With("field", where)
	}
	return exprOf(v, where, 1, &exprBudget{})
}

// exprBudget counts what a tree holds so far.
type exprBudget struct{ nodes, values int }

func exprOf(v any, path string, depth int, b *exprBudget) (*rmcontent.Expr, error) {
	b.nodes++
	if depth > maxExprDepth {
		return nil, fault.Invalidf("%s: expressions may nest at most %d levels", path, maxExprDepth).With("field", path)
	}
	if b.nodes > maxExprNodes {
		return nil, fault.Invalidf("expressions may have at most %d nodes", maxExprNodes).With("field", path)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fault.Invalidf("%s: an expression node must be an object", path).With("field", path)
	}
	e := &rmcontent.Expr{}
	for k, x := range m {
		switch k {
		case "condition":
			s, ok := x.(string)
			if !ok || (strings.ToLower(s) != "and" && strings.ToLower(s) != "or") {
				return nil, fault.Invalidf(`%s.condition must be "and" or "or"`, path).With("field", path+".condition")
			}
			e.Cond = strings.ToLower(s)
		case "operands":
			arr, ok := x.([]any)
			if !ok {
				return nil, fault.Invalidf("%s.operands must be an array", path).With("field", path+".operands")
			}
			for i, o := range arr {
				c, err := exprOf(o, path+".operands["+strconv.Itoa(i)+"]", depth+1, b)
				if err != nil {
					return nil, err
				}
				e.Operands = append(e.Operands, c)
			}
		case "operation":
			s, _ := x.(string)
			e.Op = s
		case "property":
			s, ok := x.(string)
			if !ok {
				return nil, fault.Invalidf("%s.property must be a string", path).With("field", path+".property")
			}
			e.Property = s
		case "value":
			if list, ok := x.([]any); ok {
				if b.values += len(list); b.values > maxExprValues {
					return nil, fault.Invalidf("the lists of an expression may hold at most %d values in all", maxExprValues).
						With("field", path+".value")
				}
			}
			e.Value = x
		case "type":
			s, ok := x.(string)
			if !ok {
				return nil, fault.Invalidf("%s.type must be string, number, date, boolean or null", path).With("field", path+".type")
			}
			e.Type = s
		default:
			return nil, fault.Invalidf("%s: unknown key %q", path, k).With("field", path+"."+k)
		}
	}
	switch {
	case e.Cond != "" && e.Op != "":
		return nil, fault.Invalidf("%s: a node is either a condition or an operation", path).With("field", path)
	case e.Cond != "":
		if len(e.Operands) == 0 {
			return nil, fault.Invalidf("%s: a condition needs operands", path).With("field", path+".operands")
		}
	case e.Op == "":
		return nil, fault.Invalidf("%s: a node needs a condition or an operation", path).With("field", path)
	}
	switch e.Type {
	case "", "string", "number", "date", "null", "boolean":
	default:
		return nil, fault.Invalidf("%s.type must be string, number, date, boolean or null", path).With("field", path+".type")
	}
	return e, nil
}

// searchContext bounds a search by Config.SearchTimeout (none if negative).
func (s *server) searchContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.SearchTimeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.cfg.SearchTimeout)
}

// searchFault reports a search stopped by its SearchTimeout as a 503 that
// says so, and any other error as it is.
func (s *server) searchFault(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.New(fault.Unavailable, "the search took longer than %s and was stopped; narrow it (fewer modules, operands or values)",
			s.cfg.SearchTimeout)
	}
	return err
}

// deletedModules resolves an incremental sync's module reference among
// deleted modules, when no live one answers to it: a client that synced a
// module before its deletion is told that its items are gone (they were
// deleted with it). By name, the most recently deleted module of that
// name in each visible app.
func (s *server) deletedModules(ctx context.Context, sc readScope, ids, names []string) ([]rmcontent.Module, error) {
	mods, err := s.ContentRead.Modules(ctx, rmcontent.ModuleQuery{AllApps: true, IDs: ids, Names: names, Deleted: true})
	if err != nil {
		return nil, err
	}
	var out []rmcontent.Module
	for _, m := range sc.visible(mods) {
		if !slices.ContainsFunc(out, func(o rmcontent.Module) bool { return o.App == m.App }) {
			out = append(out, m)
		}
	}
	return out, nil
}

// flexInt reads a number or a numeric string.
func flexInt(v any, name string, def int) (int, error) {
	switch x := v.(type) {
	case nil:
		return def, nil
	case json.Number:
		f, err := x.Float64()
		if err == nil && f == math.Trunc(f) && f >= 0 && f <= 1<<30 {
			return int(f), nil
		}
	case string:
		if n, err := strconv.Atoi(x); err == nil && n >= 0 {
			return n, nil
		}
	}
	return 0, fault.Invalidf("pagination.%s must be a whole number", name).With("field", "pagination."+name)
}

// flexBool reads a boolean or the strings "true"/"false".
func flexBool(v any, name string) (bool, error) {
	switch x := v.(type) {
	case nil:
		return false, nil
	case bool:
		return x, nil
	case string:
		if b, err := strconv.ParseBool(x); err == nil {
			return b, nil
		}
	}
	return false, fault.Invalidf("%s must be true or false", name).With("field", name)
}

// resolveModules turns the request's module references into the visible
// modules they name; ok is false when the request names none (search all).
func (s *server) resolveModules(ctx context.Context, sc readScope, ids []string, names []string) ([]rmcontent.Module, bool, error) {
	if ids == nil && names == nil {
		mods, err := s.ContentRead.Modules(ctx, rmcontent.ModuleQuery{AllApps: true})
		return sc.visible(mods), false, err
	}
	var out []rmcontent.Module
	if ids != nil {
		mods, err := s.ContentRead.Modules(ctx, rmcontent.ModuleQuery{AllApps: true, IDs: ids})
		if err != nil {
			return nil, true, err
		}
		out = append(out, mods...)
	}
	if names != nil {
		mods, err := s.ContentRead.Modules(ctx, rmcontent.ModuleQuery{AllApps: true, Names: names})
		if err != nil {
			return nil, true, err
		}
		out = append(out, mods...)
	}
	return sc.visible(out), true, nil
}

// searchModules restricts q to the visible modules the request names (all
// visible modules when it names none), gives it their fields and returns
// them.
func (s *server) searchModules(ctx context.Context, sc readScope, q *rmcontent.Query, ids, names []string) ([]rmcontent.Module, error) {
	mods, named, err := s.resolveModules(ctx, sc, ids, names)
	if err != nil {
		return nil, err
	}
	useModules(q, mods, named)
	return mods, nil
}

// useModules restricts q to mods (when the request named modules) and gives
// it their fields: each module's too when the search may span several.
func useModules(q *rmcontent.Query, mods []rmcontent.Module, named bool) {
	q.Fields = fieldsOf(mods)
	q.ModuleIDs, q.Slots, q.Revision, q.ModuleFields = nil, nil, 0, nil
	if len(mods) > 1 || !named {
		q.ModuleFields = make(map[string]map[string]content.Field, len(mods))
		for _, m := range mods {
			q.ModuleFields[m.ID] = fieldsOf([]rmcontent.Module{m})
		}
	}
	if named {
		q.ModuleIDs = []string{}
		for _, m := range mods {
			q.ModuleIDs = append(q.ModuleIDs, m.ID)
		}
		if len(mods) == 1 {
			q.Slots, q.Revision = mods[0].Slots, mods[0].Revision
		}
	}
}

// knownModule gives q the one module the request names by id as the
// store last read it, when it has it and the caller may see it, marks q
// Known (see rmcontent.Query.Known) and returns the module: a search of
// one module then costs no read of the module unless it changed.
func (s *server) knownModule(sc readScope, q *rmcontent.Query, ids, names []string) []rmcontent.Module {
	if len(ids) != 1 || names != nil {
		return nil
	}
	m, ok := s.ContentRead.KnownModule(ids[0])
	if !ok {
		return nil
	}
	mods := sc.visible([]rmcontent.Module{m})
	if len(mods) != 1 {
		return nil
	}
	useModules(q, mods, true)
	q.Known = true
	return mods
}

func (sc readScope) visible(mods []rmcontent.Module) []rmcontent.Module {
	out := []rmcontent.Module{}
	for _, m := range mods {
		if sc.canSeeModule(m) && !slices.ContainsFunc(out, func(o rmcontent.Module) bool { return o.ID == m.ID }) {
			out = append(out, m)
		}
	}
	return out
}

func fieldsOf(mods []rmcontent.Module) map[string]content.Field {
	out := map[string]content.Field{}
	for _, m := range mods {
		for _, f := range m.Fields {
			if _, ok := out[f.Name]; !ok {
				out[f.Name] = f
			}
		}
	}
	return out
}

func (sc readScope) apply(q *rmcontent.Query) {
	q.AllApps, q.Apps, q.PublishedOnly = sc.all, sc.apps, sc.publishedOnly
	q.VisibleModules, q.VisibleItems = sc.modules, sc.items
}

func (s *server) search(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, badJSON(err))
		return
	}
	var b searchBody
	if err := decodeFrom(bytes.NewReader(body), &b); err != nil {
		s.fail(w, r, err)
		return
	}
	// A search has SearchTimeout to answer, waiting in line included: one
	// that costs more is stopped, in PostgreSQL too (pgx asks the server
	// to cancel a statement whose context ended).
	ctx, cancel := s.searchContext(r.Context())
	defer cancel()
	fail := func(err error) { s.fail(w, r, s.searchFault(ctx, err)) }
	sc, err := s.readScope(ctx)
	if err != nil {
		fail(err)
		return
	}
	now := time.Now().UnixMilli()
	app, cacheable := sc.cacheableApp()
	cacheable = cacheable && s.cache != nil
	var key, lookup string
	if cacheable {
		key = searchKey(app, body)
		if noCache(r) {
			lookup = "bypass"
		} else if a, ok := s.cache.get(key); ok {
			v, err := s.ContentRead.Version(ctx, app)
			if err != nil {
				fail(err)
				return
			}
			if v == a.version && now < a.until {
				s.cache.count("hit")
				writeCached(w, a.body, "hit")
				return
			}
			lookup = "stale"
		} else {
			lookup = "miss"
		}
		s.cache.count(lookup)
	}
	q := rmcontent.Query{InstanceIDs: b.InstanceIDs, Locale: b.Locale, Now: now, Count: true}
	sc.apply(&q)
	if cacheable {
		// The answer is tagged with the app's state in the search's own
		// snapshot: a change applied since is a newer version, so the
		// answer is never served past it.
		q.FreshnessOf = app
	}
	names := b.ModuleNames
	if b.ModuleName != nil {
		names = append(slices.Clone(names), *b.ModuleName)
	}
	mods := s.knownModule(sc, &q, b.ModuleIDs, names)
	if !q.Known {
		if mods, err = s.searchModules(ctx, sc, &q, b.ModuleIDs, names); err != nil {
			fail(err)
			return
		}
	}
	if q.SearchValues, err = parseExpr(b.SearchValues, "searchValues"); err != nil {
		fail(err)
		return
	}
	if q.MetaSearch, err = parseExpr(b.MetaSearch, "metaSearch"); err != nil {
		fail(err)
		return
	}
	for i, rel := range b.RelatedTo {
		if rel.FieldName == "" {
			s.fail(w, r, fault.Invalidf("relatedTo[%d].fieldName is required", i).With("field", "relatedTo"))
			return
		}
		q.RelatedTo = append(q.RelatedTo, rmcontent.Relation{Field: strings.TrimPrefix(rel.FieldName, "values."), IDs: rel.InstanceIDs})
	}
	tags, err := tagsFromBody(slices.Concat(b.SegmentTags, b.Tags))
	if err != nil {
		fail(err)
		return
	}
	for _, t := range tags {
		q.SegmentTags = append(q.SegmentTags, rmcontent.Tag{ID: t.ID, Name: t.Name, Value: t.Value, TagType: t.TagType})
	}
	switch strings.ToLower(b.SegmentMode) {
	case "", "partial":
	case "total":
		q.SegmentTotal = true
	default:
		s.fail(w, r, fault.Invalidf(`segmentMode must be "partial" or "total"`).With("field", "segmentMode"))
		return
	}
	if q.Sort, err = rmcontent.ParseSort(b.Sort); err != nil {
		fail(err)
		return
	}
	page, limit, skip := 1, defaultLimit, false
	if p := b.Pagination; p != nil {
		if skip, err = flexBool(p.Skip, "pagination.skip"); err == nil {
			if page, err = flexInt(p.Page, "page", 1); err == nil {
				limit, err = flexInt(p.Limit, "limit", defaultLimit)
			}
		}
		if err != nil {
			fail(err)
			return
		}
		if page < 1 {
			page = 1
		}
		if limit < 1 || limit > maxPage {
			s.fail(w, r, fault.Invalidf("pagination.limit must be from 1 to %d", maxPage).With("field", "pagination.limit"))
			return
		}
	}
	if skip {
		q.Limit, q.Count = maxAll, false
	} else {
		q.Offset, q.Limit = (page-1)*limit, limit
	}
	include, err := includeFields(b.Include)
	if err != nil {
		fail(err)
		return
	}
	q.RawValues = len(include) == 0 && len(b.Fields) == 0 // present passes them on as they are
	// Compiled once, for either search.
	oneStatement := rmcontent.OneStatement(&q)
	// The in-memory copy of the module first (not with included items,
	// which present reads from PostgreSQL): it reads PostgreSQL once, by
	// primary key, so it takes one place in line; when it cannot answer,
	// the search gives its place back and waits for PostgreSQL's.
	var res rmcontent.Result
	inMemory := false
	if len(include) == 0 && rmcontent.InMemoryShape(q) {
		release, err := s.inLine(ctx, 1)
		if err != nil {
			fail(err)
			return
		}
		res, inMemory, err = s.ContentRead.SearchInMemory(ctx, q)
		if inMemory {
			defer release()
		} else {
			release()
		}
		if err != nil {
			fail(err)
			return
		}
	}
	if !inMemory {
		// In line once compiled, after the cache: a hit never waits.
		weight := int64(1)
		if oneStatement {
			weight = 2
		}
		release, err := s.inLine(ctx, weight)
		if err != nil {
			fail(err)
			return
		}
		defer release()
		res, err = s.ContentRead.Search(ctx, q)
		if errors.Is(err, rmcontent.ErrModuleUnverified) {
			q.Known = false
			if mods, err = s.searchModules(ctx, sc, &q, b.ModuleIDs, names); err == nil {
				res, err = s.ContentRead.Search(ctx, q)
			}
		}
		if err != nil {
			fail(err)
			return
		}
	}
	index := "postgresql"
	if res.InMemory {
		index = "memory"
	}
	s.Metrics.Searched(index)
	w.Header().Set("X-Search-Index", index)
	items, err := s.present(ctx, q, mods, res.Items, include, b.Fields)
	if err != nil {
		fail(err)
		return
	}
	var pg *paginationJSON
	if !skip {
		p := pagination(page, limit, res.Total)
		pg = &p
	}
	answer, err := encodeAnswer(items, pg)
	if err != nil {
		fail(err)
		return
	}
	if !cacheable {
		writeEncoded(w, answer)
		return
	}
	s.cache.put(key, cachedAnswer{version: res.Freshness.Version, until: res.Freshness.Until, body: answer})
	writeCached(w, answer, lookup)
}

// includeFields reads include: ["all"], a list of field names, or true.
func includeFields(raw json.RawMessage) ([]string, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return nil, nil
	}
	if string(raw) == "true" {
		return []string{"all"}, nil
	}
	var names []string
	if err := json.Unmarshal(raw, &names); err != nil {
		return nil, fault.Invalidf(`include must be ["all"] or a list of field names`).With("field", "include")
	}
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "values.")
	}
	return names, nil
}

// present turns items, found by q in mods (the modules searched), into
// their wire form: relations populated one level for the included fields,
// values cut down to the requested fields. Each item's relations are those
// of its own module's fields, and the related items are localized by the
// read model with their own modules' fields.
func (s *server) present(ctx context.Context, q rmcontent.Query, mods []rmcontent.Module, items []rmcontent.Item, include, fields []string) ([]instanceJSON, error) {
	out := make([]instanceJSON, len(items))
	var related map[string]instanceJSON
	mf := moduleFields{one: q.Fields, mods: mods}
	if len(include) > 0 {
		var ids []string
		for _, it := range items {
			defs := mf.of(it.Module)
			for name, v := range it.Values {
				if f, ok := defs[name]; ok && includes(include, name) {
					ids = append(ids, content.RelationIDs(f, v)...)
				}
			}
		}
		if len(ids) > 0 {
			rq := rmcontent.Query{AllApps: q.AllApps, Apps: q.Apps, VisibleModules: q.VisibleModules, VisibleItems: q.VisibleItems,
				PublishedOnly: q.PublishedOnly, InstanceIDs: ids, Limit: len(ids), Locale: q.Locale, Now: q.Now}
			res, err := s.ContentRead.Search(ctx, rq)
			if err != nil {
				return nil, err
			}
			related = map[string]instanceJSON{}
			for _, it := range res.Items {
				related[it.ID] = instanceJSONOf(it)
			}
		}
	}
	keep := map[string]bool{}
	for _, f := range fields {
		keep[strings.TrimPrefix(f, "values.")] = true
	}
	for i, it := range items {
		j := instanceJSONOf(it)
		if related != nil || len(keep) > 0 {
			vals := map[string]any{}
			var defs map[string]content.Field
			if related != nil {
				defs = mf.of(it.Module)
			}
			for name, v := range it.Values {
				if len(keep) > 0 && !keep[name] {
					continue
				}
				if f, ok := defs[name]; ok && includes(include, name) {
					v = populate(f, v, related)
				}
				vals[name] = v
			}
			j.Values = vals
		}
		out[i] = j
	}
	return out, nil
}

// moduleFields gives the field definitions of an item's module: those of
// one, when the search had one module or none (fieldsOf of them), or else
// those of the item's module among mods, by name, made when first asked
// for (one when the module is not among them).
type moduleFields struct {
	one  map[string]content.Field
	mods []rmcontent.Module
	by   map[string]map[string]content.Field
}

func (d *moduleFields) of(module string) map[string]content.Field {
	if len(d.mods) <= 1 {
		return d.one
	}
	if f, ok := d.by[module]; ok {
		return f
	}
	i := slices.IndexFunc(d.mods, func(m rmcontent.Module) bool { return m.ID == module })
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

func includes(include []string, name string) bool {
	return slices.Contains(include, "all") || slices.Contains(include, name)
}

func populate(f content.Field, v any, related map[string]instanceJSON) any {
	switch f.Kind() {
	case content.KindRelation:
		if id, ok := v.(string); ok {
			if r, ok := related[id]; ok {
				return r
			}
		}
	case content.KindRelations:
		arr, _ := v.([]any)
		out := make([]any, 0, len(arr))
		for _, e := range arr {
			if id, ok := e.(string); ok {
				if r, ok := related[id]; ok {
					out = append(out, r)
					continue
				}
			}
			out = append(out, e)
		}
		return out
	}
	return v
}

// listInstances serves GET /api/generalcontent/instance?module=&page=&limit=&skip=.
func (s *server) listInstances(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	sc, err := s.readScope(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	page, limit, err := pageParams(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	skip, err := boolParam(r, "skip", false)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	q := rmcontent.Query{Now: time.Now().UnixMilli(), Locale: r.URL.Query().Get("locale")}
	sc.apply(&q)
	var ids []string
	if m := r.URL.Query().Get("module"); m != "" {
		ids = []string{m}
	}
	if _, err := s.searchModules(ctx, sc, &q, ids, nil); err != nil {
		s.fail(w, r, err)
		return
	}
	if skip {
		q.Limit = maxAll
	} else {
		q.Offset, q.Limit, q.Count = (page-1)*limit, limit, true
	}
	res, err := s.ContentRead.Search(ctx, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	items, err := s.present(ctx, q, nil, res.Items, nil, nil)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if skip {
		writeJSON(w, http.StatusOK, items)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pagination": pagination(page, limit, res.Total), "items": items})
}

type syncBody struct {
	ModuleName *string `json:"moduleName"`
	ModuleID   *string `json:"moduleId"`
	Locale     string  `json:"locale"`
	FromSync   any     `json:"fromSync"`
	ToSync     any     `json:"toSync"`
}

type deletedJSON struct {
	ID string `json:"id"`
}

func (s *server) sync(w http.ResponseWriter, r *http.Request) {
	var b syncBody
	if err := decode(r, &b); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	sc, err := s.readScope(ctx)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	var ids, names []string
	switch {
	case b.ModuleID != nil && *b.ModuleID != "": // iOS sends "" when it syncs by name
		ids = []string{*b.ModuleID}
	case b.ModuleName != nil:
		names = []string{*b.ModuleName}
	default:
		s.fail(w, r, fault.Invalidf("moduleName or moduleId is required").With("field", "moduleName"))
		return
	}
	mods, _, err := s.resolveModules(ctx, sc, ids, names)
	if err == nil && len(mods) == 0 && b.FromSync != nil {
		mods, err = s.deletedModules(ctx, sc, ids, names)
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if len(mods) == 0 {
		s.fail(w, r, fault.NotFoundf("module not found").With("field", "moduleName"))
		return
	}
	if len(mods) > 1 {
		s.fail(w, r, fault.Invalidf("several apps have a module named %q; sync by moduleId", *b.ModuleName).With("field", "moduleName"))
		return
	}
	if m := mods[0]; !sc.all && !slices.Contains(sc.apps, m.App) && !slices.Contains(sc.modules, m.ID) {
		// Rights on single items show the module but do not cover a sync of it.
		s.fail(w, r, fault.Forbiddenf("syncing a module needs the read right on the module or its app").With("permission", "read"))
		return
	}
	now := time.Now().UnixMilli()
	q := rmcontent.SyncQuery{AllApps: true, Module: mods[0].ID, To: now, Locale: b.Locale, Fields: fieldsOf(mods)}
	if b.FromSync != nil {
		from, err := msTime(b.FromSync, "fromSync")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		f := from.UnixMilli()
		q.From = &f
	}
	if b.ToSync != nil {
		to, err := msTime(b.ToSync, "toSync")
		if err != nil {
			s.fail(w, r, err)
			return
		}
		toMS := to.UnixMilli()
		if q.From != nil {
			// An answer earlier than the client's last one (Android sends
			// the device's clock) would leave it a syncTimestamp below the
			// fromSync it sent: it keeps the greater, and would skip what
			// changed in between.
			toMS = max(toMS, *q.From)
		}
		q.To = min(toMS, now)
	}
	// Asked before the read: the answer describes the log only up to the
	// horizon (the read model may be behind the log, a transaction still
	// open may commit changes stamped since it began, and this server's
	// clock may be ahead of the database's), and the next sync, from that
	// instant (less SyncMargin), reports the rest. Said "up to To", a
	// change stamped more than SyncMargin before To but visible only after
	// this read would never be reported to this client.
	horizon, err := s.Lag.Horizon(ctx, cmdcontent.Projection)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	res, err := s.ContentRead.Sync(ctx, q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	floor := int64(math.MinInt64)
	if q.From != nil {
		// Not below fromSync either: that answer was no later than the
		// horizon of its time, so what is still missing is stamped after
		// it, or within SyncMargin of it, which the next sync looks back over.
		floor = min(*q.From, q.To)
	}
	asked := res.Timestamp
	res.Timestamp = max(min(res.Timestamp, horizon.UnixMilli()), floor)
	s.Metrics.SyncHeldBack(time.Duration(asked-res.Timestamp) * time.Millisecond)
	created, _ := s.present(ctx, rmcontent.Query{}, nil, res.Created, nil, nil) // without include, present cannot fail
	updated, _ := s.present(ctx, rmcontent.Query{}, nil, res.Updated, nil, nil)
	out := map[string]any{"syncTimestamp": res.Timestamp, "created": created, "updated": updated}
	deleted := make([]deletedJSON, len(res.Deleted))
	for i, id := range res.Deleted {
		deleted[i] = deletedJSON{ID: id}
	}
	out["deleted"] = deleted
	writeJSON(w, http.StatusOK, out)
}
