package main

// The content phase: the content API over HTTP against the real server
// binary (see the package comment).

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Targets of the content phase.
const (
	targetContentImport = 5_000 // items/s through the batch endpoint
	targetContentP99    = 20    // ms, search p99
	// targetContentPG is the rate of search (b) at the largest size with
	// the in-memory copy off (issue 35): every search in PostgreSQL.
	targetContentPG = 1_500 // req/s
)

const (
	contentBatchSize    = 1000 // items per batch request
	contentWarmup       = 2 * time.Second
	contentSeed         = 0x5EED_C0DE
	contentPageLimit    = 20
	contentCategories   = 20
	contentBrands       = 50
	contentPublishedPct = 90
	contentVisibleWait  = 5 * time.Minute
	// contentRequestTimeout fails a measurement whose searches hang.
	contentRequestTimeout = 30 * time.Second

	searchPath = "/api/generalcontent/instance/search"
	batchPath  = "/api/generalcontent/instance/batch"
)

// ---- configuration ----

// contentSizeList parses -content-sizes, each size capped at
// -content-items: the item counts the queries are measured at.
func (c *config) contentSizeList() ([]int, error) {
	var out []int
	for _, s := range strings.Split(c.contentSizes, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-content-sizes %q: %q is not a positive number", c.contentSizes, s)
		}
		n = min(n, c.contentItems)
		if len(out) > 0 && n <= out[len(out)-1] {
			if n == out[len(out)-1] {
				continue
			}
			return nil, fmt.Errorf("-content-sizes %q: want increasing sizes", c.contentSizes)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-content-sizes %q: want at least one size", c.contentSizes)
	}
	return out, nil
}

func (c *config) validateContent() error {
	if c.contentItems < 1 {
		return fmt.Errorf("-content-items %d: want at least 1", c.contentItems)
	}
	if c.contentClients < 1 || c.contentClients > 256 {
		return fmt.Errorf("-content-clients %d: want 1..256", c.contentClients)
	}
	if c.contentImporters < 1 || c.contentImporters > 64 {
		return fmt.Errorf("-content-importers %d: want 1..64", c.contentImporters)
	}
	if c.contentDuration <= 0 {
		return errors.New("-content-duration must be positive")
	}
	if _, err := regexp.Compile(c.contentSearches); err != nil {
		return fmt.Errorf("-content-searches: %w", err)
	}
	_, err := c.contentSizeList()
	return err
}

// sizeLabel is "10k" for 10000, "1.5M" for 1500000.
func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 1000 && n%100 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.Itoa(n)
}

// ---- the phase ----

func contentPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	sizes, err := cfg.contentSizeList()
	if err != nil {
		return err
	}
	var p *serverPhase
	var kept keptContent
	if cfg.contentReuse != "" {
		p, kept, err = reuseServerPhase(ctx, cfg, serverURL, cfg.contentReuse)
	} else {
		p, err = openServerPhase(ctx, cfg, serverURL, 2)
	}
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := noteAutovacuum(ctx, p, res); err != nil {
		return err
	}
	if err := p.start(ctx, "content", "cms-bench-"); err != nil {
		return err
	}
	var b *contentBench
	if cfg.contentReuse != "" {
		if err := p.signInKept(ctx, cfg.contentClients, kept); err != nil {
			return err
		}
		b, err = keptContentBench(ctx, cfg, p, kept, sizes[len(sizes)-1])
	} else {
		if err := p.signIn(ctx, cfg.contentClients, "bench"); err != nil {
			return err
		}
		b, err = newContentBench(ctx, cfg, p, sizes[len(sizes)-1])
	}
	if err != nil {
		return err
	}
	for _, size := range sizes {
		if size < b.have {
			progressf("content: skipping size %d: the kept module holds %d items", size, b.have)
			continue
		}
		if err := b.measureAt(ctx, size, res); err != nil {
			return err
		}
	}
	if p.keep {
		if err := b.noteKept(ctx); err != nil {
			return err
		}
	}
	if cfg.contentPostgres {
		return b.measureInPostgreSQL(ctx, sizes[len(sizes)-1], res)
	}
	return nil
}

// noteAutovacuum puts the phase's database and the server's autovacuum
// setting in the header: the figures depend on the statistics.
func noteAutovacuum(ctx context.Context, p *serverPhase, res *results) error {
	var autovacuum string
	if err := p.pool.QueryRow(ctx, `SHOW autovacuum`).Scan(&autovacuum); err != nil {
		return err
	}
	res.header = append(res.header, fmt.Sprintf("content phase: database %s, autovacuum=%s (the content tables are VACUUMed and ANALYZEd after each import step)",
		p.db.name, autovacuum))
	return nil
}

// contentBench is the state of one run of the phase: the module the
// items go to, the app's token that searches them, and what the items
// imported so far are.
type contentBench struct {
	cfg      config
	p        *serverPhase
	appToken string
	module   string
	facts    []product // item n is facts[n-1], room for the largest size
	have     int       // items imported
}

