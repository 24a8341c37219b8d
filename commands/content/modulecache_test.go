package content_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/memstore"
	"github.com/halocms/halocms/commands"
	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
)

type prefixIDs struct {
	prefix string
	n      int
}

func (g *prefixIDs) NewID() string { g.n++; return fmt.Sprintf("%s%d", g.prefix, g.n) }

// Item writes decide against the module this process cached, but a cached
// module never decides anything on its own: two services (two processes)
// share a log, one changes the module, and the other's item writes are
// decided as if it had read the module afresh each time.
func TestCachedModulesNeverDecideAlone(t *testing.T) {
	t.Parallel()
	ctx := access.WithActor(context.Background(), access.Actor{Kind: access.User, ID: "u1"})
	es := memstore.New(eventcodec.Default())
	here := cmdcontent.NewService(es, stub{}, stub{}, stub{}, stub{}, &prefixIDs{prefix: "here"}, stub{})
	there := cmdcontent.NewService(es, stub{}, stub{}, stub{}, stub{}, &prefixIDs{prefix: "there"}, stub{})
	if _, err := es.Append(ctx, identity.AppStream("a1"), event.NoStream,
		commands.Wrap(ctx, identity.AppCreated{AppID: "a1", Name: "Shop app", ClientID: "app-a1"})...); err != nil {
		t.Fatal(err)
	}
	title := func(required bool) content.ModuleSpec {
		return content.ModuleSpec{Name: "Shop", Fields: []content.Field{
			{Name: "title", Type: "000000000000000000000001", Required: required}}}
	}
	m, err := there.CreateModule(ctx, cmdcontent.ModuleInput{App: "a1", Spec: title(false)})
	if err != nil {
		t.Fatal(err)
	}
	untitled := cmdcontent.ItemInput{Module: m.ID, Content: content.Content{Name: "untitled", Values: map[string]any{}}}
	first, err := here.CreateItem(ctx, untitled) // caches the module, title optional
	if err != nil {
		t.Fatal(err)
	}

	// The module's guard refuses the append decided on the stale module.
	if _, err := there.UpdateModule(ctx, m.ID, title(true)); err != nil {
		t.Fatal(err)
	}
	if _, err := here.CreateItem(ctx, untitled); !fault.Is(err, fault.Invalid) {
		t.Errorf("create after title became required elsewhere: err %v, want 400", err)
	}
	if _, err := here.UpdateItem(ctx, cmdcontent.ItemInput{ID: first.ID, Content: untitled.Content}); !fault.Is(err, fault.Invalid) {
		t.Errorf("update after title became required elsewhere: err %v, want 400", err)
	}

	// A refusal decided on the stale module is decided again afresh.
	if _, err := there.UpdateModule(ctx, m.ID, title(false)); err != nil {
		t.Fatal(err)
	}
	if _, err := here.CreateItem(ctx, untitled); err != nil {
		t.Errorf("create after title became optional elsewhere: %v, want it created", err)
	}
	if _, err := here.UpdateItem(ctx, cmdcontent.ItemInput{ID: first.ID,
		Content: content.Content{Name: "renamed", Values: map[string]any{}}}); err != nil {
		t.Errorf("update after title became optional elsewhere: %v, want it updated", err)
	}

	// A write that takes no guard (dates only) never trusts the cache.
	if _, err := there.DeleteModule(ctx, m.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := here.Transit(ctx, first.ID, cmdcontent.Publish, time.Time{}, nil); !fault.Is(err, fault.NotFound) {
		t.Errorf("publishing an item of a module deleted elsewhere: err %v, want 404", err)
	}
	if _, err := here.CreateItem(ctx, untitled); !fault.Is(err, fault.NotFound) {
		t.Errorf("create in a module deleted elsewhere: err %v, want 404", err)
	}
}
