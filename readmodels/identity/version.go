package identity

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/identity"
)

// StreamReader reads one stream of the event log.
type StreamReader interface {
	ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error)
}

// Versions answers the server version from its stream, a handful of
// events read as they are (no projection to wait for: an administrator's
// change is read back at once).
type Versions struct{ log StreamReader }

// NewVersions returns the server versions over log.
func NewVersions(log StreamReader) *Versions { return &Versions{log: log} }

// ServerVersions is the history of server versions, newest (the current
// one) first; never empty: before any is set, the default is current.
// Any authenticated caller may read it.
func (v *Versions) ServerVersions(ctx context.Context) ([]identity.ServerVersion, error) {
	if access.From(ctx).Kind == access.Anonymous {
		return nil, access.ErrUnauthenticated
	}
	recs, err := v.log.ReadStream(ctx, identity.ServerVersionStream, 0)
	if err != nil {
		return nil, err
	}
	out := []identity.ServerVersion{}
	for _, r := range recs {
		if set, ok := r.Data.(identity.ServerVersionSet); ok {
			out = append(out, identity.ServerVersion{ID: int(r.StreamVersion), ServerVersionSet: set, CreatedAt: r.RecordedAt})
		}
	}
	if len(out) == 0 {
		out = append(out, identity.ServerVersion{ServerVersionSet: identity.DefaultServerVersion})
	}
	slices.Reverse(out)
	out[0].Current = true
	return out, nil
}
