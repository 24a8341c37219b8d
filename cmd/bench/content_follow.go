package main

// The content phase's search (b) while items are created beside it: the
// searches' p99 with the projection changing the module's content version
// about followRate times a second, and a check that every search made
// after a create was acknowledged finds the created item.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

const (
	followName = "(b) + writes"
	// followRate: creates per second, one item per POST, as the admin.
	followRate = 200
	// followInFlight bounds the creates (each with its check) under way;
	// a tick that finds that many is skipped (counted).
	followInFlight = 32
	// followCategory holds the created items: no search of the other
	// measures (whose answers are checked against the imported facts)
	// finds them.
	followCategory = "cat-new"
	// followPrice: a created item's price is above every imported one's
	// (at most 100,000), and grows with each create.
	followPrice = 200_000
	// followSettled: a create acknowledged sooner was acknowledged once
	// the projections had applied it (read-your-writes); one that took
	// the server's whole wait (CMS_READ_YOUR_WRITES_TIMEOUT, 2s by
	// default) may have been acknowledged before, and a search after it
	// need not find it. Its checks are counted apart.
	followSettled = 1900 * time.Millisecond
)

// followStats is what the writer and its checks saw.
type followStats struct {
	mu                         sync.Mutex
	creates                    []time.Duration // latencies of the acknowledged creates
	checks                     int
	missed                     []string // checks whose answer lacked the created item, settled
	unsettled, unsettledMissed int      // checks after creates not known to be settled, and their misses
	skipped                    int      // ticks with followInFlight creates under way
	index                      map[string]int
	firstErr                   error
}

func (s *followStats) fail(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstErr == nil {
		s.firstErr = err
	}
}

// measureFollow measures search (b) by the phase's clients while a paced
// writer creates published items in the module, each acknowledged create
// followed by a search (shaped as (b): its category, a word of its title,
// a window of its release date, price desc) whose first page must hold
// it. The created items stay: this runs after the other searches of the
// largest size.
func (b *contentBench) measureFollow(ctx context.Context, facts []product, label string, res *results) error {
	queries := queriesB(facts)
	checked, err := checkQuery(ctx, b.p.api, b.appToken, b.module, queries[0], facts)
	if err != nil {
		return fmt.Errorf("search %s @%s: %w", followName, label, err)
	}
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		bodies[i] = q.body(b.module)
	}
	var next atomic.Uint64
	var received atomic.Int64
	writers := make([]writer, b.cfg.contentClients)
	for i := range writers {
		writers[i] = searchWriter(b.p.api, b.appToken, bodies, false, &next, &received)
	}
	st := &followStats{index: map[string]int{}}
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		b.followWriter(wctx, st)
	}()
	progressf("content: search %s @%s: %d clients, %s (+%s warm-up), %d creates/s beside them; %s", followName, label,
		b.cfg.contentClients, b.cfg.contentDuration, contentWarmup, followRate, checked)
	t0 := time.Now()
	ms, err := measure(ctx, writers, contentWarmup, b.cfg.contentDuration)
	stop()
	<-done
	if err != nil {
		return fmt.Errorf("search %s @%s: %w", followName, label, err)
	}
	if st.firstErr != nil {
		return fmt.Errorf("search %s @%s: the writer: %w", followName, label, st.firstErr)
	}
	wall := time.Since(t0).Seconds()
	slices.Sort(st.creates)
	pct := func(p float64) time.Duration {
		if len(st.creates) == 0 {
			return 0
		}
		return st.creates[int(p*float64(len(st.creates)-1))]
	}
	detail := fmt.Sprintf("%d searches in %s by %d clients (%s req/s); latency p50 %s, p99 %s, max %s; beside them %d creates (%.0f/s, p50 %s, p99 %s, %d ticks skipped with %d under way), each followed by a search that must find it: %d checks, answered by %s; %d creates took %s or more (read-your-writes not known to hold), %d of their checks missed",
		ms.ops, b.cfg.contentDuration, b.cfg.contentClients, thousands(ms.rate()), ms2(ms.pct(0.5)), ms2(ms.pct(0.99)), ms2(ms.pct(1)),
		len(st.creates), float64(len(st.creates))/wall, ms2(pct(0.5)), ms2(pct(0.99)), st.skipped, followInFlight, st.checks, indexCounts(st.index),
		st.unsettled, followSettled, st.unsettledMissed)
	name := "search " + followName + " @" + label
	res.add(figure{name: name + " p99 ms", value: float64(ms.pct(0.99)) / float64(time.Millisecond), unit: "ms", decimals: 1,
		target: targetContentP99, atMost: true, detail: detail})
	missed := figure{name: name + ": checks missing the item created before", value: float64(len(st.missed)), unit: "searches",
		atMost: true, detail: fmt.Sprintf("of %d checks after creates acknowledged within %s", st.checks-st.unsettled, followSettled)}
	if len(st.missed) > 0 {
		missed.detail += "; first: " + st.missed[0]
	}
	res.add(missed)
	if len(st.missed) > 0 {
		progressf("content: search %s @%s: %d of %d checks MISSED the item created before them (first: %s)", followName, label,
			len(st.missed), st.checks, st.missed[0])
	}
	return nil
}

