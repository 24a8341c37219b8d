package content_test

import (
	"context"
	"fmt"
	"sync"
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

// hookStore runs before, once, inside the next AppendMulti, before the
// append: what it does commits between that write's decision and its
// append.
type hookStore struct {
	*memstore.Store
	mu      sync.Mutex
	before  func()
	appends chan struct{} // one per AppendMulti that failed, if anyone listens
}

func (s *hookStore) AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error) {
	s.mu.Lock()
	h := s.before
	s.before = nil
	s.mu.Unlock()
	if h != nil {
		h()
	}
	res, err := s.Store.AppendMulti(ctx, appends...)
	if err != nil {
		select {
		case s.appends <- struct{}{}:
		default:
		}
	}
	return res, err
}

// logItems is a read model that is the log itself: ModuleValues folds the
// streams of the items created so far (ids), so it is never behind. during
// runs, once, when a check reads the values.
type logItems struct {
	stub
	store  commands.EventStore
	ids    *seqIDs
	during func()
}

func (l *logItems) ModuleValues(ctx context.Context, module string, fn func(string, map[string]any) error) error {
	if h := l.during; h != nil {
		l.during = nil
		h()
	}
	for n := 1; n <= l.ids.n; n++ {
		id := fmt.Sprintf("item%d", n)
		i, _, err := commands.Load(ctx, l.store, content.ItemStream(id), content.Item{},
			func(i content.Item, ev any) content.Item { return i.Apply(ev) })
		if err != nil {
			return err
		}
		if i.Exists() && !i.Deleted && i.Module == module {
			if err := fn(id, i.Content.Values); err != nil {
				return err
			}
		}
	}
	return nil
}

