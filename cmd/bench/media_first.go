package main

// First transforms: each request the first of its derived image, by 16
// clients (with the server's memory watched) and by one client per core.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// firstRun is one pass over a list of derived images never made before.
type firstRun struct {
	st   appendStats
	cond condition
	wall time.Duration
	busy int64 // 503 answers, asked again
}

// runFirst asks for every URL once, by clients clients, and wants each
// a WebP of its width.
func runFirst(ctx context.Context, p *serverPhase, urls []derivedURL, clients int) (firstRun, error) {
	hc := newMediaClient(clients)
	defer hc.CloseIdleConnections()
	var next, busy atomic.Int64
	lats := make([][]time.Duration, clients)
	errs := make([]error, clients)
	var wg sync.WaitGroup
	m := markCPU(p.srv)
	t0 := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(urls) || ctx.Err() != nil {
					return
				}
				s := time.Now()
				for {
					err := getImage(ctx, hc, urls[i].url, urls[i].width)
					var se *statusError
					if errors.As(err, &se) && se.status == http.StatusServiceUnavailable {
						// The engine's queue was full: try again shortly,
						// as a browser or CDN would; the wait counts.
						busy.Add(1)
						time.Sleep(busyRetry)
						continue
					}
					if err != nil {
						errs[c] = err
						return
					}
					break
				}
				lats[c] = append(lats[c], time.Since(s))
			}
		}()
	}
	wg.Wait()
	r := firstRun{wall: time.Since(t0), busy: busy.Load()}
	if err := errors.Join(errs...); err != nil {
		return r, err
	}
	for c := range clients {
		r.st = r.st.merge(appendStats{ops: int64(len(lats[c])), latencies: lats[c]})
	}
	r.st.writers, r.st.elapsed = clients, r.wall
	r.cond.add(r.st, "", p.srv, m)
	return r, nil
}

// perRequest says how much CPU one request took in the server and the
// bench.
func (r firstRun) perRequest() string {
	n := float64(max(r.st.ops, 1))
	return fmt.Sprintf("CPU per request: server %.0f ms, bench %.1f ms", 1000*r.cond.srvCPU/n, 1000*r.cond.selfCPU/n)
}

// measureFirstTransforms makes every URL by mediaClients clients and
// watches the server's peak RSS.
func measureFirstTransforms(ctx context.Context, p *serverPhase, urls []derivedURL, res *results) error {
	pid := p.srv.cmd.Process.Pid
	rssBefore, _ := procStatus(pid, "VmRSS")
	hwmBefore, _ := procStatus(pid, "VmHWM")
	reset := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	images := len(urls) / len(mediaWidths)
	progressf("media: %d first transforms (%d images × widths %v, WebP) by %d clients", len(urls), images, mediaWidths, mediaClients)
	watch := watchRSS(pid, 50*time.Millisecond)
	r, err := runFirst(ctx, p, urls, mediaClients)
	rssSeries := watch.end()
	if err != nil {
		return err
	}
	peak, peakKiB := procStatus(pid, "VmHWM")
	rssAfter, _ := procStatus(pid, "VmRSS")
	res.add(figure{name: "media: first transform 4000×3000 JPEG → WebP, req/s", value: r.st.rate(), unit: "req/s", decimals: 1,
		detail: fmt.Sprintf("%d distinct derived images (%d JPEGs × widths %v) in %s by %d clients; p50 %s, max %s; %s; %s",
			r.st.ops, images, mediaWidths, r.wall.Round(time.Millisecond), mediaClients, ms2(r.st.pct(0.5)), ms2(r.st.pct(1)),
			r.perRequest(), r.cond.cores())})
	res.add(figure{name: "media: first transform p99 ms", value: ms(r.st.pct(0.99)), unit: "ms", decimals: 1, atMost: true,
		target: targetFirstP99ms, detail: fmt.Sprintf("over %d requests by %d clients, from the first ask to the image: %d answers 503 "+
			"(the engine's queue full past its wait) asked again after %s", r.st.ops, mediaClients, r.busy, busyRetry)})
	note := "reset through clear_refs just before"
	if !reset {
		note = "NOT reset (clear_refs not writable): the peak of the whole run"
	}
	res.add(figure{name: "media: server peak RSS, 16 concurrent first transforms", value: peakKiB * 1024 / 1e6, unit: "MB", decimals: 1,
		atMost: true, target: targetTransformPeakMB,
		detail: fmt.Sprintf("VmHWM of the `cms serve` process (pid %d, not the bench) %s, %s; RSS %s before, %s after; peak before %s; %s%s",
			pid, peak, note, rssBefore, rssAfter, hwmBefore, rssSeries, goMemory(ctx, p.srv.base))})
	return nil
}

// measureFirstAlone makes every URL by one client per core: no queue in
// the engine, the latency of one first transform.
func measureFirstAlone(ctx context.Context, p *serverPhase, urls []derivedURL, res *results) error {
	clients := runtime.NumCPU()
	progressf("media: %d first transforms (widths %v) by %d clients, one per core", len(urls), aloneWidths, clients)
	r, err := runFirst(ctx, p, urls, clients)
	if err != nil {
		return err
	}
	res.add(figure{name: fmt.Sprintf("media: first transform p99 ms, %d clients (one per core)", clients), value: ms(r.st.pct(0.99)),
		unit: "ms", decimals: 1, detail: fmt.Sprintf("%d requests (widths %v), %.1f req/s, p50 %s, max %s; %d answers 503; %s; %s",
			r.st.ops, aloneWidths, r.st.rate(), ms2(r.st.pct(0.5)), ms2(r.st.pct(1)), r.busy, r.perRequest(), r.cond.cores())})
	return nil
}
