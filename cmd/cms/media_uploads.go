package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	httpmedia "github.com/halocms/halocms/adapters/http/media"
)

// uploadMaxAge is how long a resumable upload may sit untouched before
// the sweep removes it: a client resumes within the day, or starts anew.
const uploadMaxAge = 24 * time.Hour

// openUploads makes the resumable (tus) uploads, kept under
// CMS_DATA_DIR/media-uploads until they are complete. Call after
// openMedia.
func (a *app) openUploads() error {
	u, err := httpmedia.NewUploads(httpmedia.UploadsConfig{Dir: filepath.Join(a.cfg.DataDir, "media-uploads"),
		BaseURL: a.cfg.Media.PublicURL, MaxBytes: a.media.service.MaxBytes(), Logger: a.log,
		Stall: a.cfg.Media.UploadStall})
	if err != nil {
		return fmt.Errorf("resumable uploads: %w", err)
	}
	a.media.uploads = u
	return nil
}

// sweepUploads removes abandoned resumable uploads every hour, until ctx
// ends.
func (a *app) sweepUploads(ctx context.Context) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		if n, err := a.media.uploads.Sweep(ctx, uploadMaxAge); err != nil && ctx.Err() == nil {
			a.log.Warn("sweeping abandoned uploads failed", "err", err, "removed", n)
		} else if n > 0 {
			a.log.Info("abandoned uploads removed", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
