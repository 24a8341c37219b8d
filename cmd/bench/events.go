package main

// The events phase: HALO's daily events (POST /api/events/daily) sent by
// 16 clients while the content search (b) runs, against (b) alone, in
// alternating rounds.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const (
	eventsPath     = "/api/events/daily"
	eventsClients  = 16
	eventsWarmup   = time.Second
	eventsCatchUp  = 2 * time.Minute
	eventsPassword = "bench-events-1"
)

func (c *config) validateEvents() error {
	if c.eventsItems < 1 || c.eventsRounds < 1 || c.eventsDuration <= 0 {
		return errors.New("-events-items, -events-rounds and -events-duration must be positive")
	}
	return nil
}

// eventsPhase imports -events-items products (as the content phase does),
// then measures, in -events-rounds rounds, the search (b) alone and (b)
// while 16 clients report events, each for -events-duration after a 1s
// warm-up; as served and with Cache-Control: no-cache. Then it waits for
// the analytics projection and checks that it counted every accepted
// report.
func eventsPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	p, err := openServerPhase(ctx, cfg, serverURL, 2)
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := p.start(ctx, "events", "cms-bench-events-"); err != nil {
		return err
	}
	if err := p.signIn(ctx, cfg.contentClients+eventsClients, "bench"); err != nil {
		return err
	}
	b, err := newContentBench(ctx, cfg, p, cfg.eventsItems)
	if err != nil {
		return err
	}
	if err := b.importTo(ctx, cfg.eventsItems, res); err != nil {
		return err
	}
	if err := analyzeContent(ctx, p.pool); err != nil {
		return err
	}
	if err := b.checkPublished(ctx, cfg.eventsItems); err != nil {
		return err
	}
	tokens, err := eventTokens(ctx, p, b.appToken)
	if err != nil {
		return err
	}
	var sent atomic.Int64
	senders := make([]writer, eventsClients)
	for i := range senders {
		senders[i] = eventSender(p.api, tokens[i%len(tokens)], i, &sent)
	}
	label := sizeLabel(cfg.eventsItems)
	for _, noCache := range []bool{false, true} {
		name := "(b)"
		if noCache {
			name = "(b) no-cache"
		}
		if err := measureBesideEvents(ctx, cfg, b, name, noCache, !noCache, senders, label, res); err != nil {
			return err
		}
	}
	return checkEventCounts(ctx, p, sent.Load(), res)
}

// eventTokens are the reporters' tokens: half the clients report with an
// identified user's token (a device of the day), half with the app's.
func eventTokens(ctx context.Context, p *serverPhase, appToken string) ([]string, error) {
	tokens := []string{}
	for i := 0; i < eventsClients/2; i++ {
		var au struct {
			Alias string `json:"alias"`
		}
		if err := p.api.call(ctx, http.MethodPost, "/api/segmentation/appuser", appToken,
			map[string]any{"devices": []any{}, "tags": []any{}}, 0, &au); err != nil {
			return nil, fmt.Errorf("app user: %w", err)
		}
		email := fmt.Sprintf("reporter%d@bench.example", i)
		if err := p.api.call(ctx, http.MethodPost, "/api/segmentation/identified/register", appToken, map[string]any{
			"auth":    map[string]any{"email": email, "password": eventsPassword, "deviceId": au.Alias, "network": "halo"},
			"profile": map[string]any{"email": email, "name": "Reporter", "surname": "Bench", "photoUrl": ""},
		}, 0, nil); err != nil {
			return nil, fmt.Errorf("register %s: %w", email, err)
		}
		var login struct {
			Token struct {
				AccessToken string `json:"access_token"`
			} `json:"token"`
		}
		if err := p.api.call(ctx, http.MethodPost, "/api/segmentation/identified/login", appToken,
			url.Values{"network": {"halo"}, "email": {email}, "password": {eventsPassword}, "deviceId": {au.Alias}}, http.StatusOK, &login); err != nil {
			return nil, fmt.Errorf("sign in %s: %w", email, err)
		}
		tokens = append(tokens, login.Token.AccessToken, appToken)
	}
	return tokens, nil
}