// newContentBench gets the app's token and creates the module Products
// with contentFields.
func newContentBench(ctx context.Context, cfg config, p *serverPhase, most int) (*contentBench, error) {
	appToken, err := p.api.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {p.app.ClientID}, "client_secret": {p.app.ClientSecret}})
	if err != nil {
		return nil, fmt.Errorf("app token: %w", err)
	}
	fields := make([]map[string]any, len(contentFields))
	for i, f := range contentFields {
		fields[i] = map[string]any{"name": f.name, "type": f.typ}
	}
	var module struct {
		ID string `json:"id"`
	}
	if err := p.api.call(ctx, http.MethodPost, "/api/generalcontent/module", p.admin,
		map[string]any{"app": p.app.ID, "name": "Products", "fields": fields}, 0, &module); err != nil {
		return nil, fmt.Errorf("create module: %w", err)
	}
	if module.ID == "" {
		return nil, errors.New("create module: answer without id")
	}
	progressf("content: signed in; app %s, module Products %s (%d fields)", p.app.ID, module.ID, len(contentFields))
	return &contentBench{cfg: cfg, p: p, appToken: appToken, module: module.ID, facts: make([]product, most)}, nil
}

// measureAt imports up to size items, checks that the app sees the
// published ones and measures the searches at that size.
func (b *contentBench) measureAt(ctx context.Context, size int, res *results) error {
	if size > b.have { // a kept module (-content-reuse) may hold them already
		if err := b.importTo(ctx, size, res); err != nil {
			return err
		}
	}
	if err := waitCaughtUp(ctx, b.p.pool, 2*time.Minute); err != nil {
		return err
	}
	if err := analyzeContent(ctx, b.p.pool); err != nil {
		return err
	}
	if err := b.checkPublished(ctx, size); err != nil {
		return err
	}
	if err := measureSearches(ctx, b.cfg, b.p.api, b.appToken, b.module, b.facts[:size], sizeLabel(size), b.p.srv, res,
		servedKinds(b.facts[:size])); err != nil {
		return err
	}
	if size == len(b.facts) && regexp.MustCompile(b.cfg.contentSearches).MatchString(followName) {
		if err := b.measureFollow(ctx, b.facts[:size], sizeLabel(size), res); err != nil {
			return err
		}
	}
	if sz, err := dbSize(ctx, b.p.pool); err == nil {
		progressf("content: database size at %d items: %s", size, sz)
	}
	return nil
}

// importTo imports items have+1..size and reports the rate, once a
// search counts them all.
func (b *contentBench) importTo(ctx context.Context, size int, res *results) error {
	progressf("content: importing items %d..%d (batches of %d, %d concurrent); %d other active sessions on the server",
		b.have+1, size, contentBatchSize, b.cfg.contentImporters, otherSessions(ctx, b.p.pool))
	st, err := importItems(ctx, b.p.api, b.p.admin, b.module, b.have, size, b.facts, b.cfg.contentImporters)
	if err != nil {
		return fmt.Errorf("import to %d items: %w", size, err)
	}
	t0 := time.Now()
	last, err := b.p.api.waitVisible(ctx, b.p.admin, b.module, size)
	if err != nil {
		return err
	}
	visible := time.Since(t0)
	res.add(figure{name: "content import @" + sizeLabel(size) + ", items/s", value: st.rate(), unit: "items/s", target: targetContentImport,
		detail: st.String() + fmt.Sprintf("; a search (as admin, before VACUUM ANALYZE) counted all %d %s after the last answer, its own latency %s",
			size, visible.Round(time.Millisecond), last.Round(time.Millisecond))})
	b.have = size
	return nil
}

// checkPublished checks that the app's token counts the published items
// of the first size.
func (b *contentBench) checkPublished(ctx context.Context, size int) error {
	total, err := b.p.api.total(ctx, b.appToken, b.module)
	if err != nil {
		return fmt.Errorf("count the published items: %w", err)
	}
	if want := countPublished(b.facts[:size]); total != want {
		return fmt.Errorf("the app token counts %d published items, %d of the %d imported are published", total, want, size)
	}
	return nil
}

// pgKind is (b) measured with the in-memory copy off: answered by
// PostgreSQL alone (its 1,800 bodies are more than the answer cache
// keeps).
const pgKind = "(b) in PostgreSQL"

// pgWarmup is the warm-up of pgKind: the server has just started (its
// heap, its connections' prepared statements and plans are new).
const pgWarmup = 10 * time.Second

// measureInPostgreSQL restarts the server with CMS_SEARCH_INDEX_ITEMS=0
// (no module kept in memory) and measures (b) there, at the size the
// searches were last measured at: what the PostgreSQL search path does
// (target targetContentPG req/s besides the p99). The server stays up
// for the rest of the phase.
func (b *contentBench) measureInPostgreSQL(ctx context.Context, size int, res *results) error {
	only := regexp.MustCompile(b.cfg.contentSearches) // checked by validateContent
	if !only.MatchString(pgKind) {
		return nil
	}
	progressf("content: restarting the server with CMS_SEARCH_INDEX_ITEMS=0 for %s", pgKind)
	srv, err := b.p.srv.restart(ctx, "CMS_SEARCH_INDEX_ITEMS=0")
	if err != nil {
		return err
	}
	b.p.srv = srv
	if err := waitCaughtUp(ctx, b.p.pool, 2*time.Minute); err != nil {
		return err
	}
	srv.waitIdle(ctx, time.Minute)
	b.p.api.hc.CloseIdleConnections()
	b.p.api = newCMSAPI(srv.base, b.cfg.contentClients)
	facts := b.facts[:size]
	return measureSearches(ctx, b.cfg, b.p.api, b.appToken, b.module, facts, sizeLabel(size), srv, res,
		[]searchKind{{name: pgKind, queries: queriesB(facts), target: true, rate: targetContentPG, warmup: pgWarmup}})
}
