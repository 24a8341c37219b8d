package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/rights"
)

// streamsPerWriter: each append writer cycles over this many streams of
// its own, so that appends both create streams and extend them.
const streamsPerWriter = 64

const rawSchema = "bench_raw"

func appendPhase(ctx context.Context, cfg config, pool *pgxpool.Pool, store *postgres.EventStore, res *results) error {
	var sc string
	if err := pool.QueryRow(ctx, `SHOW synchronous_commit`).Scan(&sc); err != nil {
		return err
	}
	res.header = append(res.header, "append phase: SHOW synchronous_commit = "+sc)
	progressf("SHOW synchronous_commit = %s", sc)
	if sc != "on" && sc != "local" && sc != "remote_apply" && sc != "remote_write" {
		return fmt.Errorf("synchronous_commit is %q: the append figures are for durable commits, set it to on", sc)
	}

	// The raw ceiling's table: same columns, defaults, identity, primary key
	// and unique constraints as events, logged, in a scratch schema.
	if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+rawSchema+` CASCADE;
		CREATE SCHEMA `+rawSchema+`;
		CREATE TABLE `+rawSchema+`.events (LIKE public.events INCLUDING ALL)`); err != nil {
		return fmt.Errorf("create raw table: %w", err)
	}
	defer func() {
		if _, err := pool.Exec(context.WithoutCancel(ctx), `DROP SCHEMA IF EXISTS `+rawSchema+` CASCADE`); err != nil {
			progressf("drop schema %s: %v", rawSchema, err)
		}
	}()
	var persistence string
	if err := pool.QueryRow(ctx, `SELECT relpersistence::text FROM pg_class WHERE oid = '`+rawSchema+`.events'::regclass`).Scan(&persistence); err != nil {
		return err
	}
	if persistence != "p" {
		return fmt.Errorf("raw table is not a permanent logged table (relpersistence %q)", persistence)
	}

	// The two measurements alternate in rounds (raw, store, store, raw,
	// raw, ...), so that a change of the machine's fsync or CPU speed during
	// the run (a shared server, a noisy disk) hits both alike; each kind
	// gets -duration in total. Writers keep their streams across rounds.
	rounds := cfg.rounds
	seg := cfg.duration / time.Duration(rounds)
	rawWs, storeWs := make([]writer, cfg.writers), make([]writer, cfg.writers)
	newRaw, newStore := rawWriter(pool), storeWriter(store)
	for w := range cfg.writers {
		rawWs[w], storeWs[w] = newRaw(w), newStore(w)
	}
	progressf("append: %d writers; raw single-row INSERTs and EventStore.Append of one event alternate in %d rounds of %s each (+%s warm-up); %d other active sessions on the server",
		cfg.writers, rounds, seg, cfg.warmup, otherSessions(ctx, pool))
	walBefore, walErr := walSyncCount(ctx, pool)
	phaseStart := time.Now()
	var raw, st appendStats
	var roundRatios []string
	var ratios []float64
	for r := range rounds {
		var rr, sr appendStats
		runRaw := func() (err error) {
			if rr, err = measure(ctx, rawWs, cfg.warmup, seg); err != nil {
				return fmt.Errorf("raw inserts: %w", err)
			}
			return nil
		}
		runStore := func() (err error) {
			if sr, err = measure(ctx, storeWs, cfg.warmup, seg); err != nil {
				return fmt.Errorf("store appends: %w", err)
			}
			return nil
		}
		order := []func() error{runRaw, runStore}
		if r%2 == 1 {
			order = []func() error{runStore, runRaw}
		}
		for _, run := range order {
			if err := run(); err != nil {
				return err
			}
		}
		raw, st = raw.merge(rr), st.merge(sr)
		ratios = append(ratios, sr.rate()/rr.rate())
		roundRatios = append(roundRatios, fmt.Sprintf("%.0f%%", 100*sr.rate()/rr.rate()))
		progressf("append round %d/%d: store %s events/s, raw %s rows/s (%s)", r+1, rounds, thousands(sr.rate()), thousands(rr.rate()), roundRatios[r])
	}

	groupCommit := ""
	if walAfter, err := walSyncCount(ctx, pool); err == nil && walErr == nil && walAfter > walBefore {
		// Includes the warm-ups (not counted in the figures) and the
		// server's other sessions: an indication only.
		syncs := walAfter - walBefore
		groupCommit = fmt.Sprintf("; WAL fsyncs during the phase: %d in %.0fs (%.0f/s, pg_stat_wal, server-wide)",
			syncs, time.Since(phaseStart).Seconds(), rate(syncs, time.Since(phaseStart)))
	}
	res.add(figure{name: "append: EventStore.Append, 1 event", value: st.rate(), unit: "events/s", detail: st.String()})
	res.add(figure{name: "append: raw INSERT ceiling", value: raw.rate(), unit: "rows/s", detail: raw.String()})
	ratio := 0.0
	if raw.rate() > 0 {
		ratio = st.rate() / raw.rate()
	}
	res.add(figure{name: "append: store / raw ratio", value: ratio, percent: true, target: targetAppendRatio,
		detail: fmt.Sprintf("%d writers, synchronous_commit=%s; median of the rounds' ratios %.1f%%, per round: %s",
			cfg.writers, sc, 100*median(ratios), strings.Join(roundRatios, " ")) + groupCommit})
	return nil
}

