package main

// The writes phase: single commands over HTTP as a share of what the disk
// allows for one durable row per commit (the write-path issue).
//
// In a `cms serve` of its own, -writers clients (default 16) make one
// write per request, in alternating rounds of the four kinds below, each
// -writes-duration in total split over -writes-rounds rounds (the order
// rotates round by round, so that a change of the machine's speed during
// the run hits every kind alike):
//
//   - raw: plain autocommit single-row INSERTs of the item's JSON body into
//     a logged jsonb table in a scratch schema of the server's database
//     (what pgbench's single-row inserts measure): the ceiling;
//   - item creates: POST /api/generalcontent/instance, one item each, as
//     the admin;
//   - app-user registrations: POST /api/segmentation/appuser with the
//     app's token, one device each;
//   - loyalty earns: POST /api/loyalty/user/{id}/earn on one of 64
//     identified users, each with its own idempotency key.
//
// -writes-kinds 'item create' measures only the kinds named (and the raw
// ceiling). Each kind is reported as requests/s (the median of its rounds), its
// share of the raw ceiling (the median of the per-round shares, raw being
// measured in the same round), p50/p99 over all its rounds, and the CPU
// one request took in the server, the bench and the rest of the machine.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Targets of the write-path issue.
const (
	targetItemCreateShare = 0.30
	targetItemCreateP50ms = 5
	targetOtherWriteShare = 0.20
	writesIdentified      = 64
	itemCreate            = "item create"
	// clockTicks is Linux's USER_HZ: /proc/stat counts in hundredths of a
	// second.
	clockTicks = 100
)

type writeKind struct {
	name   string
	target float64
	write  writer // every client calls it: the writers keep no state
	rates  []float64
	shares []float64
	all    appendStats
	cpu    kindCPU
}

// kindCPU is the CPU time spent while a kind's rounds ran (warm-ups
// included): the server's, the bench's, and the machine's in all (the
// rest of it is PostgreSQL's, on a machine with nothing else running).
type kindCPU struct{ wall, server, bench, machine float64 }

// perRequest says how many milliseconds of CPU one request took, at the
// kind's rate, in the server, the bench and the rest of the machine.
func (c kindCPU) perRequest(rate float64) string {
	if c.wall <= 0 || rate <= 0 {
		return ""
	}
	ms := func(s float64) float64 { return 1000 * s / c.wall / rate }
	return fmt.Sprintf("; CPU per request: server %.2f ms, bench %.2f ms, the rest of the machine (PostgreSQL) %.2f ms",
		ms(c.server), ms(c.bench), ms(c.machine-c.server-c.bench))
}

func writesPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	p, err := openServerPhase(ctx, cfg, serverURL, cfg.writers+2)
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := p.start(ctx, "writes", "cms-bench-writes-"); err != nil {
		return err
	}
	if err := p.signIn(ctx, cfg.writers, "writes"); err != nil {
		return err
	}
	kinds, cleanup, err := newWriteKinds(ctx, p)
	if err != nil {
		return err
	}
	defer cleanup()
	if cfg.writesKinds != "" {
		re, err := regexp.Compile(cfg.writesKinds)
		if err != nil {
			return fmt.Errorf("-writes-kinds: %w", err)
		}
		raw := kinds[0]
		kinds = slices.DeleteFunc(kinds, func(k *writeKind) bool { return k != raw && !re.MatchString(k.name) })
	}

	rounds := cfg.writesRounds
	seg := cfg.writesDuration / time.Duration(rounds)
	writers := make([][]writer, len(kinds))
	for k, kind := range kinds {
		writers[k] = slices.Repeat([]writer{kind.write}, cfg.writers)
	}
	progressf("writes: %d clients; %s alternate in %d rounds of %s each (+%s warm-up); %d other active sessions on the server",
		cfg.writers, kindNames(kinds), rounds, seg, cfg.warmup, otherSessions(ctx, p.pool))
	cpu0, t0 := p.srv.cpuSeconds(), time.Now()
	for r := range rounds {
		rates := make([]float64, len(kinds))
		for i := range kinds {
			k := (i + r) % len(kinds) // rotate the order round by round
			s0, b0, m0, w0 := p.srv.cpuSeconds(), selfCPUSeconds(), machineCPU(), time.Now()
			st, err := measure(ctx, writers[k], cfg.warmup, seg)
			if err != nil {
				return fmt.Errorf("%s: %w", kinds[k].name, err)
			}
			c := &kinds[k].cpu
			c.wall += time.Since(w0).Seconds()
			c.server += p.srv.cpuSeconds() - s0
			c.bench += selfCPUSeconds() - b0
			c.machine += (machineCPU().busy - m0.busy) / clockTicks
			rates[k] = st.rate()
			kinds[k].rates = append(kinds[k].rates, st.rate())
			kinds[k].all = kinds[k].all.merge(st)
		}
		line := make([]string, len(kinds))
		for k := range kinds {
			kinds[k].shares = append(kinds[k].shares, rates[k]/rates[0])
			line[k] = fmt.Sprintf("%s %s/s", kinds[k].name, thousands(rates[k]))
		}
		progressf("writes round %d/%d: %s", r+1, rounds, strings.Join(line, ", "))
	}
	cores := (p.srv.cpuSeconds() - cpu0) / time.Since(t0).Seconds()
	for k, kind := range kinds {
		detail := fmt.Sprintf("median of %d rounds; p50 %s, p99 %s, max %s", rounds,
			ms2(kind.all.pct(0.5)), ms2(kind.all.pct(0.99)), ms2(kind.all.pct(1))) + kind.cpu.perRequest(median(kind.rates))
		res.add(figure{name: "writes: " + kind.name + ", req/s", value: median(kind.rates), unit: "req/s", detail: detail})
		if k == 0 {
			continue
		}
		res.add(figure{name: "writes: " + kind.name + " / raw", value: median(kind.shares), percent: true, target: kind.target,
			detail: fmt.Sprintf("per round: %s; server CPU %.2f cores over the phase", percents(kind.shares), cores)})
	}
	for _, kind := range kinds {
		if kind.name == itemCreate {
			res.add(figure{name: "writes: item create p50 ms", value: ms(kind.all.pct(0.5)), unit: "ms", decimals: 2,
				atMost: true, target: targetItemCreateP50ms, detail: "p99 " + ms2(kind.all.pct(0.99))})
		}
	}
	return nil
}

