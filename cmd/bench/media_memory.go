package main

// Where the server's memory goes during the first transforms: its RSS
// sampled over the run, and the share of it the Go runtime holds (its
// /metrics), the rest being C's (libvips and the C allocator).

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rssWatch samples a process's VmRSS (KiB) until end.
type rssWatch struct {
	stop    chan struct{}
	done    chan struct{}
	samples []float64
}

func watchRSS(pid int, every time.Duration) *rssWatch {
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if _, kib := procStatus(pid, "VmRSS"); kib > 0 {
				w.samples = append(w.samples, kib)
			}
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// end stops the sampling and describes the RSS at each quarter of the
// run, in MiB.
func (w *rssWatch) end() string {
	close(w.stop)
	<-w.done
	n := len(w.samples)
	if n == 0 {
		return "RSS not sampled"
	}
	q := make([]string, 0, 5)
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		q = append(q, fmt.Sprintf("%.0f", w.samples[int(f*float64(n-1))]/1024))
	}
	return fmt.Sprintf("RSS at the start, each quarter and the end of the run: %s MiB (%d samples)", strings.Join(q, ", "), n)
}

// goMemory reads the Go runtime's share of the server's memory from its
// /metrics: what it has from the OS, and its heap in use.
func goMemory(ctx context.Context, base string) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	want := map[string]float64{"go_memstats_sys_bytes": -1, "go_memstats_heap_inuse_bytes": -1, "go_memstats_heap_sys_bytes": -1}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), " ")
		if _, known := want[name]; ok && known {
			want[name], _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if want["go_memstats_sys_bytes"] < 0 {
		return ""
	}
	return fmt.Sprintf("; after it, the Go runtime holds %.0f MiB from the OS (heap %.0f MiB, %.0f MiB in use): the rest of the RSS is C's (libvips, malloc)",
		want["go_memstats_sys_bytes"]/(1<<20), want["go_memstats_heap_sys_bytes"]/(1<<20), want["go_memstats_heap_inuse_bytes"]/(1<<20))
}
