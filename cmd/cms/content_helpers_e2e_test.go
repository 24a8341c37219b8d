package main

// Helpers of the content API end-to-end tests (modules, module types,
// items, search, sync, batch): request builders, typed views of the wire
// shapes, and a comparison of a response's JSON shape with the HALO
// fixtures.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// startContentServer starts the program with a read-your-writes bound long
// enough for a loaded machine: a write answers once the content projection
// has caught up, and the answer is read from it.
func startContentServer(t testing.TB) *testServer {
	t.Helper()
	return startServer(t, withConfig(func(c *Config) { c.ReadYourWrites = 20 * time.Second }))
}

// Paths of the content API.
const (
	modulePath     = "/api/generalcontent/module"
	moduleTypePath = "/api/core/moduletype"
	instancePath   = "/api/generalcontent/instance"
	searchPath     = "/api/generalcontent/instance/search"
	syncPath       = "/api/generalcontent/instance/sync"
	batchPath      = "/api/generalcontent/instance/batch"
)

// Field type numbers of HALO's catalog (ids …001 to …021).
const (
	ftText = iota + 1
	ftNumber
	ftWebsite
	ftYoutube
	ftImage
	ftDate
	ftTime
	ftBoolean
	ftColor
	ftMultiRelation
	ftRelation
	ftLongText
	ftObject
	ftList
	ftLocalized
	ftVideo
	ftMultiChoice
	ftChoice
	ftMultiDropdown
	ftDropdown
	ftAudio
)

// fieldTypeNames and fieldTypeLong are the catalog as wire-reference §4.3
// prints it, indexed by type number.
var (
	fieldTypeNames = []string{"", "Text", "Number", "Website", "Youtube", "Image", "Date", "Time", "Boolean", "Color",
		"Multiple relation", "Single relation", "Long text", "Object", "List", "Localized text", "Video",
		"Multiple choice", "Single choice", "Multiple select dropdown", "Single select dropdown", "Audio"}
	fieldTypeLong = []bool{false, false, false, true, true, true, false, false, false, false,
		false, false, true, true, true, true, true, true, true, true, true, true}
)

// ftID is the 24-character id of field type n.
func ftID(n int) string { return fmt.Sprintf("%024d", n) }

// fld is a field definition as the API takes it; kv adds keys (e.g.
// "required", true, "rules", map[string]any{...}).
func fld(name string, typ int, kv ...any) map[string]any {
	f := map[string]any{"name": name, "type": ftID(typ), "description": "the " + name + " field"}
	for i := 0; i+1 < len(kv); i += 2 {
		f[kv[i].(string)] = kv[i+1]
	}
	return f
}

// rules is a field's rules object.
type rules = map[string]any

// moduleBody is a module create/update body.
func moduleBody(app, name string, fields ...map[string]any) map[string]any {
	if fields == nil {
		fields = []map[string]any{}
	}
	return map[string]any{"app": app, "name": name, "isSingle": false, "tags": []any{}, "fields": fields}
}

type tagView struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType any    `json:"tagType"`
}

type ruleView struct {
	Rule   string `json:"rule"`
	Params []any  `json:"params"`
	Error  string `json:"error"`
}

type fieldTypeView struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	Rules       []ruleView `json:"rules"`
	IsLongValue bool       `json:"isLongValue"`
	CreatedAt   *int64     `json:"createdAt"`
}

