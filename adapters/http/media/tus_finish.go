package media

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"

	"github.com/tus/tusd/v2/pkg/filestore"
	tusd "github.com/tus/tusd/v2/pkg/handler"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

// finished is tusd's completion callback, run in the request that sent
// the last byte (a PATCH, or a creation with its bytes) while it holds
// the upload's lock: the file is added to the library as its creator, and
// the answer names it (Media-File-Id, Media-File-Url). A refusal is the
// answer instead, with its HALO error body.
func (u *Uploads) finished(hook tusd.HookEvent) (tusd.HTTPResponse, error) {
	if u.api == nil {
		return tusd.HTTPResponse{}, fmt.Errorf("media uploads: not mounted")
	}
	hdr, err := u.api.importUpload(hook.Context, u, hook.Upload)
	if err != nil {
		return tusd.HTTPResponse{}, u.api.tusError(hook, err)
	}
	return tusd.HTTPResponse{Header: hdr}, nil
}

// importUpload adds a complete upload to its app's library and removes it.
// A refusal (a type not allowed, a file too large, rights withdrawn)
// removes it too; a failure of the server's keeps it, so that a PATCH at
// its end offset tries again (or the sweep removes it).
func (s *API) importUpload(ctx context.Context, u *Uploads, info tusd.FileInfo) (tusd.HTTPHeader, error) {
	if a := access.From(ctx); a.Kind != access.User || a.ID != info.MetaData[metaOwner] {
		// The routes let only the creator reach an upload.
		return nil, fault.NotFoundf("upload %s not found", info.ID)
	}
	keep := false
	defer func() {
		if !keep {
			// A failure to remove it leaves it to the sweep.
			_ = u.remove(context.WithoutCancel(ctx), info.ID)
		}
	}()
	f, err := os.Open(info.Storage[filestore.StorageKeyPath])
	if err != nil {
		keep = true
		return nil, fmt.Errorf("open upload %s: %w", info.ID, err)
	}
	defer f.Close()
	file, err := s.Commands.Upload(ctx, info.MetaData[metaApp], newFileOf(info.MetaData), f)
	if err != nil {
		keep = serverFault(err)
		return nil, err
	}
	hdr := tusd.HTTPHeader{HeaderFileID: file.ID}
	// The file is in the library whatever happens now: its URL is a bonus.
	if rm, err := s.Queries.File(ctx, file.ID); err == nil {
		hdr[HeaderFileURL] = s.Files.fileJSON(ctx, rm, false).URL
	}
	return hdr, nil
}

// serverFault tells a failure that is not the request's: the same
// request may succeed later.
func serverFault(err error) bool {
	switch fault.KindOf(err) {
	case fault.Internal, fault.Unavailable:
		return true
	}
	return false
}

// tusError is err as tusd answers it: the status and HALO error body the
// rest of the API would give.
func (s *API) tusError(hook tusd.HookEvent, err error) error {
	r, rerr := http.NewRequestWithContext(hook.Context, hook.HTTPRequest.Method, hook.HTTPRequest.URI, nil)
	if rerr != nil {
		r, _ = http.NewRequestWithContext(hook.Context, http.MethodPatch, uploadsPath, nil)
	}
	body := s.kit.ErrorBody(r, err)
	b, _ := json.Marshal(map[string]any{"error": body})
	return tusd.Error{ErrorCode: "ERR_MEDIA_REFUSED", Message: body.Message, HTTPResponse: tusd.HTTPResponse{
		StatusCode: body.Status, Body: string(b),
		Header: tusd.HTTPHeader{"Content-Type": "application/json; charset=utf-8"},
	}}
}