// eventSender reports one event per call, the four types in turn, and
// wants 200.
func eventSender(a *cmsAPI, token string, client int, sent *atomic.Int64) writer {
	var n int
	return func(ctx context.Context) error {
		n++
		body := fmt.Sprintf(`{"type":"%d","coord":"52.%d,4.%d","extra":{"client":%d,"n":%d,"screen":"home"}}`, 1+n%4, n%100, client, client, n)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+eventsPath+"/", bytes.NewReader([]byte(body)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := a.hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2000))
		if resp.StatusCode != http.StatusOK {
			return &statusError{method: http.MethodPost, path: eventsPath, status: resp.StatusCode, body: snippet(b, 500)}
		}
		sent.Add(1)
		return nil
	}
}

// condition is one kind of measurement across the rounds: the merged
// latencies, each round's figure, and the server's CPU during them.
type condition struct {
	st      appendStats
	rounds  []string
	srvCPU  float64 // server CPU seconds
	selfCPU float64 // the bench's CPU seconds
	wall    float64 // seconds
	machine []string
}

// cpuMark is where the CPU counters stood when a measurement began.
type cpuMark struct {
	srv, self float64
	mach      cpuTimes
	at        time.Time
}

func markCPU(srv *cmsServer) cpuMark {
	return cpuMark{srv: srv.cpuSeconds(), self: selfCPUSeconds(), mach: machineCPU(), at: time.Now()}
}

func (c *condition) add(st appendStats, round string, srv *cmsServer, m cpuMark) {
	c.st = c.st.merge(st)
	c.rounds = append(c.rounds, round)
	if srv == nil {
		return
	}
	c.srvCPU += srv.cpuSeconds() - m.srv
	c.selfCPU += selfCPUSeconds() - m.self
	c.wall += time.Since(m.at).Seconds()
	c.machine = append(c.machine, strings.TrimPrefix(machineCPU().since(m.mach), ", machine "))
}

func (c *condition) cores() string {
	w := max(c.wall, 1e-9)
	return fmt.Sprintf("CPU: server %.2f cores, bench client %.2f cores; machine per round %v", c.srvCPU/w, c.selfCPU/w, c.machine)
}

