package main

// The loyalty phase's self measurements: identified users signed in,
// GET /api/loyalty/user/self by closed-loop clients, with or without
// earning clients beside them.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// signedIn is an identified user's token and loyalty account.
type signedIn struct {
	token string
	acc   *loyaltyAccount
}

// signIn signs loyaltyLogins identified users in with the app's token and
// checks that each token's self is its own account.
func (b *loyaltyBench) signIn(ctx context.Context, clientID, secret string) ([]signedIn, error) {
	appToken, err := b.api.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}})
	if err != nil {
		return nil, fmt.Errorf("app token: %w", err)
	}
	t0 := time.Now()
	tokens := make([]signedIn, loyaltyLogins)
	step := len(b.accounts) / loyaltyLogins
	for k := range tokens {
		acc := b.accounts[k*step]
		var login struct {
			User struct {
				ID string `json:"id"`
			} `json:"user"`
			Token struct {
				AccessToken string `json:"access_token"`
			} `json:"token"`
		}
		err := b.api.call(ctx, http.MethodPost, "/api/segmentation/identified/login", appToken,
			url.Values{"network": {"halo"}, "email": {acc.email}, "password": {loyaltyPassword}}, http.StatusOK, &login)
		if err != nil {
			return nil, fmt.Errorf("sign in %s: %w", acc.email, err)
		}
		if login.User.ID != acc.id || login.Token.AccessToken == "" {
			return nil, fmt.Errorf("sign in %s: user %q, token %q", acc.email, login.User.ID, login.Token.AccessToken)
		}
		tokens[k] = signedIn{token: login.Token.AccessToken, acc: acc}
		var self loyaltyUserView
		if err := b.api.call(ctx, http.MethodGet, "/api/loyalty/user/self", tokens[k].token, nil, http.StatusOK, &self); err != nil {
			return nil, fmt.Errorf("self of %s: %w", acc.id, err)
		}
		if self.ID != acc.id || self.Balance != acc.balance.Load() {
			return nil, fmt.Errorf("self of %s: id %s, balance %d, want %d", acc.id, self.ID, self.Balance, acc.balance.Load())
		}
	}
	progressf("loyalty: %d identified users signed in in %s; each self answers its own account and balance", loyaltyLogins, time.Since(t0).Round(time.Millisecond))
	return tokens, nil
}

