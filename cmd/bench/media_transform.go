package main

// The transform half of the media phase: 4000×3000 JPEGs made 400-ish
// pixels wide as WebP, each for the first time, then one of them again
// and again from the server's cache.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"net/http"
	"time"

	"golang.org/x/image/webp"
)

const (
	sourceWidth, sourceHeight = 4000, 3000
	sourceQuality             = 90
	// busyRetry is how long a client waits after a 503 (the image
	// engine's queue full) before it asks again.
	busyRetry = 100 * time.Millisecond
)

// sourceJPEG encodes a 4000×3000 photo-like image (a gradient with noise,
// as adapters/imaging's benchmark makes) at q90.
func sourceJPEG() ([]byte, error) {
	img := image.NewRGBA(image.Rect(0, 0, sourceWidth, sourceHeight))
	r := rand.New(rand.NewPCG(1, 2))
	for y := range sourceHeight {
		for x := range sourceWidth {
			n := uint8(r.IntN(32))
			o := img.PixOffset(x, y)
			img.Pix[o+0] = uint8(x*255/sourceWidth) ^ n
			img.Pix[o+1] = uint8(y*255/sourceHeight) ^ n
			img.Pix[o+2] = uint8((x+y)*255/(sourceWidth+sourceHeight)) ^ n
			img.Pix[o+3] = 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: sourceQuality}); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// withComment is the JPEG src with a comment segment (COM) saying text
// after its start marker: the same picture, other bytes, so another
// content address and none of its derived images made yet.
func withComment(src []byte, text string) []byte {
	out := make([]byte, 0, len(src)+4+len(text))
	out = append(out, src[:2]...) // SOI
	out = append(out, 0xff, 0xfe, byte((len(text)+2)>>8), byte(len(text)+2))
	out = append(out, text...)
	return append(out, src[2:]...)
}

// uploadImages uploads -media-images distinct JPEGs.
func uploadImages(ctx context.Context, cfg config, p *serverPhase) ([]mediaFile, error) {
	t0 := time.Now()
	src, err := sourceJPEG()
	if err != nil {
		return nil, err
	}
	progressf("media: encoded a %d×%d JPEG q%d of %.1f MB in %s; uploading %d copies told apart by a comment",
		sourceWidth, sourceHeight, sourceQuality, float64(len(src))/1e6, time.Since(t0).Round(time.Millisecond), cfg.mediaImages)
	hc := newMediaClient(1)
	defer hc.CloseIdleConnections()
	files := make([]mediaFile, cfg.mediaImages)
	for i := range files {
		b := withComment(src, fmt.Sprintf("halocms bench image %d %d", i, t0.UnixNano()))
		f, err := postFile(ctx, hc, p, fmt.Sprintf("photo-%d.jpg", i), "image/jpeg", bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return nil, fmt.Errorf("upload image %d: %w", i, err)
		}
		if f.MIME != "image/jpeg" || f.Width != sourceWidth || f.Height != sourceHeight {
			return nil, fmt.Errorf("image %d: the server says %s %d×%d", i, f.MIME, f.Width, f.Height)
		}
		files[i] = f
	}
	return files, nil
}

// derivedURL is the URL of a WebP width pixels wide of an image.
type derivedURL struct {
	url   string
	width int
}

// derivedURLs are the URLs of every file at every width, width by width
// (so that one file's images are far apart in the list).
func derivedURLs(base string, files []mediaFile, widths []int) []derivedURL {
	var urls []derivedURL
	for _, w := range widths {
		for _, f := range files {
			urls = append(urls, derivedURL{url: fmt.Sprintf("%s/media/%s/%s/w_%d,f_webp/x.jpg", base, f.ID, f.SHA256, w), width: w})
		}
	}
	return urls
}

// getImage asks for url and wants a WebP of want pixels wide (0: any)
// with the source's aspect ratio; it reads the whole body.
func getImage(ctx context.Context, hc *http.Client, url string, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/webp" {
		return &statusError{method: http.MethodGet, path: url, status: resp.StatusCode, body: resp.Header.Get("Content-Type") + " " + snippet(body, 300)}
	}
	if want == 0 {
		return nil
	}
	c, err := webp.DecodeConfig(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("GET %s: not a WebP: %w", url, err)
	}
	if c.Width != want || c.Height != want*sourceHeight/sourceWidth {
		return fmt.Errorf("GET %s: a %d×%d WebP, want %d×%d", url, c.Width, c.Height, want, want*sourceHeight/sourceWidth)
	}
	return nil
}

// measureCached checks that url is a WebP width pixels wide, then asks
// for it, already made, again and again by mediaClients keep-alive
// clients.
func measureCached(ctx context.Context, cfg config, p *serverPhase, url string, width int, res *results) error {
	hc := newMediaClient(mediaClients)
	defer hc.CloseIdleConnections()
	if err := getImage(ctx, hc, url, width); err != nil {
		return err
	}
	writers := make([]writer, mediaClients)
	for i := range writers {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		writers[i] = func(ctx context.Context) error {
			resp, err := hc.Do(req.WithContext(ctx))
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET %s: status %d", url, resp.StatusCode)
			}
			return err
		}
	}
	progressf("media: the same derived image by %d clients for %s (+%s warm-up): %s", mediaClients, cfg.mediaDuration, mediaWarmup, url)
	m := markCPU(p.srv)
	st, err := measure(ctx, writers, mediaWarmup, cfg.mediaDuration)
	if err != nil {
		return err
	}
	var cond condition
	cond.add(st, "", p.srv, m)
	// The CPU counters include the warm-up: per request over its share.
	reqs := st.rate() * cond.wall
	perReq := func(s float64) float64 { return 1e6 * s / reqs }
	res.add(figure{name: "media: cached transform, req/s", value: st.rate(), unit: "req/s", target: targetCachedRate,
		detail: fmt.Sprintf("%d clients, p50 %s, max %s; CPU per request: server %.0f µs, bench %.0f µs; %s", mediaClients,
			ms2(st.pct(0.5)), ms2(st.pct(1)), perReq(cond.srvCPU), perReq(cond.selfCPU), cond.cores())})
	res.add(figure{name: "media: cached transform p99 ms", value: ms(st.pct(0.99)), unit: "ms", decimals: 2, atMost: true,
		target: targetCachedP99ms})
	return nil
}
