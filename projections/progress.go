package projections

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// ProgressBar renders rebuild progress on a terminal line: a bar, events
// done and total, the rate and the time left.
//
//	bar := projections.NewProgressBar(os.Stderr)
//	res, err := rt.Rebuild(ctx, name, projections.RebuildOptions{Progress: bar.Update})
//	bar.Finish()
type ProgressBar struct {
	w     io.Writer
	width int
	now   func() time.Time

	mu          sync.Mutex
	start, last time.Time
	done, total int64
	drawn       bool
}

// NewProgressBar writes to w (redrawing the line with carriage returns).
func NewProgressBar(w io.Writer) *ProgressBar {
	return &ProgressBar{w: w, width: 30, now: time.Now}
}

// Update records progress; it redraws at most ten times a second.
func (b *ProgressBar) Update(done, total int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	if b.start.IsZero() {
		b.start = now
	}
	b.done, b.total = done, total
	if b.drawn && now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last = now
	b.draw(now)
}

// Finish draws the final state and ends the line.
func (b *ProgressBar) Finish() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.start.IsZero() {
		return
	}
	b.draw(b.now())
	fmt.Fprintln(b.w)
}

func (b *ProgressBar) draw(now time.Time) {
	b.drawn = true
	fmt.Fprint(b.w, "\r"+b.line(now))
}

func (b *ProgressBar) line(now time.Time) string {
	frac := 1.0
	if b.total > 0 {
		frac = float64(b.done) / float64(b.total)
	}
	frac = min(max(frac, 0), 1)
	filled := int(frac * float64(b.width))
	bar := strings.Repeat("=", filled) + strings.Repeat(" ", b.width-filled)
	elapsed := now.Sub(b.start).Seconds()
	rate := 0.0
	if elapsed > 0 {
		rate = float64(b.done) / elapsed
	}
	eta := "--"
	if rate > 0 && b.total >= b.done {
		eta = time.Duration(float64(b.total-b.done) / rate * float64(time.Second)).Round(time.Second).String()
	}
	return fmt.Sprintf("[%s] %5.1f%%  %d/%d events  %s ev/s  ETA %s   ", bar, frac*100, b.done, b.total, humanRate(rate), eta)
}

func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.1fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}
