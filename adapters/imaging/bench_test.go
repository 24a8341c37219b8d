package imaging

// The measurement behind the choice of libvips: a 4000×3000 JPEG (q90,
// a gradient with noise) made 400 pixels wide, by this engine and by
// pure Go (image/jpeg decoding, golang.org/x/image/draw scaling,
// image/jpeg encoding; pure Go has no WebP or AVIF encoder, so it is
// compared on JPEG output). Run each alone to read its peak memory:
//
//	go test -run='^$' -bench=Resize/govips-jpeg -benchmem ./adapters/imaging/
//
// Metrics: ns/op; B/op and allocs/op are Go heap only (libvips allocates
// in C, outside the Go heap); vips-peak-MB is libvips's tracked
// high-water mark; rss-peak-MB is the process's peak resident memory
// (VmHWM, reset once the source is made), which counts both and grows
// monotonically across the benchmarks of one run.

import (
	"bytes"
	"context"
	"image"
	"image/jpeg"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/davidbyttow/govips/v2/vips"
	"golang.org/x/image/draw"

	"github.com/halocms/halocms/domain/media"
)

var (
	benchOnce sync.Once
	benchJPEG []byte
)

func benchSource(b *testing.B) []byte {
	benchOnce.Do(func() { benchJPEG = encodeJPEG(b, photo(4000, 3000), 90) })
	return benchJPEG
}

// peakRSS is the process's peak resident set size in MB (Linux).
func peakRSS() float64 { return procStatusMB("VmHWM:") }

// procStatusMB is a line of /proc/self/status in MB.
func procStatusMB(key string) float64 {
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			return float64(kb) / 1024
		}
	}
	return 0
}

// resetPeakRSS frees what the Go heap no longer uses and resets VmHWM,
// so that the peak read after a benchmark is that benchmark's (the
// source's generation allocates far more than a resize).
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	baseRSS = procStatusMB("VmRSS:")
}

// baseRSS is the resident memory before the benchmarks (the test binary,
// the source JPEG, libvips started): rss-peak-MB minus it is what the
// resizes added.
var baseRSS float64

func BenchmarkResize(b *testing.B) {
	src := benchSource(b)
	newEngine(b, Options{}) // start libvips before measuring the base
	resetPeakRSS()
	b.Run("govips-jpeg", func(b *testing.B) { benchEngine(b, src, media.JPEG) })
	b.Run("govips-webp", func(b *testing.B) { benchEngine(b, src, media.WebP) })
	b.Run("govips-avif", func(b *testing.B) { benchEngine(b, src, media.AVIF) })
	b.Run("purego-catmullrom-jpeg", func(b *testing.B) { benchPureGo(b, src, draw.CatmullRom) })
	b.Run("purego-bilinear-jpeg", func(b *testing.B) { benchPureGo(b, src, draw.ApproxBiLinear) })
}

func benchEngine(b *testing.B, src []byte, f media.Format) {
	e := newEngine(b, Options{Concurrency: 1})
	t := media.Transform{Width: 400, Format: f}
	b.ReportAllocs()
	for b.Loop() {
		out, _, err := e.Transform(context.Background(), bytes.NewReader(src), t)
		if err != nil || len(out) == 0 {
			b.Fatal(err)
		}
	}
	var st vips.MemoryStats
	vips.ReadVipsMemStats(&st)
	b.ReportMetric(float64(st.MemHigh)/(1<<20), "vips-peak-MB")
	b.ReportMetric(peakRSS(), "rss-peak-MB")
	b.ReportMetric(baseRSS, "rss-base-MB")
}

func benchPureGo(b *testing.B, src []byte, k draw.Interpolator) {
	b.ReportAllocs()
	for b.Loop() {
		img, err := jpeg.Decode(bytes.NewReader(src))
		if err != nil {
			b.Fatal(err)
		}
		sb := img.Bounds()
		dst := image.NewRGBA(image.Rect(0, 0, 400, sb.Dy()*400/sb.Dx()))
		k.Scale(dst, dst.Bounds(), img, sb, draw.Src, nil)
		var out bytes.Buffer
		if err := jpeg.Encode(&out, dst, &jpeg.Options{Quality: media.DefaultQuality}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(peakRSS(), "rss-peak-MB")
	b.ReportMetric(baseRSS, "rss-base-MB")
}
