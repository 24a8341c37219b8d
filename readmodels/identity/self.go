package identity

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

// Self returns the profile of the CMS user who asks.
func (s *Store) Self(ctx context.Context) (User, error) {
	a := access.From(ctx)
	if a.Kind != access.User {
		return User{}, fault.Forbiddenf("only CMS users have a profile")
	}
	return s.User(ctx, a.ID)
}
