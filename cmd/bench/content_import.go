package main

// The content phase's import: items through the batch endpoint, then
// the waits and the upkeep (VACUUM ANALYZE) before the searches.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

type importStats struct {
	items, batches int
	concurrent     int // batch requests at once
	elapsed        time.Duration
	latencies      []time.Duration // of the batch requests, sorted
	published      int
}

func (s importStats) rate() float64 { return rate(int64(s.items), s.elapsed) }

func (s importStats) String() string {
	pct := func(p float64) time.Duration {
		if len(s.latencies) == 0 {
			return 0
		}
		return s.latencies[int(p*float64(len(s.latencies)-1))]
	}
	return fmt.Sprintf("%d items (%d published) in %.2fs, %d batch requests of up to %d items, %d concurrent; batch latency p50 %s, max %s",
		s.items, s.published, s.elapsed.Seconds(), s.batches, contentBatchSize, s.concurrent,
		pct(0.5).Round(time.Millisecond), pct(1).Round(time.Millisecond))
}

type batchAnswer struct {
	Results struct {
		Total struct {
			Total, Success, Failure int
		} `json:"total"`
		Create struct {
			Success, Failure int
		} `json:"create"`
	} `json:"results"`
}

// importItems creates items from+1..to through the batch endpoint and
// records what they are in facts.
func importItems(ctx context.Context, a *cmsAPI, token, module string, from, to int, facts []product, importers int) (importStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type span struct{ from, to int }
	work := make(chan span)
	go func() {
		defer close(work)
		for s := from; s < to; s += contentBatchSize {
			select {
			case work <- span{s, min(s+contentBatchSize, to)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		lats      []time.Duration
		published int
		done      atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(progressDone)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-t.C:
				d := done.Load()
				progressf("content import: %d/%d items, %s items/s", from+int(d), to, thousands(rate(d, time.Since(start))))
			}
		}
	}()
	for range importers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				items := make([]productBody, 0, s.to-s.from)
				pub := 0
				for n := s.from + 1; n <= s.to; n++ {
					b, p := genProduct(module, n)
					facts[n-1] = p
					if p.published {
						pub++
					}
					items = append(items, b)
				}
				body, err := json.Marshal(map[string]any{"created": items})
				if err != nil {
					fail(err)
					return
				}
				t0 := time.Now()
				var raw []byte
				if err := a.call(ctx, http.MethodPost, batchPath, token, body, http.StatusOK, &raw); err != nil {
					fail(fmt.Errorf("batch of items %d..%d: %w", s.from+1, s.to, err))
					return
				}
				lat := time.Since(t0)
				if err := checkBatch(raw, s.to-s.from); err != nil {
					fail(fmt.Errorf("batch of items %d..%d: %w", s.from+1, s.to, err))
					return
				}
				done.Add(int64(s.to - s.from))
				mu.Lock()
				lats = append(lats, lat)
				published += pub
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	<-progressDone
	if firstErr != nil {
		return importStats{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return importStats{}, err
	}
	slices.Sort(lats)
	return importStats{items: to - from, batches: len(lats), concurrent: importers, elapsed: elapsed, latencies: lats, published: published}, nil
}

// checkBatch checks that the batch answer says every create succeeded.
func checkBatch(raw []byte, n int) error {
	var ans batchAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("decode the answer: %w (%s)", err, snippet(raw, 300))
	}
	r := ans.Results
	if r.Create.Success == n && r.Create.Failure == 0 && r.Total.Total == n && r.Total.Success == n && r.Total.Failure == 0 {
		return nil
	}
	msg := fmt.Sprintf("the answer counts %d/%d creates succeeded, %d failed (total %d/%d/%d)",
		r.Create.Success, n, r.Create.Failure, r.Total.Total, r.Total.Success, r.Total.Failure)
	var ops struct {
		Operations []struct {
			Position int             `json:"position"`
			Success  bool            `json:"success"`
			Data     json.RawMessage `json:"data"`
		} `json:"operations"`
	}
	if json.Unmarshal(raw, &ops) == nil {
		for _, op := range ops.Operations {
			if !op.Success {
				msg += fmt.Sprintf("; first failure at position %d: %s", op.Position, snippet(op.Data, 400))
				break
			}
		}
	}
	return errors.New(msg)
}

// total asks for the number of the module's items the token sees.
func (a *cmsAPI) total(ctx context.Context, token, module string) (int, error) {
	var page searchPage
	err := a.call(ctx, http.MethodPost, searchPath, token,
		map[string]any{"moduleIds": []string{module}, "pagination": map[string]any{"page": 1, "limit": 1, "skip": false}}, http.StatusOK, &page)
	return page.Pagination.TotalItems, err
}

// waitVisible waits until a search (as admin) counts n items in the module;
// last is how long that search took.
func (a *cmsAPI) waitVisible(ctx context.Context, admin, module string, n int) (last time.Duration, err error) {
	deadline := time.Now().Add(contentVisibleWait)
	for {
		t0 := time.Now()
		got, err := a.total(ctx, admin, module)
		last = time.Since(t0)
		if err != nil {
			return last, fmt.Errorf("count the items: %w", err)
		}
		if got == n {
			return last, nil
		}
		if got > n {
			return last, fmt.Errorf("search counts %d items, %d were imported", got, n)
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("search counts %d items %s after the import of %d", got, contentVisibleWait, n)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// analyzeContent VACUUMs and ANALYZEs the content projection's tables:
// fresh statistics and visibility maps (for index-only scans) after a bulk
// import, as autovacuum gives them sooner or later (if it is on), so that
// the figures do not depend on when it comes by. Without it the searches
// are several to a thousand times slower.
func analyzeContent(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND c.relname IN ('content_items', 'content_keys', 'content_fields', 'content_modules') ORDER BY 1`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return errors.New("no content tables found to VACUUM")
	}
	t0 := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("VACUUM (ANALYZE) %s: %w", strings.Join(tables, ", "), err)
	}
	progressf("content: VACUUM (ANALYZE) %s: %s", strings.Join(tables, ", "), time.Since(t0).Round(time.Millisecond))
	return nil
}

func countPublished(facts []product) int {
	n := 0
	for _, p := range facts {
		if p.published {
			n++
		}
	}
	return n
}

// dbSize is the size of the bench database and of the content tables.
func dbSize(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var db, items, keys, fields string
	err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database())),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_items' AND c.relkind = 'r'), '?'),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_keys' AND c.relkind = 'r'), '?'),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_fields' AND c.relkind = 'r'), '?')`).
		Scan(&db, &items, &keys, &fields)
	return fmt.Sprintf("%s (content_items with indexes %s, content_keys with indexes %s, content_fields with indexes %s)", db, items, keys, fields), err
}

// waitCaughtUp waits, at most max, until every projection's checkpoint
// is at the end of the log: a projection that no write waits for (the
// media library's reads every imported item's values) may still be
// applying the import when the searches start, and would take the CPU
// they are measured on. It says how long it waited, or which lagged.
func waitCaughtUp(ctx context.Context, pool *pgxpool.Pool, max time.Duration) error {
	t0 := time.Now()
	for {
		rows, err := pool.Query(ctx, `SELECT c.name FROM projection_checkpoints c,
			(SELECT transaction_id, global_position FROM events ORDER BY transaction_id DESC, global_position DESC LIMIT 1) e
			WHERE c.name NOT LIKE '%@%' AND (c.tx_id, c.position) < (e.transaction_id, e.global_position) ORDER BY 1`)
		if err != nil {
			return err
		}
		behind, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if len(behind) == 0 {
			progressf("content: every projection at the end of the log after %s", time.Since(t0).Round(100*time.Millisecond))
			return nil
		}
		if time.Since(t0) > max {
			progressf("content: projections still behind after %s: %s", max, strings.Join(behind, ", "))
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
