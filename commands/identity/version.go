package identity

import (
	"context"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/identity"
)

// SetServerVersion records the server version the SDKs are told about
// (administrators only). Setting what is current already appends nothing.
func (s *Service) SetServerVersion(ctx context.Context, v identity.ServerVersionSet) error {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return err
	}
	v, err := identity.SetServerVersion(v)
	if err != nil {
		return err
	}
	_, _, err = commands.Update(ctx, s.store, identity.ServerVersionStream, "", identity.ServerVersionSet{},
		func(_ identity.ServerVersionSet, ev any) identity.ServerVersionSet {
			set, _ := ev.(identity.ServerVersionSet)
			return set
		},
		func(cur identity.ServerVersionSet) ([]any, error) {
			if cur == v {
				return nil, nil
			}
			return []any{v}, nil
		})
	return err
}
