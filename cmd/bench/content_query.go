package main

// The content phase's searches: (a) and (b) as the bench sends them,
// and the check of an answer against the generated data.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// contentQuery is one search: (a) category only, (b) also a like on the
// title and a one-year window of releaseDate; sorted by price desc.
type contentQuery struct {
	category int
	word     int   // (b): index into contentWords; -1 for (a)
	from, to int64 // (b): releaseDate window, both inclusive
	skip     bool  // pagination.skip
}

type searchOp struct {
	Condition string     `json:"condition,omitempty"`
	Operands  []searchOp `json:"operands,omitempty"`
	Operation string     `json:"operation,omitempty"`
	Property  string     `json:"property,omitempty"`
	Value     any        `json:"value,omitempty"`
	Type      string     `json:"type,omitempty"`
}

func (q contentQuery) body(module string) []byte {
	sv := searchOp{Operation: "=", Property: "category", Value: category(q.category), Type: "string"}
	if q.word >= 0 {
		sv = searchOp{Condition: "and", Operands: []searchOp{sv,
			{Operation: "like", Property: "title", Value: contentWords[q.word], Type: "string"},
			{Operation: ">=", Property: "releaseDate", Value: q.from, Type: "date"},
			{Operation: "<=", Property: "releaseDate", Value: q.to, Type: "date"},
		}}
	}
	b, err := json.Marshal(map[string]any{
		"moduleIds":    []string{module},
		"searchValues": sv,
		"sort":         "values.price desc",
		"pagination":   map[string]any{"page": 1, "limit": contentPageLimit, "skip": q.skip},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// matches: would an app token find p?
func (q contentQuery) matches(p product) bool {
	if !p.published || p.category != q.category {
		return false
	}
	if q.word < 0 {
		return true
	}
	return strings.Contains(strings.ToLower(p.title), contentWords[q.word]) && p.release >= q.from && p.release <= q.to
}

func (q contentQuery) String() string {
	s := category(q.category)
	if q.word >= 0 {
		s += fmt.Sprintf(", title like %q, releaseDate %s..%s", contentWords[q.word],
			time.UnixMilli(q.from).UTC().Format("2006-01-02"), time.UnixMilli(q.to).UTC().Format("2006-01-02"))
	}
	return s
}

// queriesA: the 20 categories in turn.
func queriesA(skip bool) []contentQuery {
	qs := make([]contentQuery, contentCategories)
	for c := range qs {
		qs[c] = contentQuery{category: c, word: -1, skip: skip}
	}
	return qs
}

// queriesB: category, word and window vary per request; the list starts
// with a query that finds items in facts (the checked one).
func queriesB(facts []product) []contentQuery {
	const n = 1800 // lcm of 20 categories, 50 words, 72 windows
	qs := make([]contentQuery, n)
	for i := range qs {
		start := releaseFrom.AddDate(0, (i*11)%windowMonths, 0)
		qs[i] = contentQuery{category: i % contentCategories, word: (i * 7) % len(contentWords),
			from: start.UnixMilli(), to: start.AddDate(1, 0, 0).UnixMilli() - 1}
	}
	for i, q := range qs {
		if slices.ContainsFunc(facts, q.matches) {
			return append(qs[i:], qs[:i]...)
		}
	}
	return qs
}

type searchItem struct {
	ID          string `json:"id"`
	PublishedAt *int64 `json:"publishedAt"`
	Values      struct {
		Title       string  `json:"title"`
		Category    string  `json:"category"`
		Price       float64 `json:"price"`
		ReleaseDate float64 `json:"releaseDate"`
	} `json:"values"`
}

type searchPage struct {
	Pagination struct {
		TotalItems int `json:"totalItems"`
	} `json:"pagination"`
	Items []searchItem `json:"items"`
}

// checkQuery runs q once and compares the answer with what facts say it
// must be: 200, the total, the top items by price desc, each a match.
func checkQuery(ctx context.Context, a *cmsAPI, token, module string, q contentQuery, facts []product) (string, error) {
	var want []int64
	for _, p := range facts {
		if q.matches(p) {
			want = append(want, p.cents)
		}
	}
	slices.Sort(want)
	slices.Reverse(want)
	total := len(want)
	if total == 0 {
		return "", fmt.Errorf("query %s: no imported item matches it (a bench bug)", q)
	}
	var raw []byte
	if err := a.call(ctx, http.MethodPost, searchPath, token, q.body(module), http.StatusOK, &raw); err != nil {
		return "", err
	}
	var items []searchItem
	if q.skip {
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", fmt.Errorf("query %s with skip: want an array of items: %w (%s)", q, err, snippet(raw, 300))
		}
	} else {
		var page searchPage
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", fmt.Errorf("query %s: %w (%s)", q, err, snippet(raw, 300))
		}
		if page.Pagination.TotalItems != total {
			return "", fmt.Errorf("query %s: totalItems %d, want %d", q, page.Pagination.TotalItems, total)
		}
		items = page.Items
		want = want[:min(len(want), contentPageLimit)]
	}
	if len(items) == 0 {
		return "", fmt.Errorf("query %s: no items (%d match)", q, total)
	}
	if q.skip && len(items) < len(want) {
		want = want[:len(items)] // the server caps an unpaginated answer
	}
	if len(items) != len(want) {
		return "", fmt.Errorf("query %s: %d items, want %d", q, len(items), len(want))
	}
	now := time.Now().UnixMilli()
	for i, it := range items {
		switch {
		case it.Values.Price != float64(want[i])/100:
			return "", fmt.Errorf("query %s: item %d (%s) has price %v, want %v (sorted by price desc)", q, i, it.ID, it.Values.Price, float64(want[i])/100)
		case it.Values.Category != category(q.category):
			return "", fmt.Errorf("query %s: item %s has category %q", q, it.ID, it.Values.Category)
		case it.PublishedAt == nil || *it.PublishedAt > now:
			return "", fmt.Errorf("query %s: item %s is not published, an app token sees it", q, it.ID)
		case q.word >= 0 && !strings.Contains(strings.ToLower(it.Values.Title), contentWords[q.word]):
			return "", fmt.Errorf("query %s: item %s has title %q", q, it.ID, it.Values.Title)
		case q.word >= 0 && (int64(it.Values.ReleaseDate) < q.from || int64(it.Values.ReleaseDate) > q.to):
			return "", fmt.Errorf("query %s: item %s has releaseDate %v", q, it.ID, it.Values.ReleaseDate)
		}
	}
	return fmt.Sprintf("checked %s: %d of %d matches, %d bytes", q, len(items), total, len(raw)), nil
}
