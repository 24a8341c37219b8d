package guard

import (
	"context"
	"errors"
	"testing"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// somewhere allows a permission anywhere or nowhere, and counts the
// questions.
type somewhere struct {
	allowed bool
	asked   int
}

func (s *somewhere) AuthorizeAnywhere(context.Context, access.Actor, rights.Permission, ...rights.ScopeKind) error {
	s.asked++
	if s.allowed {
		return nil
	}
	return fault.Forbiddenf("read permission on an app is required")
}

func TestRefusedFirst(t *testing.T) {
	ctx := context.Background()
	bad, unknown, broken := fault.Invalidf("bad page"), fault.NotFoundf("no such item"), errors.New("database down")
	for _, tc := range []struct {
		name    string
		allowed bool
		err     error
		want    error // nil: the refusal
	}{
		{"a bad request from someone who may read somewhere", true, bad, bad},
		{"an unknown id for someone who may read somewhere", true, unknown, unknown},
		{"a bad request from someone who may read nothing", false, bad, nil},
		{"an unknown id for someone who may read nothing", false, unknown, nil},
		{"a server error", false, broken, broken},
	} {
		authz := &somewhere{allowed: tc.allowed}
		got := RefusedFirst(ctx, authz, rights.Read, tc.err)
		switch {
		case tc.want == nil && !fault.Is(got, fault.Forbidden):
			t.Errorf("%s: %v, want the refusal", tc.name, got)
		case tc.want != nil && got != tc.want:
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if tc.err == broken && authz.asked != 0 {
			t.Errorf("%s: asked for the caller's rights", tc.name)
		}
	}
	if err := RefusedFirst(ctx, &somewhere{}, rights.Read, nil); err != nil {
		t.Errorf("no error became %v", err)
	}
}

func TestMalformedComesAfterTheRefusal(t *testing.T) {
	ctx := context.Background()
	tooLarge := errors.New("request body too large") // not a fault: what the wire found wrong
	if got := Malformed(ctx, &somewhere{allowed: true}, rights.Read, tooLarge, rights.AppScope); got != tooLarge {
		t.Errorf("a caller who may read was told %v", got)
	}
	if got := Malformed(ctx, &somewhere{}, rights.Read, tooLarge, rights.AppScope); !fault.Is(got, fault.Forbidden) {
		t.Errorf("a caller who may read nothing was told %v", got)
	}
}

func TestUnknownToClients(t *testing.T) {
	refused, notFound := fault.Forbiddenf("no"), fault.NotFoundf("not found")
	app := access.WithActor(context.Background(), access.Actor{Kind: access.App, ID: "app1", App: "app1"})
	user := access.WithActor(context.Background(), access.Actor{Kind: access.User, ID: "u1"})
	if got := UnknownToClients(app, refused, notFound); got != notFound {
		t.Errorf("an app token refused was told %v", got)
	}
	if got := UnknownToClients(user, refused, notFound); got != refused {
		t.Errorf("a CMS user refused was told %v", got)
	}
}