// followWriter creates items at followRate until ctx ends, each in a
// goroutine of its own that then checks it.
func (b *contentBench) followWriter(ctx context.Context, st *followStats) {
	tick := time.NewTicker(time.Second / followRate)
	defer tick.Stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	slots := make(chan struct{}, followInFlight)
	for n := 1; ; n++ {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		select {
		case slots <- struct{}{}:
		default:
			st.mu.Lock()
			st.skipped++
			st.mu.Unlock()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			if err := b.createAndCheck(ctx, n, st); err != nil && ctx.Err() == nil {
				st.fail(err)
			}
		}()
	}
}

// createAndCheck creates item n (published, in followCategory) and then
// searches for it.
func (b *contentBench) createAndCheck(ctx context.Context, n int, st *followStats) error {
	word := contentWords[n%len(contentWords)]
	release := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	published := time.Now().Add(-time.Hour).UnixMilli()
	body := map[string]any{"module": b.module, "name": fmt.Sprintf("Follow %d", n), "publishedAt": published,
		"values": map[string]any{"title": fmt.Sprintf("Follow %d %s", n, word), "category": followCategory,
			"price": followPrice + n, "releaseDate": release}}
	var created struct {
		ID string `json:"id"`
	}
	t0 := time.Now()
	if err := b.p.api.call(ctx, http.MethodPost, "/api/generalcontent/instance", b.p.admin, body, http.StatusCreated, &created); err != nil {
		return fmt.Errorf("create: %w", err)
	}
	took := time.Since(t0)
	if created.ID == "" {
		return fmt.Errorf("create: answer without id")
	}
	q := searchOp{Condition: "and", Operands: []searchOp{
		{Operation: "=", Property: "category", Value: followCategory, Type: "string"},
		{Operation: "like", Property: "title", Value: word, Type: "string"},
		{Operation: ">=", Property: "releaseDate", Value: release - 180*24*3600*1000, Type: "date"},
		{Operation: "<=", Property: "releaseDate", Value: release + 180*24*3600*1000, Type: "date"},
	}}
	sb, err := json.Marshal(map[string]any{"moduleIds": []string{b.module}, "searchValues": q, "sort": "values.price desc",
		"pagination": map[string]any{"page": 1, "limit": contentPageLimit}})
	if err != nil {
		return err
	}
	page, index, err := b.p.api.searchIndexed(ctx, b.appToken, sb)
	if err != nil {
		return fmt.Errorf("check: %w", err)
	}
	found := slices.ContainsFunc(page.Items, func(it searchItem) bool { return it.ID == created.ID })
	st.mu.Lock()
	defer st.mu.Unlock()
	st.creates = append(st.creates, took)
	st.checks++
	st.index[index]++
	if took >= followSettled {
		st.unsettled++
		if !found {
			st.unsettledMissed++
		}
		return nil
	}
	if !found {
		st.missed = append(st.missed, fmt.Sprintf("item %s (%s) not on the first page (%d items of %d, by %s)", created.ID, word,
			len(page.Items), page.Pagination.TotalItems, index))
	}
	return nil
}

// searchIndexed posts a search body with token and returns its page and
// X-Search-Index ("cache" when the answer cache answered, "" when the
// header is absent).
func (a *cmsAPI) searchIndexed(ctx context.Context, token string, body []byte) (searchPage, string, error) {
	var page searchPage
	h, err := a.do(ctx, http.MethodPost, searchPath, token, body, http.StatusOK, &page)
	if err != nil {
		return page, "", err
	}
	index := h.Get("X-Search-Index")
	if c := h.Get("X-Cache"); index == "" && c != "" {
		index = "cache " + c
	}
	return page, index, nil
}

// indexCounts is "memory 123, postgresql 4".
func indexCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	s := ""
	for _, k := range keys {
		if s != "" {
			s += ", "
		}
		name := k
		if name == "" {
			name = "(no X-Search-Index)"
		}
		s += fmt.Sprintf("%s %d", name, m[k])
	}
	return s
}