// measureSelf measures GET self by loyaltyClients clients, with as many
// earning clients beside them when withWrites.
func (b *loyaltyBench) measureSelf(ctx context.Context, srv *cmsServer, pool *pgxpool.Pool, tokens []signedIn, withWrites bool, res *results) error {
	var next atomic.Uint64
	var received atomic.Int64
	writers := make([]writer, loyaltyClients)
	for i := range writers {
		writers[i] = b.selfReader(tokens, &next, &received)
	}
	what := "self (read load)"
	if withWrites {
		what = "self (under write load)"
	}
	progressf("loyalty: %s: %d clients, %s (+%s warm-up); %d other active sessions on the server",
		what, loyaltyClients, b.cfg.loyaltyDuration, loyaltyWarmup, otherSessions(ctx, pool))

	// The earning clients stop between requests, never in the middle of
	// one: an earn the server recorded must be in the bench's sums.
	var stopWrites atomic.Bool
	var wg sync.WaitGroup
	var werrMu sync.Mutex
	var werr error
	earnLats := make([][]time.Duration, loyaltyClients)
	if withWrites {
		for w := range loyaltyClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 0xea51))
				for !stopWrites.Load() && ctx.Err() == nil {
					t0 := time.Now()
					if err := b.earn(ctx, b.accounts[r.IntN(len(b.accounts))], 1+r.Int64N(100)); err != nil {
						werrMu.Lock()
						werr = errors.Join(werr, err)
						werrMu.Unlock()
						return
					}
					earnLats[w] = append(earnLats[w], time.Since(t0))
				}
			}()
		}
	}
	srvCPU0, selfCPU0 := srv.cpuSeconds(), selfCPUSeconds()
	mach0 := machineCPU()
	hits0, misses0 := b.viewLookups(ctx)
	t0 := time.Now()
	st, err := measure(ctx, writers, loyaltyWarmup, b.cfg.loyaltyDuration)
	wall := time.Since(t0)
	hits1, misses1 := b.viewLookups(ctx)
	stopWrites.Store(true)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if werr != nil {
		return fmt.Errorf("%s: an earning client failed: %w", what, werr)
	}
	cpu := fmt.Sprintf("CPU during the run (incl. warm-up): server %.2f cores, bench client %.2f cores%s",
		(srv.cpuSeconds()-srvCPU0)/wall.Seconds(), (selfCPUSeconds()-selfCPU0)/wall.Seconds(), machineCPU().since(mach0))
	writes := ""
	if withWrites {
		var all []time.Duration
		for _, l := range earnLats {
			all = append(all, l...)
		}
		slices.Sort(all)
		es := appendStats{ops: int64(len(all)), latencies: all}
		writes = fmt.Sprintf("; meanwhile %d other clients earned %d times (%s commands/s over the whole run, earn latency p50 %s, p99 %s, max %s)",
			loyaltyClients, es.ops, thousands(rate(es.ops, wall)), ms2(es.pct(0.5)), ms2(es.pct(0.99)), ms2(es.pct(1)))
	}
	cached := "; the server keeps no account views in memory"
	if looked := (hits1 - hits0) + (misses1 - misses0); hits1+misses1 > 0 && looked > 0 {
		cached = fmt.Sprintf("; %.1f%% of the account views (incl. warm-up) answered from the server's memory", 100*float64(hits1-hits0)/float64(looked))
	}
	detail := fmt.Sprintf("%d GET /api/loyalty/user/self in %s by %d clients with %d identified tokens in turn (%s req/s); latency p50 %s, p99 %s, max %s; %s bytes/answer on average, each balance at least the sum of the earns acknowledged before it was asked%s%s; %s",
		st.ops, b.cfg.loyaltyDuration, loyaltyClients, len(tokens), thousands(st.rate()), ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)),
		thousands(float64(received.Load())/float64(max(next.Load(), 1))), cached, writes, cpu)
	res.add(figure{name: "loyalty " + what + " p99 ms", value: ms(st.pct(0.99)), unit: "ms", decimals: 2,
		target: targetLoyaltySelfP99, atMost: true, detail: detail})
	res.add(figure{name: "loyalty " + what + " req/s", value: st.rate(), unit: "req/s", detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})
	return nil
}

// selfReader GETs self with the tokens in turn, wants 200 and a balance
// no lower than the earns acknowledged before the request (read-your-
// writes, whoever wrote).
func (b *loyaltyBench) selfReader(tokens []signedIn, next *atomic.Uint64, received *atomic.Int64) writer {
	const path = "/api/loyalty/user/self"
	var bufs sync.Pool
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, loyaltyRequestLimit)
		defer cancel()
		tok := tokens[(next.Add(1)-1)%uint64(len(tokens))]
		acked := tok.acc.balance.Load()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api.base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.token)
		resp, err := b.api.hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
			return &statusError{method: http.MethodGet, path: path, status: resp.StatusCode, body: snippet(body, 500)}
		}
		buf, _ := bufs.Get().(*bytes.Buffer)
		if buf == nil {
			buf = &bytes.Buffer{}
		}
		defer bufs.Put(buf)
		buf.Reset()
		n, err := buf.ReadFrom(resp.Body)
		received.Add(n)
		if err != nil {
			return err
		}
		// The answer's first "balance" is the account's (the user's
		// fields come before the transactions); no JSON decoding, which
		// would take the server's CPU.
		balance, ok := firstInt(buf.Bytes(), `"balance":`)
		if !ok || balance < acked {
			return fmt.Errorf("self of %s: balance %d (found: %v), but the earns acknowledged before it was asked add up to %d: %s",
				tok.acc.id, balance, ok, acked, snippet(buf.Bytes(), 300))
		}
		return nil
	}
}

// firstInt reads the integer after the first key in body.
func firstInt(body []byte, key string) (int64, bool) {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := body[i+len(key):]
	end := 0
	for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
		end++
	}
	v, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return v, err == nil
}

// viewLookups reads the server's account view cache counters (zeros when
// it has none).
func (b *loyaltyBench) viewLookups(ctx context.Context) (hits, misses uint64) {
	var raw []byte
	if err := b.api.call(ctx, http.MethodGet, "/metrics", "", nil, http.StatusOK, &raw); err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case `cms_loyalty_view_cache_lookups_total{result="hit"}`:
			hits = uint64(v)
		case `cms_loyalty_view_cache_lookups_total{result="miss"}`:
			misses = uint64(v)
		}
	}
	return hits, misses
}
