package access_test

import (
	"context"
	"testing"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

func TestCMSUserRefusesAllButCMSUsers(t *testing.T) {
	refusal := fault.Forbiddenf("not for apps")
	for kind, want := range map[access.Kind]fault.Kind{
		access.Anonymous: fault.Unauthenticated, access.App: fault.Forbidden, access.Identified: fault.Forbidden,
	} {
		a, err := access.CMSUser(access.WithActor(context.Background(), access.Actor{Kind: kind, ID: "x"}), refusal)
		if !fault.Is(err, want) || a.Kind != kind {
			t.Errorf("kind %d: %v, want %v", kind, err, want)
		}
	}
	for _, kind := range []access.Kind{access.User, access.System} {
		if a, err := access.CMSUser(access.WithActor(context.Background(), access.Actor{Kind: kind, ID: "u"}), refusal); err != nil || a.ID != "u" {
			t.Errorf("kind %d refused: %v", kind, err)
		}
	}
}
