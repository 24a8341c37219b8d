package content

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Search and sync request bodies (wire reference §5.2, §5.6).

type relationBody struct {
	FieldName   string   `json:"fieldName"`
	InstanceIDs []string `json:"instanceIds"`
}

type searchBody struct {
	ModuleIDs    []string                `json:"moduleIds"`
	ModuleName   *string                 `json:"moduleName"`
	ModuleNames  []string                `json:"moduleNames"`
	InstanceIDs  []string                `json:"instanceIds"`
	RelatedTo    []relationBody          `json:"relatedTo"`
	SearchValues json.RawMessage         `json:"searchValues"`
	MetaSearch   json.RawMessage         `json:"metaSearch"`
	Fields       []string                `json:"fields"`
	Include      json.RawMessage         `json:"include"`
	Pagination   *httpapi.PaginationBody `json:"pagination"`
	SegmentTags  []httpapi.TagBody       `json:"segmentTags"`
	Tags         []httpapi.TagBody       `json:"tags"` // iOS's SearchQuery.tags(_:): more segment tags
	SegmentMode  string                  `json:"segmentMode"`
	Sort         string                  `json:"sort"`
	Locale       string                  `json:"locale"`
	PreviewAt    any                     `json:"previewAt"` // CMS users: the answer an app's token would get then
}

// search serves POST /api/generalcontent/instance/search.
func (s *API) search(w http.ResponseWriter, r *http.Request) error {
	req, err := searchRequest(r)
	if err != nil {
		return err
	}
	req.Encode = func(p rmcontent.Page) ([]byte, error) {
		var pg *httpapi.PaginationJSON
		if !req.Skip {
			pj := httpapi.Pagination(req.Page, req.Limit, p.Total)
			pg = &pj
		}
		return encodeAnswer(present(&p, req.Include, req.Fields), pg)
	}
	ans, err := s.Queries.Search(r.Context(), req)
	if err != nil {
		return err
	}
	if ans.Index != "" {
		w.Header().Set("X-Search-Index", ans.Index)
	}
	if ans.Cache != "" {
		w.Header().Set("X-Cache", ans.Cache)
	}
	httpapi.WriteBody(w, http.StatusOK, ans.Body)
	return nil
}

// searchRequest maps a search body to the query's request.
func searchRequest(r *http.Request) (rmcontent.SearchRequest, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return rmcontent.SearchRequest{}, httpapi.BadJSON(err)
	}
	var b searchBody
	if err := httpapi.DecodeFrom(bytes.NewReader(body), &b); err != nil {
		return rmcontent.SearchRequest{}, err
	}
	req := rmcontent.SearchRequest{Key: body, Fresh: noCache(r), ModuleIDs: b.ModuleIDs, ModuleNames: b.ModuleNames,
		InstanceIDs: b.InstanceIDs, Locale: b.Locale, SearchValues: b.SearchValues, MetaSearch: b.MetaSearch, Sort: b.Sort,
		Fields: b.Fields}
	if b.ModuleName != nil {
		req.ModuleNames = append(slices.Clone(req.ModuleNames), *b.ModuleName)
	}
	if req.PreviewAt, err = content.ParseMillis(b.PreviewAt, "previewAt"); err != nil {
		return req, err
	}
	for i, rel := range b.RelatedTo {
		if rel.FieldName == "" {
			return req, fault.Invalidf("relatedTo[%d].fieldName is required", i).With("field", "relatedTo")
		}
		req.RelatedTo = append(req.RelatedTo, rmcontent.Relation{Field: strings.TrimPrefix(rel.FieldName, "values."), IDs: rel.InstanceIDs})
	}
	tags, err := httpapi.TagsFromBody(slices.Concat(b.SegmentTags, b.Tags))
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
	if p := b.Pagination; p != nil {
		if req.Skip, err = httpapi.FlexBool(p.Skip, "pagination.skip"); err != nil {
			return req, err
		}
	}
	if req.Page, req.Limit, err = httpapi.ListPage(b.Pagination); err != nil {
		return req, err
	}
	req.Include, err = includeFields(b.Include)
	return req, err
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
func (s *API) listInstances(w http.ResponseWriter, r *http.Request) error {
	page, limit, err := httpapi.PageParams(r)
	if err != nil {
		return err
	}
	skip, err := httpapi.BoolParam(r, "skip", false)
	if err != nil {
		return err
	}
	res, err := s.Queries.Instances(r.Context(), rmcontent.InstancesRequest{Module: r.URL.Query().Get("module"),
		Locale: r.URL.Query().Get("locale"), Page: page, Limit: limit, Skip: skip})
	if err != nil {
		return err
	}
	items := instancesJSON(res.Items)
	if skip {
		httpapi.WriteJSON(w, http.StatusOK, items)
		return nil
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"pagination": httpapi.Pagination(page, limit, res.Total), "items": items})
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
func (s *API) sync(w http.ResponseWriter, r *http.Request) error {
	var b syncBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	req := rmcontent.SyncRequest{ModuleName: b.ModuleName, Locale: b.Locale, FromSync: b.FromSync, ToSync: b.ToSync}
	if b.ModuleID != nil {
		req.ModuleID = *b.ModuleID
	}
	res, err := s.Queries.Sync(r.Context(), req)
	if err != nil {
		return err
	}
	deleted := make([]deletedJSON, len(res.Deleted))
	for i, id := range res.Deleted {
		deleted[i] = deletedJSON{ID: id}
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"syncTimestamp": res.Timestamp, "created": instancesJSON(res.Created),
		"updated": instancesJSON(res.Updated), "deleted": deleted})
	return nil
}
