package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

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

// search serves POST /api/generalcontent/instance/search.
func (s *server) search(w http.ResponseWriter, r *http.Request) error {
	req, err := searchRequest(r)
	if err != nil {
		return err
	}
	req.Encode = func(p rmcontent.Page) ([]byte, error) {
		var pg *paginationJSON
		if !req.Skip {
			pj := pagination(req.Page, req.Limit, p.Total)
			pg = &pj
		}
		return encodeAnswer(present(&p, req.Include, req.Fields), pg)
	}
	ans, err := s.ContentRead.Search(r.Context(), req)
	if err != nil {
		return err
	}
	if ans.Index != "" {
		w.Header().Set("X-Search-Index", ans.Index)
	}
	if ans.Cache != "" {
		w.Header().Set("X-Cache", ans.Cache)
	}
	writeBody(w, http.StatusOK, ans.Body)
	return nil
}

// searchRequest maps a search body to the query's request.
func searchRequest(r *http.Request) (rmcontent.SearchRequest, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return rmcontent.SearchRequest{}, badJSON(err)
	}
	var b searchBody
	if err := decodeFrom(bytes.NewReader(body), &b); err != nil {
		return rmcontent.SearchRequest{}, err
	}
	req := rmcontent.SearchRequest{Key: body, Fresh: noCache(r), ModuleIDs: b.ModuleIDs, ModuleNames: b.ModuleNames,
		InstanceIDs: b.InstanceIDs, Locale: b.Locale, SearchValues: b.SearchValues, MetaSearch: b.MetaSearch, Sort: b.Sort,
		Fields: b.Fields, Page: 1, Limit: rmcontent.DefaultLimit}
	if b.ModuleName != nil {
		req.ModuleNames = append(slices.Clone(req.ModuleNames), *b.ModuleName)
	}
	for i, rel := range b.RelatedTo {
		if rel.FieldName == "" {
			return req, fault.Invalidf("relatedTo[%d].fieldName is required", i).With("field", "relatedTo")
		}
		req.RelatedTo = append(req.RelatedTo, rmcontent.Relation{Field: strings.TrimPrefix(rel.FieldName, "values."), IDs: rel.InstanceIDs})
	}
	tags, err := tagsFromBody(slices.Concat(b.SegmentTags, b.Tags))
	if err != nil {
		return req, err
	}
	for _, t := range tags {
		req.SegmentTags = append(req.SegmentTags, rmcontent.Tag{ID: t.ID, Name: t.Name, Value: t.Value, TagType: t.TagType})
	}
	switch strings.ToLower(b.SegmentMode) {
	case "", "partial":
	case "total":
		req.SegmentTotal = true
	default:
		return req, fault.Invalidf(`segmentMode must be "partial" or "total"`).With("field", "segmentMode")
	}
	if err := b.Pagination.read(&req); err != nil {
		return req, err
	}
	req.Include, err = includeFields(b.Include)
	return req, err
}

// read sets the request's page, limit and skip.
func (p *paginationBody) read(req *rmcontent.SearchRequest) error {
	if p == nil {
		return nil
	}
	var err error
	if req.Skip, err = flexBool(p.Skip, "pagination.skip"); err == nil {
		if req.Page, err = flexInt(p.Page, "page", 1); err == nil {
			req.Limit, err = flexInt(p.Limit, "limit", rmcontent.DefaultLimit)
		}
	}
	if err != nil {
		return err
	}
	req.Page = max(req.Page, 1)
	if req.Limit < 1 || req.Limit > rmcontent.MaxPage {
		return fault.Invalidf("pagination.limit must be from 1 to %d", rmcontent.MaxPage).With("field", "pagination.limit")
	}
	return nil
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

// present turns a page's items into their wire form: relations
// populated one level for the included fields (with the items the search
// read), values cut down to the requested fields.
func present(p *rmcontent.Page, include, fields []string) []instanceJSON {
	out := make([]instanceJSON, len(p.Items))
	keep := map[string]bool{}
	for _, f := range fields {
		keep[strings.TrimPrefix(f, "values.")] = true
	}
	var related map[string]instanceJSON
	if p.Related != nil {
		related = make(map[string]instanceJSON, len(p.Related))
		for id, it := range p.Related {
			related[id] = instanceJSONOf(it)
		}
	}
	for i, it := range p.Items {
		j := instanceJSONOf(it)
		if related != nil || len(keep) > 0 {
			vals := map[string]any{}
			var defs map[string]content.Field
			if related != nil {
				defs = p.FieldsOf(it.Module)
			}
			for name, v := range it.Values {
				if len(keep) > 0 && !keep[name] {
					continue
				}
				if f, ok := defs[name]; ok && rmcontent.Includes(include, name) {
					v = populate(f, v, related)
				}
				vals[name] = v
			}
			j.Values = vals
		}
		out[i] = j
	}
	return out
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

// instancesJSON is a list of items on the wire.
func instancesJSON(items []rmcontent.Item) []instanceJSON {
	out := make([]instanceJSON, len(items))
	for i, it := range items {
		out[i] = instanceJSONOf(it)
	}
	return out
}

// listInstances serves GET /api/generalcontent/instance?module=&page=&limit=&skip=.
func (s *server) listInstances(w http.ResponseWriter, r *http.Request) error {
	page, limit, err := pageParams(r)
	if err != nil {
		return err
	}
	skip, err := boolParam(r, "skip", false)
	if err != nil {
		return err
	}
	res, err := s.ContentRead.Instances(r.Context(), rmcontent.InstancesRequest{Module: r.URL.Query().Get("module"),
		Locale: r.URL.Query().Get("locale"), Page: page, Limit: limit, Skip: skip})
	if err != nil {
		return err
	}
	items := instancesJSON(res.Items)
	if skip {
		writeJSON(w, http.StatusOK, items)
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]any{"pagination": pagination(page, limit, res.Total), "items": items})
	return nil
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

// sync serves POST /api/generalcontent/instance/sync.
func (s *server) sync(w http.ResponseWriter, r *http.Request) error {
	var b syncBody
	if err := decode(r, &b); err != nil {
		return err
	}
	req := rmcontent.SyncRequest{ModuleName: b.ModuleName, Locale: b.Locale, FromSync: b.FromSync, ToSync: b.ToSync}
	if b.ModuleID != nil {
		req.ModuleID = *b.ModuleID
	}
	res, err := s.ContentRead.Sync(r.Context(), req)
	if err != nil {
		return err
	}
	deleted := make([]deletedJSON, len(res.Deleted))
	for i, id := range res.Deleted {
		deleted[i] = deletedJSON{ID: id}
	}
	writeJSON(w, http.StatusOK, map[string]any{"syncTimestamp": res.Timestamp, "created": instancesJSON(res.Created),
		"updated": instancesJSON(res.Updated), "deleted": deleted})
	return nil
}
