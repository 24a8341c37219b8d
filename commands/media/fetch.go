package media

import (
	"context"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// fetchURL downloads b.URL and stores its bytes as an upload would
// (bounded, sniffed, scanned, kept once per content): the file is not
// external. This server's own media URL answers its file, fetching
// nothing; any other URL is fetched again each time (a new file).
func (s *Service) fetchURL(ctx context.Context, b ByURL) (media.File, bool, error) {
	if s.Fetcher == nil {
		return media.File{}, false, fault.Forbiddenf("fetching external files is not enabled on this server (CMS_MEDIA_FETCH_URLS); save the URL as a reference, or upload the file").With("field", "fetch")
	}
	if _, own := s.cfg.OwnURL(b.URL); own {
		f, ok, err := s.known(ctx, b.App, b.URL)
		if ok || err != nil {
			return f, false, err
		}
	}
	// The metadata is checked before anything is downloaded.
	if err := media.CheckFiling(b.Folder, b.Tags); err != nil {
		return media.File{}, false, err
	}
	if b.Name != "" {
		if _, err := media.CheckName(b.Name); err != nil {
			return media.File{}, false, err
		}
	}
	body, fetched, err := s.Fetcher.Fetch(ctx, b.URL)
	if err != nil {
		return media.File{}, false, err
	}
	defer body.Close()
	bytes, err := s.store(ctx, body)
	if err != nil {
		return media.File{}, false, err
	}
	name := b.Name
	if name == "" {
		name = nameOf(b.URL)
		if n, err := media.CheckName(fetched); err == nil {
			name = n
		}
	}
	f, err := s.add(ctx, b.App, media.New{Name: name, Folder: b.Folder, Tags: b.Tags, Bytes: bytes})
	return f, err == nil, err
}