// A change of a module's fields and the item writes of that module are
// ordered, whichever starts first: an item write (a create, an update, a
// batch chunk) decided against the fields before a change commits after
// it is decided again (here refused by the new fields), and an item write
// made while the change checks the items waits for the change and is then
// decided against it, so that no item ends up with values its module's
// fields refuse.
func TestModuleChangesAndItemWritesAreOrdered(t *testing.T) {
	t.Parallel()
	ctx := access.WithActor(context.Background(), access.Actor{Kind: access.User, ID: "u1"})
	es := memstore.New(eventcodec.Default())
	store := &hookStore{Store: es}
	ids := &seqIDs{}
	items := &logItems{store: es, ids: ids}
	svc := cmdcontent.NewService(store, stub{}, stub{}, stub{}, items, ids, stub{})
	if _, err := es.Append(ctx, identity.AppStream("a1"), event.NoStream,
		commands.Wrap(ctx, identity.AppCreated{AppID: "a1", Name: "Shop app", ClientID: "app-a1"})...); err != nil {
		t.Fatal(err)
	}
	text := func(name string, required bool) content.Field {
		return content.Field{Name: name, Type: "000000000000000000000001", Required: required}
	}
	m, err := svc.CreateModule(ctx, cmdcontent.ModuleInput{App: "a1", Spec: content.ModuleSpec{Name: "Shop",
		Fields: []content.Field{text("title", false)}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := func(fields ...content.Field) content.ModuleSpec {
		return content.ModuleSpec{Name: "Shop", Fields: fields}
	}
	untitled := cmdcontent.ItemInput{Module: m.ID, Content: content.Content{Name: "untitled", Values: map[string]any{}}}

	// The item is decided while title is optional; title becomes required
	// before it is appended.
	store.before = func() {
		if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", true))); err != nil {
			t.Errorf("the change, with no items: %v", err)
		}
	}
	if _, err := svc.CreateItem(ctx, untitled); !fault.Is(err, fault.Invalid) {
		t.Errorf("an item decided before the change: err %v, want it decided again and refused (400)", err)
	}

	// The same for an update of an item, and for a batch's chunk.
	if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", false))); err != nil {
		t.Fatal(err)
	}
	titled, err := svc.CreateItem(ctx, cmdcontent.ItemInput{Module: m.ID, Content: content.Content{Name: "titled",
		Values: map[string]any{"title": "A title"}}})
	if err != nil {
		t.Fatal(err)
	}
	store.before = func() {
		if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", true))); err != nil {
			t.Errorf("the change, with a titled item: %v", err)
		}
	}
	if _, err := svc.UpdateItem(ctx, cmdcontent.ItemInput{ID: titled.ID, Content: untitled.Content}); !fault.Is(err, fault.Invalid) {
		t.Errorf("an update decided before the change: err %v, want it decided again and refused (400)", err)
	}
	if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", false))); err != nil {
		t.Fatal(err)
	}
	store.before = func() {
		if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", true))); err != nil {
			t.Errorf("the change, before a batch's chunk: %v", err)
		}
	}
	ops := []cmdcontent.BatchOp{{Kind: cmdcontent.OpCreate, Item: untitled}, {Kind: cmdcontent.OpCreate, Position: 1, Item: untitled}}
	for n, r := range svc.Batch(ctx, ops) {
		if !fault.Is(r.Err, fault.Invalid) {
			t.Errorf("batch create %d decided before the change: %+v, want it decided again and refused (400)", n, r)
		}
	}

	// Publishing (dates only: no rule of the module's) goes through while
	// the module is held by a change that checks the items.
	items.during = func() {
		if _, err := svc.Transit(ctx, titled.ID, cmdcontent.Publish, time.Time{}, nil); err != nil {
			t.Errorf("publishing while the module changes: %v", err)
		}
	}
	short := text("title", true)
	short.Rules.MaxLength = new(int)
	*short.Rules.MaxLength = 100
	if _, err := svc.UpdateModule(ctx, m.ID, spec(short)); err != nil { // titled's title fits
		t.Fatal(err)
	}
	if items.during != nil {
		t.Error("the change did not check the items")
	}

	// An item write while the change (title optional, subtitle required)
	// checks the items: it waits, and is decided against the change.
	if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", false))); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DeleteItem(ctx, titled.ID, nil); err != nil { // it has no subtitle
		t.Fatal(err)
	}
	store.appends = make(chan struct{}, 1)
	created := make(chan error, 1)
	items.during = func() {
		go func() {
			_, err := svc.CreateItem(ctx, untitled)
			created <- err
		}()
		select {
		case <-store.appends: // it met the held module
		case err := <-created:
			t.Errorf("an item written while the change checks the items did not wait for it (err %v)", err)
			created <- err
		}
	}
	if _, err := svc.UpdateModule(ctx, m.ID, spec(text("title", false), text("subtitle", true))); err != nil {
		t.Errorf("the change: %v", err)
	}
	if err := <-created; !fault.Is(err, fault.Invalid) {
		t.Errorf("an item written while the change checks the items: err %v, want it decided against the change (400)", err)
	}

	// Whatever was written satisfies the module's fields as they are now.
	now, _, err := svc.LoadModule(ctx, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	err = items.ModuleValues(ctx, m.ID, func(id string, values map[string]any) error {
		if vs := content.ValidateValues(now.Fields, values); len(vs) > 0 {
			t.Errorf("item %s: %v under the module's fields", id, vs)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A relation field's target module is checked as of the module's append:
// a target deleted between the check and the append makes the create
// decide again, and be refused.
func TestRelationTargetDeletedWhileCreating(t *testing.T) {
	t.Parallel()
	ctx := access.WithActor(context.Background(), access.Actor{Kind: access.User, ID: "u1"})
	es := memstore.New(eventcodec.Default())
	store := &hookStore{Store: es}
	ids := &seqIDs{}
	svc := cmdcontent.NewService(store, stub{}, stub{}, stub{}, &logItems{store: es, ids: ids}, ids, stub{})
	if _, err := es.Append(ctx, identity.AppStream("a1"), event.NoStream,
		commands.Wrap(ctx, identity.AppCreated{AppID: "a1", Name: "Blog app", ClientID: "app-a1"})...); err != nil {
		t.Fatal(err)
	}
	authors, err := svc.CreateModule(ctx, cmdcontent.ModuleInput{App: "a1", Spec: content.ModuleSpec{Name: "Authors",
		Fields: []content.Field{{Name: "name", Type: "000000000000000000000001"}}}})
	if err != nil {
		t.Fatal(err)
	}
	store.before = func() {
		if _, err := svc.DeleteModule(ctx, authors.ID); err != nil {
			t.Errorf("deleting the target: %v", err)
		}
	}
	_, err = svc.CreateModule(ctx, cmdcontent.ModuleInput{App: "a1", Spec: content.ModuleSpec{Name: "Posts",
		Fields: []content.Field{{Name: "author", Type: "000000000000000000000011", Rules: content.FieldRules{Module: authors.ID}}}}})
	if !fault.Is(err, fault.Invalid) {
		t.Errorf("a module whose relation target was deleted before its append: err %v, want it decided again and refused (400)", err)
	}
}
