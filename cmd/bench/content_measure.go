package main

// The content phase's measurement of the searches by closed-loop
// clients.

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"sync/atomic"
	"time"
)

// searchWriter posts the bodies in turn (shared by all clients) and
// wants 200 each time.
func searchWriter(a *cmsAPI, token string, bodies [][]byte, noCache bool, next *atomic.Uint64, received *atomic.Int64) writer {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, contentRequestTimeout)
		defer cancel()
		body := bodies[(next.Add(1)-1)%uint64(len(bodies))]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+searchPath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if noCache {
			req.Header.Set("Cache-Control", "no-cache")
		}
		resp, err := a.hc.Do(req)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("a search took longer than %s (%s)", contentRequestTimeout, body)
		}
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
			return &statusError{method: http.MethodPost, path: searchPath, status: resp.StatusCode, body: snippet(b, 500)}
		}
		n, err := io.Copy(io.Discard, resp.Body)
		received.Add(n)
		return err
	}
}

// searchKind is one search measured: its name, the queries its clients
// cycle through, its target (none, a p99, or also a rate) and whether it
// asks for answers not taken from the answer cache.
type searchKind struct {
	name    string
	queries []contentQuery
	target  bool
	rate    float64 // req/s the kind must reach (0: none)
	noCache bool
	warmup  time.Duration // before the measurement; 0: contentWarmup
}

// servedKinds are the searches measured at each size: (a), (a) with skip
// and (b) with the app token as served (the answer cache on, as it is by
// default), and (a) and (b) once more with Cache-Control: no-cache, so
// that every search runs in PostgreSQL or the in-memory copy. (a) cycles
// through 20 bodies, (b) through 1,800.
func servedKinds(facts []product) []searchKind {
	return []searchKind{
		{name: "(a)", queries: queriesA(false), target: true},
		{name: "(a) no-cache", queries: queriesA(false), noCache: true},
		{name: "(a) skip:true", queries: queriesA(true)},
		{name: "(b)", queries: queriesB(facts), target: true},
		{name: "(b) no-cache", queries: queriesB(facts), noCache: true},
	}
}

// measureSearches checks and then measures the kinds whose name
// -content-searches matches.
func measureSearches(ctx context.Context, cfg config, a *cmsAPI, token, module string, facts []product, label string,
	srv *cmsServer, res *results, kinds []searchKind) error {
	only := regexp.MustCompile(cfg.contentSearches) // checked by validateContent
	for _, k := range kinds {
		if !only.MatchString(k.name) {
			continue
		}
		checked, err := checkQuery(ctx, a, token, module, k.queries[0], facts)
		if err != nil {
			return fmt.Errorf("search %s @%s: %w", k.name, label, err)
		}
		bodies := make([][]byte, len(k.queries))
		for i, q := range k.queries {
			bodies[i] = q.body(module)
		}
		var next atomic.Uint64
		var received atomic.Int64
		writers := make([]writer, cfg.contentClients)
		for i := range writers {
			writers[i] = searchWriter(a, token, bodies, k.noCache, &next, &received)
		}
		warmup := cmp.Or(k.warmup, contentWarmup)
		progressf("content: search %s @%s: %d clients, %s (+%s warm-up); %s", k.name, label, cfg.contentClients, cfg.contentDuration, warmup, checked)
		srvCPU0, selfCPU0 := srv.cpuSeconds(), selfCPUSeconds()
		mach0 := machineCPU()
		t0 := time.Now()
		st, err := measure(ctx, writers, warmup, cfg.contentDuration)
		if err != nil {
			return fmt.Errorf("search %s @%s: %w", k.name, label, err)
		}
		wall := time.Since(t0).Seconds()
		cpu := fmt.Sprintf("; CPU during the run (incl. warm-up): server %.2f cores, bench client %.2f cores%s",
			(srv.cpuSeconds()-srvCPU0)/wall, (selfCPUSeconds()-selfCPU0)/wall, machineCPU().since(mach0))
		reqs := int64(next.Load())
		detail := fmt.Sprintf("%d requests in %s by %d clients (%s req/s); latency p50 %s, p99 %s, max %s; %s bytes/answer on average; %s%s",
			st.ops, cfg.contentDuration, cfg.contentClients, thousands(st.rate()),
			ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)), thousands(float64(received.Load())/float64(max(reqs, 1))), checked, cpu)
		name := "search " + k.name + " @" + label
		p99 := figure{name: name + " p99 ms", value: float64(st.pct(0.99)) / float64(time.Millisecond), unit: "ms", decimals: 1, detail: detail}
		if k.target {
			p99.target, p99.atMost = targetContentP99, true
		}
		res.add(p99)
		if k.target || k.noCache || k.rate > 0 {
			res.add(figure{name: name + " req/s", value: st.rate(), unit: "req/s", target: k.rate,
				detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})
		}
	}
	return nil
}

func ms2(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}
