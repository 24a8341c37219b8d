package main

// The media phase: the media library of `cms serve` over HTTP (issue 33).
//
//   - upload throughput: a -media-upload-mb file (default 256 MiB), a WAV
//     whose samples are a seeded pseudo-random stream (different bytes
//     each round: uploads are content-addressed, and the same bytes twice
//     would be kept once), streamed by the client as multipart to POST
//     /api/media/file with the admin's token, against `dd if=/dev/zero
//     bs=1M conv=fsync` of the same size into the server's CMS_DATA_DIR
//     (same filesystem; every file kept until the end, see ddRun), in
//     -media-rounds rounds that alternate which comes first (dd then
//     upload, upload then dd, ...): the median of the rounds' upload/dd
//     ratios (target >= 80%);
//   - first transforms: -media-images distinct 4000×3000 JPEGs (q90, a
//     gradient with noise; one encoded image told apart by a comment
//     segment, so each has its own content address) uploaded, then every
//     one of them made 320, 400, 480, 512 and 640 pixels wide as WebP
//     (`/media/{id}/{sha}/w_400,f_webp/x.jpg`) by 16 clients, each request
//     the first of its image: req/s and p99 (target < 300 ms), and the
//     server process's peak RSS (VmHWM of `cms serve`, reset through
//     /proc/<pid>/clear_refs just before) while they run (target < 300 MB);
//     then the same at 720, 768 and 800 pixels by one client per core
//     (no queue: what one first transform takes);
//   - cached: one of those URLs again and again by 16 keep-alive clients
//     for -media-duration after a 1s warm-up: req/s (target >= 10,000) and
//     p99 (target < 10 ms), with the CPU one request took in the server and
//     in the bench.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// Targets of the media issue.
const (
	targetUploadShare     = 0.80
	targetFirstP99ms      = 300
	targetCachedRate      = 10_000
	targetCachedP99ms     = 10
	targetTransformPeakMB = 300
	mediaClients          = 16
	mediaWarmup           = time.Second
)

// mediaWidths are the widths each source image is made at by 16
// clients, aloneWidths by one client per core: each (image, width) is a
// distinct derived image, all in the allowed sizes.
var (
	mediaWidths = []int{320, 400, 480, 512, 640}
	aloneWidths = []int{720, 768, 800}
)

func (c *config) validateMedia() error {
	if c.mediaUploadMB < 1 || c.mediaUploadMB > 4000 {
		return fmt.Errorf("-media-upload-mb %d: want 1..4000", c.mediaUploadMB)
	}
	if c.mediaRounds < 1 || c.mediaImages < 1 || c.mediaDuration <= 0 {
		return errors.New("-media-rounds, -media-images and -media-duration must be positive")
	}
	return nil
}

// mediaPhase starts a server whose upload limit fits the big file, then
// measures the uploads against dd, the first transforms and the cached
// ones.
func mediaPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	p, err := openServerPhase(ctx, cfg, serverURL, 2)
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := p.start(ctx, "media", "cms-bench-media-", fmt.Sprintf("CMS_MEDIA_MAX_MB=%d", cfg.mediaUploadMB+16)); err != nil {
		return err
	}
	if err := p.signIn(ctx, mediaClients, "media"); err != nil {
		return err
	}
	if err := measureUploads(ctx, cfg, p, res); err != nil {
		return fmt.Errorf("uploads: %w", err)
	}
	files, err := uploadImages(ctx, cfg, p)
	if err != nil {
		return fmt.Errorf("images: %w", err)
	}
	if err := measureFirstTransforms(ctx, p, derivedURLs(p.srv.base, files, mediaWidths), res); err != nil {
		return fmt.Errorf("first transforms: %w", err)
	}
	if err := measureFirstAlone(ctx, p, derivedURLs(p.srv.base, files, aloneWidths), res); err != nil {
		return fmt.Errorf("first transforms, one client per core: %w", err)
	}
	cached := derivedURLs(p.srv.base, files[:1], []int{400})[0]
	if err := measureCached(ctx, cfg, p, cached.url, cached.width, res); err != nil {
		return fmt.Errorf("cached transforms: %w", err)
	}
	return nil
}

// mediaFile is what the API answers about an uploaded file.
type mediaFile struct {
	ID     string `json:"id"`
	MIME   string `json:"mime"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// newMediaClient is a keep-alive client for n concurrent clients that
// never compresses (the bodies are images and audio).
func newMediaClient(n int) *http.Client {
	return &http.Client{Timeout: 5 * time.Minute, Transport: &http.Transport{
		Proxy: nil, MaxIdleConns: n + 4, MaxIdleConnsPerHost: n + 4, IdleConnTimeout: 90 * time.Second,
		DisableCompression: true,
	}}
}
