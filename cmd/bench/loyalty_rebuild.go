package main

// The loyalty phase's rebuild: the server binary's `cms projections
// rebuild loyalty` beside the running server.

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

var rebuiltLine = regexp.MustCompile(`rebuilt (\S+): (\d+) events in (\S+) \((\d+) events/s\)`)

// rebuild runs `cms projections rebuild loyalty` with the server's binary
// against the bench database while the server runs, bounded by
// -phase-budget.
func (b *loyaltyBench) rebuild(ctx context.Context, srv *cmsServer, dbURL, dir string, pool *pgxpool.Pool, res *results) error {
	var logEvents int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&logEvents); err != nil {
		return err
	}
	progressf("loyalty: %s projections rebuild loyalty over %d events (budget %s); %d other active sessions on the server",
		filepath.Base(srv.cmd.Path), logEvents, b.cfg.phaseBudget, otherSessions(ctx, pool))
	rctx, cancel := context.WithTimeout(ctx, b.cfg.phaseBudget)
	defer cancel()
	cmd := exec.CommandContext(rctx, srv.cmd.Path, "projections", "rebuild", "loyalty")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "CMS_LOG_LEVEL=warn", "CMS_DATA_DIR="+filepath.Join(dir, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	peak := ""
	var peakKiB float64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKiB = float64(ru.Maxrss) // KiB on Linux
			peak = fmt.Sprintf("%.1f MiB", peakKiB/1024)
		}
	}
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		// Over budget: the rate of the part done, from its private checkpoint.
		var done int64
		qerr := pool.QueryRow(ctx, `SELECT count(*) FROM events e, projection_checkpoints c
			WHERE c.name = 'loyalty@rebuild' AND (e.transaction_id::text::bigint, e.global_position) <= (c.tx_id::text::bigint, c.position)`).Scan(&done)
		if qerr != nil {
			return fmt.Errorf("rebuild stopped by -phase-budget %s; its progress is unknown: %w", b.cfg.phaseBudget, qerr)
		}
		res.add(figure{name: "loyalty rebuild (cms projections rebuild loyalty), events/s", value: rate(done, took), unit: "events/s", target: targetRebuildRate,
			detail: fmt.Sprintf("PARTIAL (killed after -phase-budget %s): %d of %d events in %.1fs; peak RSS %s", b.cfg.phaseBudget, done, logEvents, took.Seconds(), peak)})
		return fmt.Errorf("rebuild did not finish within -phase-budget %s (the sample is not checked after it)", b.cfg.phaseBudget)
	}
	if err != nil {
		return fmt.Errorf("cms projections rebuild loyalty: %w\nstdout: %s\nstderr (end): %s", err, snippet(stdout.Bytes(), 1000), tailOf(stderr.Bytes(), 1000))
	}
	m := rebuiltLine.FindStringSubmatch(stdout.String())
	if m == nil || m[1] != "loyalty" {
		return fmt.Errorf("cms projections rebuild loyalty: unexpected output %q", snippet(stdout.Bytes(), 500))
	}
	events, _ := strconv.ParseInt(m[2], 10, 64)
	res.add(figure{name: "loyalty rebuild (cms projections rebuild loyalty), events/s", value: rate(events, took), unit: "events/s", target: targetRebuildRate,
		detail: fmt.Sprintf("%d events (the log had %d when it started) in %s, the command's wall time with its start-up; it reported %s in %s (%s events/s); beside the running server",
			events, logEvents, took.Round(time.Millisecond), m[2], m[3], m[4])})
	res.add(figure{name: "loyalty rebuild peak RSS, MiB", value: peakKiB / 1024, unit: "MiB", decimals: 1,
		detail: "ru_maxrss of the cms projections rebuild process"})
	return nil
}

// tailOf is the last n bytes of b (progress bars end with the news).
func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
