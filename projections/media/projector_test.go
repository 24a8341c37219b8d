package media_test

import (
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/push"
	projmedia "github.com/halocms/halocms/projections/media"
)

const (
	f1 = "aaaaaaaaaaaaaaaaaaaaaaa1"
	f2 = "aaaaaaaaaaaaaaaaaaaaaaa2"
	f3 = "aaaaaaaaaaaaaaaaaaaaaaa3"
)

func rec(data any) event.Recorded {
	t := data.(interface{ EventType() string }).EventType()
	return event.Recorded{Type: t, Data: data, RecordedAt: time.UnixMilli(1_800_000_000_000), Meta: event.Metadata{Actor: "user:u1"}}
}

func url(id string) string { return "https://cms.example/media/" + id + "/cat.jpg" }

// history: three files (one deleted); an item that names two of them,
// then one; a push with an image; an item published, deleted, restored.
func history() []event.Recorded {
	sha := strings.Repeat("ab", 32)
	pub := time.UnixMilli(1_800_000_000_500)
	return []event.Recorded{
		rec(media.Uploaded{FileID: f1, App: "a1", Name: "cat.jpg", Bytes: media.Bytes{SHA256: sha, Size: 10, MIME: "image/jpeg", Kind: media.Image, Width: 4, Height: 3}}),
		rec(media.Uploaded{FileID: f2, App: "a1", Name: "dog.png", Folder: "pets", Bytes: media.Bytes{SHA256: sha, Size: 10, MIME: "image/png", Kind: media.Image}}),
		rec(media.Uploaded{FileID: f3, App: "a1", Name: "x", URL: "https://elsewhere.example/x.pdf", Bytes: media.Bytes{Kind: media.Document}}),
		rec(media.Renamed{FileID: f1, App: "a1", Name: "tom.jpg"}),
		rec(media.Tagged{FileID: f1, App: "a1", Tags: []string{"cats", "pets"}}),
		rec(media.Described{FileID: f1, App: "a1", Alt: map[string]string{"en": "Tom"}}),
		rec(media.Moved{FileID: f1, App: "a1", Folder: "pets/cats"}),
		rec(media.Replaced{FileID: f1, App: "a1", Version: 2, Bytes: media.Bytes{SHA256: strings.Repeat("cd", 32), Size: 20, MIME: "image/png", Kind: media.Image}}),
		rec(media.Deleted{FileID: f3, App: "a1"}),
		rec(content.ItemCreated{ItemID: "i1", App: "a1", Module: "m1", Name: "Home",
			Values: map[string]any{"hero": url(f1), "gallery": []any{map[string]any{"src": url(f2)}}, "text": "no media here /media/xyz"}}),
		rec(content.ItemCreated{ItemID: "i2", App: "a1", Module: "m1", Name: "Plain", Values: map[string]any{"t": "x"}}),
		rec(content.ItemPublished{ItemID: "i2", App: "a1", Module: "m1", PublishedAt: pub}),
		rec(content.ItemEdited{ItemID: "i2", App: "a1", Module: "m1", Name: "Plain", Values: map[string]any{"img": url(f2)}}),
		rec(content.ItemEdited{ItemID: "i1", App: "a1", Module: "m1", Name: "Home!", Values: map[string]any{"hero": url(f1)}}),
		rec(content.ItemDeleted{ItemID: "i1", App: "a1", Module: "m1"}),
		rec(content.ItemRestored{ItemID: "i1", App: "a1", Module: "m1"}),
		rec(content.ItemCreated{ItemID: "i3", App: "a1", Module: "m1", Name: "Born published", Values: map[string]any{"img": url(f1)},
			PublishedAt: pub, RemovedAt: pub.Add(time.Hour)}),
		rec(content.ItemArchived{ItemID: "i3", App: "a1", Module: "m1", ArchivedAt: pub.Add(time.Minute)}),
		rec(content.ItemArchived{ItemID: "i2", App: "a1", Module: "m1", ArchivedAt: pub}),
		rec(content.ItemUnarchived{ItemID: "i2", App: "a1", Module: "m1"}),
		rec(push.Scheduled{ScheduleID: "p1", App: "a1", Name: "Promo", Notification: push.Notification{Image: &push.Image{URL: url(f2)}}}),
		rec(push.Scheduled{ScheduleID: "p2", App: "a1", Name: "Gone", Notification: push.Notification{Image: &push.Image{URL: url(f1)}}}),
		rec(push.Deleted{ScheduleID: "p2", App: "a1"}),
	}
}

// applyIn projects evs into fresh tables in batches of size n and
// returns their rows.
func applyIn(t *testing.T, evs []event.Recorded, n int) string {
	t.Helper()
	pool := pgtest.Project(t, projmedia.Projector{}, evs, n)
	return pgtest.Lines(t, pool,
		`SELECT concat_ws(' ', id, name, folder, array_to_string(tags, ','), alt->>'en', kind, mime, size, version, url, uploaded_by) FROM media_files ORDER BY id`,
		`SELECT concat_ws(' ', ref_type, ref_id, name, array_to_string(files, ','), live, published_at, archived_at) FROM media_usage ORDER BY ref_type, ref_id`)
}

func TestLibraryAndUsage(t *testing.T) {
	got := applyIn(t, history(), 1)
	want := strings.Join([]string{
		f1 + " tom.jpg pets/cats cats,pets Tom image image/png 20 2  u1",
		f2 + " dog.png pets  image image/png 10 1  u1",
		"item i1 Home! " + f1 + " t 0 0",
		"item i2 Plain " + f2 + " t 1800000000500 0",
		"item i3 Born published " + f1 + " t 1800000000500 1800000060500",
		"push p1 Promo " + f2 + " t 0 0",
	}, "\n") + "\n"
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	// The same in one batch and in batches of 4 (a rebuild's batches).
	for _, n := range []int{len(history()), 4} {
		if again := applyIn(t, history(), n); again != got {
			t.Fatalf("batches of %d:\n%s\nwant\n%s", n, again, got)
		}
	}
}

func TestFilesInFindsOnlyMediaURLs(t *testing.T) {
	got := projmedia.FilesIn(map[string]any{"a": []any{url(f2), "x /media/" + f1 + "?w=4", "/media/" + f3 + "x"}, "b": 3})
	if strings.Join(got, ",") != f1+","+f2 {
		t.Fatalf("got %v", got)
	}
}