// newWriteKinds prepares the raw table, the module, the app's token and
// the identified users the writers write to.
func newWriteKinds(ctx context.Context, p *serverPhase) (_ []*writeKind, cleanup func(), err error) {
	if _, err := p.pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+rawSchema+` CASCADE;
		CREATE SCHEMA `+rawSchema+`;
		CREATE TABLE `+rawSchema+`.items (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body jsonb NOT NULL)`); err != nil {
		return nil, nil, fmt.Errorf("create raw table: %w", err)
	}
	cleanup = func() { _, _ = p.pool.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS `+rawSchema+` CASCADE`) }
	defer func() {
		if err != nil {
			cleanup()
		}
	}()
	var module struct {
		ID string `json:"id"`
	}
	fields := []map[string]any{{"name": "title", "type": "000000000000000000000001"}, {"name": "body", "type": "000000000000000000000012"}, {"name": "price", "type": "000000000000000000000002"}}
	if err := p.api.call(ctx, http.MethodPost, "/api/generalcontent/module", p.admin,
		map[string]any{"app": p.app.ID, "name": "Notes", "fields": fields}, 0, &module); err != nil {
		return nil, nil, fmt.Errorf("create module: %w", err)
	}
	appToken, err := p.api.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {p.app.ClientID}, "client_secret": {p.app.ClientSecret}})
	if err != nil {
		return nil, nil, fmt.Errorf("app token: %w", err)
	}
	users, err := registerIdentified(ctx, p, appToken)
	if err != nil {
		return nil, nil, err
	}
	var seq atomic.Int64
	item := func() map[string]any {
		n := seq.Add(1)
		return map[string]any{"module": module.ID, "name": fmt.Sprintf("note %d", n), "values": map[string]any{
			"title": fmt.Sprintf("Note %d", n), "body": "A note written by the writes phase of the benchmark.", "price": n % 1000}}
	}
	post := func(path, token string, body func() any, want int) writer {
		return func(ctx context.Context) error {
			return p.api.call(ctx, http.MethodPost, path, token, body(), want, nil)
		}
	}
	kinds := []*writeKind{
		{name: "raw INSERT", write: rawItemWriter(p.pool, item)},
		{name: itemCreate, target: targetItemCreateShare, write: post("/api/generalcontent/instance", p.admin,
			func() any { return item() }, http.StatusCreated)},
		{name: "app-user registration", target: targetOtherWriteShare, write: post("/api/segmentation/appuser", appToken,
			func() any {
				return map[string]any{"devices": []map[string]any{{"platform": "android", "token": fmt.Sprintf("bench-token-%d", seq.Add(1))}}}
			}, 0)},
		{name: "loyalty earn", target: targetOtherWriteShare, write: func(ctx context.Context) error {
			n := seq.Add(1)
			return p.api.call(ctx, http.MethodPost, "/api/loyalty/user/"+users[int(n)%len(users)]+"/earn", p.admin,
				map[string]any{"amount": 1 + n%50, "reason": "bench", "idempotencyKey": fmt.Sprintf("writes-%d", n)}, http.StatusCreated, nil)
		}},
	}
	return kinds, cleanup, nil
}

// rawItemWriter inserts one item body per autocommit statement.
func rawItemWriter(pool *pgxpool.Pool, item func() map[string]any) writer {
	return func(ctx context.Context) error {
		body, err := json.Marshal(item())
		if err != nil {
			return err
		}
		_, err = pool.Exec(ctx, `INSERT INTO `+rawSchema+`.items (body) VALUES ($1)`, body)
		return err
	}
}

// registerIdentified registers writesIdentified identified users of the
// app and returns their ids.
func registerIdentified(ctx context.Context, p *serverPhase, appToken string) ([]string, error) {
	ids := make([]string, writesIdentified)
	for i := range ids {
		var out struct {
			ID string `json:"id"`
		}
		body := map[string]any{"auth": map[string]any{"email": fmt.Sprintf("writer%d@bench.example", i), "password": "bench-password-1", "deviceId": fmt.Sprintf("bench-device-%d", i)},
			"profile": map[string]any{"name": fmt.Sprintf("Writer %d", i)}}
		if err := p.api.call(ctx, http.MethodPost, "/api/segmentation/identified/register", appToken, body, 0, &out); err != nil {
			return nil, fmt.Errorf("register identified user: %w", err)
		}
		ids[i] = out.ID
		if ids[i] == "" {
			return nil, fmt.Errorf("register identified user: answer without id")
		}
	}
	return ids, nil
}

func kindNames(kinds []*writeKind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func percents(xs []float64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf("%.0f%%", 100*x)
	}
	return strings.Join(s, " ")
}
