package media

import (
	"context"
	"fmt"
	"io"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
)

// store streams r to storage and keeps it under its content's key once
// it is known to be an allowed, clean file; on any failure nothing is kept.
func (s *Service) store(ctx context.Context, r io.Reader) (media.Bytes, error) {
	staged, err := s.Storage.Stage(ctx, r, s.cfg.MaxBytes)
	if err != nil {
		return media.Bytes{}, err
	}
	kept := false
	defer func() {
		if !kept {
			// A failure to drop a staged object leaves it to the sweep.
			_ = s.Storage.Discard(context.WithoutCancel(ctx), staged)
		}
	}()
	probed, err := s.probe(ctx, staged)
	if err != nil {
		return media.Bytes{}, err
	}
	if s.Scanner != nil {
		if err := s.scan(ctx, staged); err != nil {
			return media.Bytes{}, err
		}
	}
	if err := s.Storage.Commit(ctx, staged, media.BlobKey(staged.SHA256)); err != nil {
		return media.Bytes{}, fmt.Errorf("keep %s: %w", staged.SHA256, err)
	}
	kept = true
	return media.Bytes{SHA256: staged.SHA256, Size: staged.Size, MIME: probed.MIME, Kind: probed.Kind,
		Width: probed.Width, Height: probed.Height, Duration: probed.Duration}, nil
}

func (s *Service) probe(ctx context.Context, staged media.Staged) (media.Probed, error) {
	rc, err := s.Storage.OpenStaged(ctx, staged)
	if err != nil {
		return media.Probed{}, err
	}
	defer rc.Close()
	return s.Prober.Probe(ctx, rc, staged.Size)
}

func (s *Service) scan(ctx context.Context, staged media.Staged) error {
	rc, err := s.Storage.OpenStaged(ctx, staged)
	if err != nil {
		return err
	}
	defer rc.Close()
	return s.Scanner.Scan(ctx, rc)
}

// Upload adds the bytes r to app's library (write right on the app).
// The caller asks Authorize(ctx, rights.Write, app) first when it can, so
// that a refusal comes before the body is read; Upload checks again.
func (s *Service) Upload(ctx context.Context, app string, n media.New, r io.Reader) (media.File, error) {
	if err := s.Authorize(ctx, rights.Write, app); err != nil {
		return media.File{}, err
	}
	// The metadata is checked before the bytes are read.
	if _, err := media.CheckName(n.Name); err != nil {
		return media.File{}, err
	}
	if err := media.CheckFiling(n.Folder, n.Tags); err != nil {
		return media.File{}, err
	}
	b, err := s.store(ctx, r)
	if err != nil {
		return media.File{}, err
	}
	n.URL, n.Bytes = "", b
	return s.add(ctx, app, n)
}

// add records a new file of app.
func (s *Service) add(ctx context.Context, app string, n media.New) (media.File, error) {
	id := s.IDs.NewID()
	evs, err := media.Upload(media.File{}, id, app, n)
	if err != nil {
		return media.File{}, err
	}
	res, err := s.Store.Append(ctx, media.Stream(id), event.NoStream, commands.WithApp(commands.Wrap(ctx, evs...), app)...)
	if err != nil {
		return media.File{}, fmt.Errorf("append %s: %w", media.Stream(id), err)
	}
	s.settle(ctx, res.Last)
	return media.File{}.Apply(evs[0]), nil
}

// Replace stores r as the new version of file id's bytes (update right on
// its app).
func (s *Service) Replace(ctx context.Context, id string, r io.Reader) (media.File, error) {
	cur, err := s.load(ctx, rights.Update, id)
	if err != nil {
		return media.File{}, err
	}
	b, err := s.store(ctx, r)
	if err != nil {
		return media.File{}, err
	}
	f, res, err := commands.Update(ctx, s.Store, media.Stream(id), cur.App, media.File{}, apply, func(f media.File) ([]any, error) {
		return f.Replace(b)
	})
	if err != nil {
		return f, err
	}
	s.settle(ctx, res.Last)
	return f, nil
}
