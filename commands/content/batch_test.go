package content_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

// chunkStore holds one module and fails every append to several streams
// (a batch chunk) with chunkErr; appends to one stream go through, their
// guards (appends without events) unchecked.
type chunkStore struct {
	streams  map[string][]event.Recorded
	chunkErr error
	singles  int // one-stream appends written
}

func (s *chunkStore) ReadStream(_ context.Context, stream string, _ int64) ([]event.Recorded, error) {
	return s.streams[stream], nil
}

func (s *chunkStore) Append(ctx context.Context, stream string, expected int64, evs ...event.Event) (event.AppendResult, error) {
	return s.AppendMulti(ctx, event.StreamAppend{Stream: stream, ExpectedVersion: expected, Events: evs})
}

func (s *chunkStore) AppendMulti(_ context.Context, appends ...event.StreamAppend) (event.AppendResult, error) {
	appends = slices.DeleteFunc(appends, func(a event.StreamAppend) bool { return len(a.Events) == 0 })
	if len(appends) > 1 {
		return event.AppendResult{}, s.chunkErr
	}
	a := appends[0]
	for _, e := range a.Events {
		s.streams[a.Stream] = append(s.streams[a.Stream], event.Recorded{StreamID: a.Stream, StreamVersion: int64(len(s.streams[a.Stream]) + 1), Data: e.Data})
	}
	s.singles++
	return event.AppendResult{Version: int64(len(s.streams[a.Stream]))}, nil
}

func (s *chunkStore) AppendHeld(ctx context.Context, _ string, _ int64,
	decide func(context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error) {
	appends, err := decide(ctx)
	if err != nil {
		return event.AppendResult{}, err
	}
	return s.AppendMulti(ctx, appends...)
}

// stub allows everything, names everyone, and has nothing to wait for.
type stub struct{}

func (stub) Authorize(context.Context, access.Actor, rights.Permission, rights.Resource) error {
	return nil
}
func (stub) DisplayName(context.Context, access.Actor) (string, error) { return "tester", nil }
func (stub) Last(context.Context) (event.Position, error)              { return event.Position{}, nil }
func (stub) WaitFor(context.Context, event.Position, ...string) bool   { return true }
func (stub) LiveItemModules(context.Context, string, []string) (map[string]string, error) {
	return map[string]string{}, nil
}
func (stub) ModuleValues(context.Context, string, func(string, map[string]any) error) error {
	return nil
}
func (stub) ModuleItemIDs(context.Context, string) ([]string, error) { return nil, nil }
func (stub) ModuleTags(context.Context, string, func(string, []content.Tag) error) error {
	return nil
}

type seqIDs struct{ n int }

func (g *seqIDs) NewID() string { g.n++; return fmt.Sprintf("item%d", g.n) }

// A chunk of creates runs one by one again only when its append surely
// wrote nothing (a conflict, data the store cannot hold); any other
// failure (a commit whose outcome is unknown) fails its items, which
// creating again might duplicate under new ids.
func TestBatchChunkFallsBackOnlyWhenNothingWasWritten(t *testing.T) {
	lost := errors.New("conn closed")
	for _, tc := range []struct {
		name     string
		chunkErr error
		fallback bool
	}{
		{"a version conflict", fmt.Errorf("append: %w", &event.ConflictError{StreamID: "instance-x"}), true},
		{"data the store cannot hold", fmt.Errorf("append: %w", event.ErrDataRejected), true},
		{"an unknown outcome", lost, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &chunkStore{chunkErr: tc.chunkErr, streams: map[string][]event.Recorded{
				content.ModuleStream("m1"): {{StreamVersion: 1, Data: content.ModuleCreated{ModuleID: "m1", App: "app1", Name: "M"}}},
			}}
			svc := cmdcontent.NewService(store, stub{}, stub{}, stub{}, stub{}, &seqIDs{}, stub{})
			ops := []cmdcontent.BatchOp{
				{Kind: cmdcontent.OpCreate, Item: cmdcontent.ItemInput{Module: "m1", Content: content.Content{Name: "a"}}},
				{Kind: cmdcontent.OpCreate, Position: 1, Item: cmdcontent.ItemInput{Module: "m1", Content: content.Content{Name: "b"}}},
			}
			ctx := access.WithActor(context.Background(), access.Actor{Kind: access.User, ID: "u1"})
			results := svc.Batch(ctx, ops)
			if tc.fallback {
				if store.singles != 2 {
					t.Errorf("%d items created one by one, want 2", store.singles)
				}
				for n, r := range results {
					if r.Err != nil || r.Item.ID == "" {
						t.Errorf("create %d: %+v, want the item created", n, r)
					}
				}
				return
			}
			if store.singles != 0 {
				t.Errorf("%d items created one by one, want none", store.singles)
			}
			for n, r := range results {
				if !errors.Is(r.Err, lost) {
					t.Errorf("create %d: err %v, want the chunk's error", n, r.Err)
				}
			}
		})
	}
}