type fieldView struct {
	ID          string          `json:"id"`
	Module      string          `json:"module"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Format      json.RawMessage `json:"format"`
	FieldType   fieldTypeView   `json:"fieldType"`
	CustomerID  int             `json:"customerId"`
	Required    bool            `json:"required"`
	Localized   bool            `json:"localized"`
	Rules       map[string]any  `json:"rules"`
	CreatedAt   *int64          `json:"createdAt"`
	UpdatedAt   *int64          `json:"updatedAt"`
}

type moduleView struct {
	ID         string      `json:"id"`
	App        string      `json:"app"`
	Name       string      `json:"name"`
	IsSingle   bool        `json:"isSingle"`
	CustomerID int         `json:"customerId"`
	Tags       []tagView   `json:"tags"`
	Fields     []fieldView `json:"fields"`
	CreatedAt  int64       `json:"createdAt"`
	UpdatedAt  *int64      `json:"updatedAt"`
	DeletedAt  *int64      `json:"deletedAt"`
	CreatedBy  *string     `json:"createdBy"`
	UpdatedBy  *string     `json:"updatedBy"`
}

// field returns the module's field named name.
func (m moduleView) field(name string) (fieldView, bool) {
	for _, f := range m.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return fieldView{}, false
}

func (m moduleView) fieldNames() []string {
	out := make([]string, len(m.Fields))
	for i, f := range m.Fields {
		out[i] = f.Name
	}
	return out
}

type moduleTypeView struct {
	ID       string      `json:"id"`
	Name     string      `json:"name"`
	IsSingle bool        `json:"isSingle"`
	Fields   []fieldView `json:"fields"`
}

// instView is a content instance on the wire; values keep numbers as
// json.Number (see decodeNum).
type instView struct {
	ID          string          `json:"id"`
	Module      string          `json:"module"`
	Name        string          `json:"name"`
	Values      map[string]any  `json:"values"`
	Tags        []tagView       `json:"tags"`
	CreatedAt   *int64          `json:"createdAt"`
	UpdatedAt   *int64          `json:"updatedAt"`
	PublishedAt *int64          `json:"publishedAt"`
	RemovedAt   *int64          `json:"removedAt"`
	ArchivedAt  *int64          `json:"archivedAt"`
	DeletedAt   *int64          `json:"deletedAt"`
	CreatedBy   *string         `json:"createdBy"`
	UpdatedBy   *string         `json:"updatedBy"`
	DeletedBy   *string         `json:"deletedBy"`
	CustomerID  int             `json:"customerId"`
	Revision    int64           `json:"revision"`
	ExternalID  json.RawMessage `json:"externalId"`
}

func itemIDs(items []instView) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

func itemNames(items []instView) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Name
	}
	return out
}

// sorted returns a sorted copy.
func sorted(ss []string) []string {
	c := slices.Clone(ss)
	sort.Strings(c)
	if c == nil {
		c = []string{}
	}
	return c
}

// sameSet reports whether a and b hold the same strings (order ignored).
func sameSet(a, b []string) bool { return slices.Equal(sorted(a), sorted(b)) }

// affectedItems returns the entries of a 409's extra.affectedItems and
// their ids, in order.
func affectedItems(ex map[string]any) (entries []map[string]any, ids []string) {
	list, _ := ex["affectedItems"].([]any)
	for _, e := range list {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		entries, ids = append(entries, m), append(ids, id)
	}
	return entries, ids
}

// decodeNum decodes JSON keeping numbers as json.Number.
func decodeNum(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// mustNum asserts the status and decodes with json.Number numbers.
func (ts *testServer) mustNum(r response, status int, v any) {
	ts.t.Helper()
	if r.Status != status {
		ts.t.Fatalf("%s: want status %d", r, status)
	}
	if err := decodeNum(r.Body, v); err != nil {
		ts.t.Fatalf("%s: decoding: %v", r, err)
	}
}

// haloExtra asserts a HALO error of the given status and returns its extra.
func haloExtra(t testing.TB, r response, status int) map[string]any {
	t.Helper()
	expectHaloError(t, r, status)
	var e struct {
		Error struct {
			Extra map[string]any `json:"extra"`
		} `json:"error"`
	}
	if err := decodeNum(r.Body, &e); err != nil {
		return nil
	}
	return e.Error.Extra
}

// expectViolation asserts a 400 whose extra names field and (when code is
// not empty) the validator code, and carries a rule.
func expectViolation(t testing.TB, r response, field, code string) {
	t.Helper()
	ex := haloExtra(t, r, 400)
	if ex == nil {
		return
	}
	if ex["field"] != field {
		t.Errorf("%s: extra.field = %v, want %q", r, ex["field"], field)
	}
	if code != "" && ex["error"] != code {
		t.Errorf("%s: extra.error = %v, want %q", r, ex["error"], code)
	}
	if s, _ := ex["rule"].(string); s == "" {
		t.Errorf("%s: extra.rule missing (extra %v)", r, ex)
	}
}

// createModule creates a module (201) and returns it.
func (ts *testServer) createModule(token string, body map[string]any) moduleView {
	ts.t.Helper()
	var m moduleView
	ts.mustJSON(ts.post(modulePath, token, body), 201, &m)
	if m.ID == "" {
		ts.t.Fatalf("create module %v: no id", body["name"])
	}
	return m
}

// module reads a module with its fields.
func (ts *testServer) module(id string) moduleView {
	ts.t.Helper()
	var m moduleView
	ts.mustJSON(ts.get(modulePath+"/"+id+"?withFields=true", ts.admin), 200, &m)
	return m
}

// itemBody is an instance body as Android sends it (no nulls).
func itemBody(module, name string, values map[string]any, kv ...any) map[string]any {
	if values == nil {
		values = map[string]any{}
	}
	b := map[string]any{"module": module, "name": name, "values": values, "tags": []any{}}
	for i := 0; i+1 < len(kv); i += 2 {
		b[kv[i].(string)] = kv[i+1]
	}
	return b
}

// createItem creates an instance (201) and returns it.
func (ts *testServer) createItem(token string, body map[string]any) instView {
	ts.t.Helper()
	var it instView
	ts.mustNum(ts.post(instancePath, token, body), 201, &it)
	if it.ID == "" {
		ts.t.Fatalf("create instance %v: no id", body["name"])
	}
	return it
}

// item reads an instance as admin.
func (ts *testServer) item(id string) instView {
	ts.t.Helper()
	var it instView
	ts.mustNum(ts.get(instancePath+"/"+id, ts.admin), 200, &it)
	return it
}

// transit posts a state command (publish, unpublish, archive, unarchive,
// restore) and returns the instance.
func (ts *testServer) transit(token, id, cmd string, body any) instView {
	ts.t.Helper()
	var it instView
	ts.mustNum(ts.post(instancePath+"/"+id+"/"+cmd, token, body), 200, &it)
	return it
}

// appToken logs an app in with client_credentials.
func (ts *testServer) appToken(a appView) string {
	ts.t.Helper()
	var tr tokenResp
	ts.mustJSON(ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials",
		"client_id", a.ClientID, "client_secret", *a.ClientSecret)), 200, &tr)
	if tr.AccessToken == "" {
		ts.t.Fatalf("app token for %s: empty", a.Name)
	}
	return tr.AccessToken
}

// grantTo is one right: app, and optionally "module" or "item", with perms.
type grantTo struct {
	app, module, item string
	perms             []string
}

// userWith creates a user, grants it the rights and returns its token.
func (ts *testServer) userWith(name string, gs ...grantTo) (userView, string) {
	ts.t.Helper()
	u := ts.createUser(name, nil)
	for _, g := range gs {
		b := map[string]any{"user": u.ID, "app": g.app, "permissions": g.perms}
		if g.module != "" {
			b["module"] = g.module
		}
		if g.item != "" {
			b["item"] = g.item
		}
		ts.mustJSON(ts.grant(ts.admin, b), 200, nil)
	}
	return u, ts.login(name, userPass)
}

// searchResult decodes a search answer of either shape: a bare array, or
// the {pagination, items} envelope. paginated tells which one it was.
type searchResult struct {
	paginated  bool
	pagination paginationView
	items      []instView
	raw        []map[string]any // the items with json.Number numbers
}

type paginationView struct {
	Page       int `json:"page"`
	Limit      int `json:"limit"`
	Offset     int `json:"offset"`
	TotalItems int `json:"totalItems"`
	TotalPages int `json:"totalPages"`
}

func decodeSearch(t testing.TB, r response) searchResult {
	t.Helper()
	var res searchResult
	body := bytes.TrimSpace(r.Body)
	if len(body) > 0 && body[0] == '[' {
		if err := decodeNum(body, &res.items); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		if err := decodeNum(body, &res.raw); err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		return res
	}
	var env struct {
		Pagination *paginationView   `json:"pagination"`
		Items      []instView        `json:"items"`
		Raw        []json.RawMessage `json:"-"`
	}
	if err := decodeNum(body, &env); err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	var rawEnv struct {
		Items []map[string]any `json:"items"`
	}
	if err := decodeNum(body, &rawEnv); err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	if env.Pagination == nil || env.Items == nil {
		t.Fatalf("%s: neither an array nor a {pagination, items} envelope", r)
	}
	res.paginated, res.pagination, res.items, res.raw = true, *env.Pagination, env.Items, rawEnv.Items
	return res
}

// search posts a search as token, wants 200 and decodes it.
func (ts *testServer) search(token string, body any) searchResult {
	ts.t.Helper()
	r := ts.post(searchPath, token, body)
	if r.Status != 200 {
		ts.t.Fatalf("%s: want status 200", r)
	}
	return decodeSearch(ts.t, r)
}

// searchIDs runs body with skip true (a bare array) and returns the ids in
// order.
func (ts *testServer) searchIDs(token string, body map[string]any) []string {
	ts.t.Helper()
	b := map[string]any{}
	for k, v := range body {
		b[k] = v
	}
	b["pagination"] = map[string]any{"skip": true}
	res := ts.search(token, b)
	if res.paginated {
		ts.t.Fatalf("search with skip true answered the paginated envelope")
	}
	return itemIDs(res.items)
}

// op is a search operation node.
func op(operation, property string, value any, typ string) map[string]any {
	return map[string]any{"operation": operation, "property": property, "value": value, "type": typ}
}

// cond is a search condition node.
func cond(c string, operands ...map[string]any) map[string]any {
	return map[string]any{"condition": c, "operands": operands}
}

func nowMS() int64 { return time.Now().UnixMilli() }

// near reports whether ms is within d of the wall clock.
func near(ms int64, d time.Duration) bool {
	diff := time.Since(time.UnixMilli(ms))
	return diff < d && diff > -d
}

// ---- JSON shape against the HALO fixtures ----

// fixtureDir holds the HALO sample payloads (wire-reference §10.2).
func fixtureDir() string {
	if d := os.Getenv("HALO_FIXTURES"); d != "" {
		return d
	}
	return "/work/shared/halo/fixtures"
}

// loadFixture reads a fixture; the test is skipped when the fixtures are
// not on this machine.
func loadFixture(t testing.TB, name string) any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixtureDir(), name))
	if os.IsNotExist(err) {
		t.Skipf("fixture %s not available (set HALO_FIXTURES)", name)
	}
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := decodeNum(b, &v); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return v
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number, float64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// nullableElsewhere are keys another fixture of the same object shows as
// null, and wire-reference §4.2/§5.1 documents as "or null" (externalId: a
// number in modules-list-paginated.ios.json, null in
// modules-list-with-fields.android.json; deletedBy: "Sample user" on a live
// item in content-sync-incremental-with-deletion.android.json, null in the
// other instance fixtures).
var nullableElsewhere = map[string]bool{"externalId": true, "deletedBy": true, "updatedBy": true, "updatedAt": true,
	"publishedAt": true, "removedAt": true, "archivedAt": true, "deletedAt": true}

// freeForm keys hold data, not schema: their keys are not compared.
var freeForm = map[string]bool{"values": true, "extra": true}

// checkShape compares got with the fixture samples of the same place:
// every key every sample object has must be there, and every value must
// have a JSON type some sample has there. null is accepted where a sample
// has null; where the samples only hold null any type is accepted.
func checkShape(t testing.TB, path string, samples []any, got any) {
	t.Helper()
	kinds := map[string]bool{}
	for _, s := range samples {
		kinds[jsonKind(s)] = true
	}
	hasNull := kinds["null"] || nullableElsewhere[lastKey(path)]
	delete(kinds, "null")
	if len(kinds) == 0 {
		return // only nulls (or no sample): nothing to compare with
	}
	gk := jsonKind(got)
	if gk == "null" {
		if !hasNull {
			t.Errorf("%s: null, the fixture has %v there", path, keysOf(kinds))
		}
		return
	}
	if !kinds[gk] {
		t.Errorf("%s: a JSON %s, the fixture has %v there", path, gk, keysOf(kinds))
		return
	}
	switch g := got.(type) {
	case map[string]any:
		var objs []map[string]any
		for _, s := range samples {
			if o, ok := s.(map[string]any); ok {
				objs = append(objs, o)
			}
		}
		if freeForm[lastKey(path)] {
			return
		}
		keys := map[string]int{}
		for _, o := range objs {
			for k := range o {
				keys[k]++
			}
		}
		for _, k := range keysOf(keys) {
			v, ok := g[k]
			if !ok {
				if keys[k] == len(objs) {
					t.Errorf("%s: no key %q (the fixture has it)", path, k)
				}
				continue
			}
			var sub []any
			for _, o := range objs {
				if sv, ok := o[k]; ok {
					sub = append(sub, sv)
				}
			}
			checkShape(t, path+"."+k, sub, v)
		}
	case []any:
		var elems []any
		for _, s := range samples {
			if a, ok := s.([]any); ok {
				elems = append(elems, a...)
			}
		}
		if len(elems) == 0 {
			return
		}
		for i, e := range g {
			checkShape(t, fmt.Sprintf("%s[%d]", path, i), elems, e)
		}
	}
}

func lastKey(path string) string {
	if i := strings.LastIndexAny(path, ".]"); i >= 0 {
		return path[i+1:]
	}
	return path
}

func keysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// checkShapeOf decodes a response body and compares it with a fixture, in
// a subtest (skipped when the fixtures are not on this machine).
func checkShapeOf(t *testing.T, r response, fixture string) {
	t.Helper()
	var got any
	if err := decodeNum(r.Body, &got); err != nil {
		t.Errorf("%s: %v", r, err)
		return
	}
	t.Run("shape of "+fixture, func(t *testing.T) {
		want := loadFixture(t, fixture)
		checkShape(t, fixture, []any{want}, got)
	})
}

// expectOneOf asserts a HALO error with one of the statuses.
func expectOneOf(t testing.TB, r response, statuses ...int) {
	t.Helper()
	if !slices.Contains(statuses, r.Status) {
		t.Errorf("%s: want one of %v", r, statuses)
		return
	}
	expectHaloError(t, r, r.Status)
}

// deref is *s, or "<nil>".
func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}