// A writer makes one write (one commit) per call.
type writer func(ctx context.Context) error

// storeWriter appends one rights.Granted event per call, cycling over the
// writer's own streams with the exact expected version.
func storeWriter(store *postgres.EventStore) func(w int) writer {
	return func(w int) writer {
		r := rand.New(rand.NewPCG(uint64(w), 1))
		users := make([]string, streamsPerWriter)
		versions := make([]int64, streamsPerWriter)
		for k := range users {
			users[k] = fmt.Sprintf("bench-w%02d-u%02d", w, k)
		}
		k := 0
		return func(ctx context.Context) error {
			g := randomGrant(r, users[k])
			ev := wrap(r, g, g.AppID, g.By)
			res, err := store.Append(ctx, rights.Stream(users[k]), versions[k], ev)
			if err != nil {
				return err
			}
			if res.Duplicate || res.Version != versions[k]+1 {
				return fmt.Errorf("append to %s at %d: unexpected result %+v", users[k], versions[k], res)
			}
			versions[k] = res.Version
			k = (k + 1) % streamsPerWriter
			return nil
		}
	}
}

type rawMeta struct {
	EventID       string `json:"eventId"`
	Actor         string `json:"actor,omitempty"`
	App           string `json:"app,omitempty"`
	CorrelationID string `json:"correlationId,omitempty"`
	ClientIP      string `json:"clientIp,omitempty"`
}

// rawWriter inserts one row per autocommit statement: the same values the
// store writes (JSON encoded the same way, a UUIDv7 event id, per-stream
// versions), into the raw table.
func rawWriter(pool *pgxpool.Pool) func(w int) writer {
	return func(w int) writer {
		r := rand.New(rand.NewPCG(uint64(w), 2))
		users := make([]string, streamsPerWriter)
		streams := make([]string, streamsPerWriter)
		versions := make([]int64, streamsPerWriter)
		for k := range streams {
			users[k] = fmt.Sprintf("bench-w%02d-u%02d", w, k)
			streams[k] = rights.Stream(users[k])
		}
		k := 0
		return func(ctx context.Context) error {
			g := randomGrant(r, users[k])
			ev := wrap(r, g, g.AppID, g.By)
			id, err := uuid.NewV7()
			if err != nil {
				return err
			}
			data, err := json.Marshal(g)
			if err != nil {
				return err
			}
			meta, err := json.Marshal(rawMeta{EventID: id.String(), Actor: ev.Meta.Actor, App: ev.Meta.App,
				CorrelationID: ev.Meta.CorrelationID, ClientIP: ev.Meta.ClientIP})
			if err != nil {
				return err
			}
			_, err = pool.Exec(ctx, `INSERT INTO `+rawSchema+`.events
				(stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
				VALUES ($1, $2, $3, $4, $5, $6, $7)`,
				streams[k], versions[k]+1, id, g.EventType(), int32(1), data, meta)
			if err != nil {
				return err
			}
			versions[k]++
			k = (k + 1) % streamsPerWriter
			return nil
		}
	}
}

type appendStats struct {
	writers   int
	ops       int64
	elapsed   time.Duration
	latencies []time.Duration // sorted
}

func (s appendStats) rate() float64 { return rate(s.ops, s.elapsed) }

// merge adds the measurement o to s.
func (s appendStats) merge(o appendStats) appendStats {
	if s.ops == 0 && s.elapsed == 0 {
		return o
	}
	s.ops += o.ops
	s.elapsed += o.elapsed
	s.latencies = append(s.latencies, o.latencies...)
	slices.Sort(s.latencies)
	return s
}

func (s appendStats) pct(p float64) time.Duration {
	if len(s.latencies) == 0 {
		return 0
	}
	i := int(p * float64(len(s.latencies)-1))
	return s.latencies[i]
}

func (s appendStats) String() string {
	return fmt.Sprintf("%d commits in %.1fs by %d writers; latency p50 %s, p99 %s, max %s",
		s.ops, s.elapsed.Seconds(), s.writers,
		s.pct(0.5).Round(10*time.Microsecond), s.pct(0.99).Round(10*time.Microsecond),
		s.pct(1).Round(10*time.Microsecond))
}

// measure runs the writers for warmup and then duration,
// counting the writes that started in the timed window. The first error
// stops every writer.
func measure(ctx context.Context, writers []writer, warmup, duration time.Duration) (appendStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	timedFrom := start.Add(warmup)
	end := timedFrom.Add(duration)

	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		lats     = make([][]time.Duration, len(writers))
	)
	for w, wr := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for {
				t0 := time.Now()
				if !t0.Before(end) || ctx.Err() != nil {
					break
				}
				if err := wr(ctx); err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = fmt.Errorf("writer %d: %w", w, err)
					}
					mu.Unlock()
					cancel()
					break
				}
				if !t0.Before(timedFrom) {
					mine = append(mine, time.Since(t0))
				}
			}
			lats[w] = mine
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return appendStats{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return appendStats{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	if len(all) == 0 {
		return appendStats{}, errors.New("no write completed")
	}
	return appendStats{writers: len(writers), ops: int64(len(all)), elapsed: duration, latencies: all}, nil
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func walSyncCount(ctx context.Context, pool *pgxpool.Pool) (int64, error) {
	var n int64
	err := pool.QueryRow(ctx, `SELECT wal_sync FROM pg_stat_wal`).Scan(&n)
	return n, err
}