// measureBesideEvents alternates (b) alone, the reports alone (with
// alsoAlone) and (b) beside the reports, -events-rounds times, and
// reports the merged figures.
func measureBesideEvents(ctx context.Context, cfg config, b *contentBench, name string, noCache, alsoAlone bool, senders []writer,
	label string, res *results) error {
	queries := queriesB(b.facts[:cfg.eventsItems])
	checked, err := checkQuery(ctx, b.p.api, b.appToken, b.module, queries[0], b.facts[:cfg.eventsItems])
	if err != nil {
		return fmt.Errorf("search %s: %w", name, err)
	}
	bodies := make([][]byte, len(queries))
	for i, q := range queries {
		bodies[i] = q.body(b.module)
	}
	var next atomic.Uint64
	var received atomic.Int64
	searchers := make([]writer, cfg.contentClients)
	for i := range searchers {
		searchers[i] = searchWriter(b.p.api, b.appToken, bodies, noCache, &next, &received)
	}
	progressf("events: search %s @%s, %d rounds of %s alone and %s beside %d reporting clients; %s",
		name, label, cfg.eventsRounds, cfg.eventsDuration, cfg.eventsDuration, eventsClients, checked)
	var alone, beside, events, eventsAlone condition
	srv := b.p.srv
	for r := 0; r < cfg.eventsRounds; r++ {
		m := markCPU(srv)
		st, err := measure(ctx, searchers, eventsWarmup, cfg.eventsDuration)
		if err != nil {
			return fmt.Errorf("search %s alone: %w", name, err)
		}
		alone.add(st, ms2(st.pct(0.99)), srv, m)
		if alsoAlone {
			m = markCPU(srv)
			est, err := measure(ctx, senders, eventsWarmup, cfg.eventsDuration)
			if err != nil {
				return fmt.Errorf("events alone: %w", err)
			}
			eventsAlone.add(est, thousands(est.rate()), srv, m)
		}
		var wg sync.WaitGroup
		var sst, est appendStats
		var serr, eerr error
		m = markCPU(srv)
		wg.Add(2)
		go func() { defer wg.Done(); sst, serr = measure(ctx, searchers, eventsWarmup, cfg.eventsDuration) }()
		go func() { defer wg.Done(); est, eerr = measure(ctx, senders, eventsWarmup, cfg.eventsDuration) }()
		wg.Wait()
		if err := errors.Join(serr, eerr); err != nil {
			return fmt.Errorf("search %s beside events: %w", name, err)
		}
		beside.add(sst, ms2(sst.pct(0.99)), srv, m)
		events.add(est, thousands(est.rate()), nil, m)
	}
	res.add(figure{name: "events accepted/s beside " + name + " @" + label, value: events.st.rate(), unit: "events/s",
		detail: fmt.Sprintf("%d clients (half identified users, half the app token); per round %v; latency p50 %s, p99 %s, max %s",
			eventsClients, events.rounds, ms2(events.st.pct(0.5)), ms2(events.st.pct(0.99)), ms2(events.st.pct(1)))})
	res.add(figure{name: "search " + name + " @" + label + " p99 ms beside events", value: float64(beside.st.pct(0.99)) / float64(time.Millisecond),
		unit: "ms", decimals: 1, detail: fmt.Sprintf("%d clients, %s req/s, p50 %s; p99 per round %v; %s", cfg.contentClients,
			thousands(beside.st.rate()), ms2(beside.st.pct(0.5)), beside.rounds, beside.cores())})
	res.add(figure{name: "search " + name + " @" + label + " p99 ms alone", value: float64(alone.st.pct(0.99)) / float64(time.Millisecond),
		unit: "ms", decimals: 1, detail: fmt.Sprintf("%d clients, %s req/s, p50 %s; p99 per round %v; %s", cfg.contentClients,
			thousands(alone.st.rate()), ms2(alone.st.pct(0.5)), alone.rounds, alone.cores())})
	if alsoAlone {
		res.add(figure{name: "events accepted/s alone", value: eventsAlone.st.rate(), unit: "events/s",
			detail: fmt.Sprintf("%d clients, no search beside; per round %v; latency p50 %s, p99 %s; %s", eventsClients,
				eventsAlone.rounds, ms2(eventsAlone.st.pct(0.5)), ms2(eventsAlone.st.pct(0.99)), eventsAlone.cores())})
	}
	return nil
}

// checkEventCounts waits for the analytics projection to catch up with
// the log and checks that the figures count every accepted report.
func checkEventCounts(ctx context.Context, p *serverPhase, sent int64, res *results) error {
	t0 := time.Now()
	for {
		var counted int64
		if err := p.pool.QueryRow(ctx, `SELECT coalesce(sum(events), 0)::bigint FROM analytics_daily_counts`).Scan(&counted); err != nil {
			return err
		}
		if counted == sent {
			break
		}
		if counted > sent || time.Since(t0) > eventsCatchUp {
			return fmt.Errorf("the analytics projection counts %d events, %d were accepted", counted, sent)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	var devices int64
	if err := p.pool.QueryRow(ctx, `SELECT count(*) FROM analytics_daily_devices`).Scan(&devices); err != nil {
		return err
	}
	progressf("events: the analytics projection counted all %d accepted reports %s after the last round; %d active devices",
		sent, time.Since(t0).Round(time.Millisecond), devices)
	if devices < eventsClients/2 {
		return fmt.Errorf("%d active devices, want at least %d (the identified reporters)", devices, eventsClients/2)
	}
	return nil
}
