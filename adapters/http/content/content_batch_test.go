package content

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// laggingRead is a read model that shows a batch's items in steps: each
// ReadBackItems call answers from the next snapshot, and counts the ids asked.
type laggingRead struct {
	Queries
	snapshots []map[string]rmcontent.Item
	calls     [][]string
}

func (l *laggingRead) ReadBackItems(_ context.Context, ids []string) ([]rmcontent.Item, error) {
	l.calls = append(l.calls, slices.Sorted(slices.Values(ids)))
	snap := l.snapshots[min(len(l.calls), len(l.snapshots))-1]
	var out []rmcontent.Item
	for _, id := range ids {
		if it, ok := snap[id]; ok {
			out = append(out, it)
		}
	}
	return out, nil
}

func (l *laggingRead) ReadBack(context.Context, string) (rmcontent.Item, error) {
	panic("the batch read back one item on its own")
}

// A batch answered while the projection lags reads its items back at most
// twice, all together, and answers the rest from what the commands wrote.
func TestBatchReadBackWhileLagging(t *testing.T) {
	row := func(id string, rev int64, name string) rmcontent.Item {
		// ReadBackItems answers the values as stored.
		return rmcontent.Item{ID: id, App: "app", Module: "m", Name: name, Revision: rev, CreatedAt: 42, RawValues: []byte(`{"v": "` + name + `"}`)}
	}
	written := func(id string, rev int64, name string) cmdcontent.BatchResult {
		return cmdcontent.BatchResult{Op: cmdcontent.BatchOp{Kind: cmdcontent.OpCreate},
			Item: content.Item{ID: id, App: "app", Module: "m", Revision: rev, Content: content.Content{Name: name, Values: map[string]any{"v": name}}}}
	}
	read := &laggingRead{snapshots: []map[string]rmcontent.Item{
		{"a": row("a", 0, "A"), "c": row("c", 0, "C0")},
		{"a": row("a", 0, "A"), "b": row("b", 0, "B"), "c": row("c", 0, "C0")},
	}}
	s := &API{Deps: Deps{Queries: read}}
	results := []cmdcontent.BatchResult{
		written("a", 0, "A"), written("b", 0, "B"), written("c", 1, "C1"), written("d", 0, "D"),
		{Op: cmdcontent.BatchOp{Kind: cmdcontent.OpCreate}, Err: context.Canceled},
	}
	got := s.readBack(context.Background(), results)
	if want := [][]string{{"a", "b", "c", "d"}, {"b", "c", "d"}}; !slices.EqualFunc(read.calls, want, slices.Equal[[]string]) {
		t.Errorf("Items calls %v, want %v", read.calls, want)
	}
	for _, tc := range []struct {
		res       cmdcontent.BatchResult
		name      string
		createdAt bool // from the read model
	}{
		{results[0], "A", true},  // shown at once
		{results[1], "B", true},  // shown by the second read
		{results[2], "C1", true}, // shown at an older revision: the command's values over the row
		{results[3], "D", false}, // never shown: the command's item
	} {
		v := got.view(tc.res.Item)
		if v.ID != tc.res.Item.ID || v.Name != tc.name || v.Revision != tc.res.Item.Revision || (v.CreatedAt == 42) != tc.createdAt {
			t.Errorf("item %s: view %+v, want name %s at revision %d (created at from the read model: %v)",
				tc.res.Item.ID, v, tc.name, tc.res.Item.Revision, tc.createdAt)
		}
		// The values are those of the name's revision too: the read
		// model's as stored, or the command's.
		b, err := json.Marshal(v.Values)
		if err != nil {
			t.Fatal(err)
		}
		var vals map[string]string
		if err := json.Unmarshal(b, &vals); err != nil || len(vals) != 1 || vals["v"] != tc.name {
			t.Errorf("item %s: values %s, want {\"v\": %q}", tc.res.Item.ID, b, tc.name)
		}
	}
}
