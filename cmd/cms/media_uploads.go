package main

import (
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
