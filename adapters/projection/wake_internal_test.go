package projection

import (
	"testing"

	projmedia "github.com/halocms/halocms/projections/media"
	projpush "github.com/halocms/halocms/projections/push"
)

// TestWhatWakesARunner: a Selective projector's runner wakes for the types
// it handles; an Unhurried one's only for the types it names, though it
// handles more; any runner wakes for a payload naming no type.
func TestWhatWakesARunner(t *testing.T) {
	push, media := notifiesFor(projpush.Projector{}), notifiesFor(projmedia.Projector{})
	for _, c := range []struct {
		payload     string
		push, media bool
	}{
		{"push.scheduled", true, false},
		{"content.item_created", false, false},
		{"content.item_created,media.file_uploaded", false, true},
		{"media.file_deleted", false, true},
		{"", true, true},
	} {
		if got := push(c.payload); got != c.push {
			t.Errorf("push woken by %q: %v, want %v", c.payload, got, c.push)
		}
		if got := media(c.payload); got != c.media {
			t.Errorf("media woken by %q: %v, want %v", c.payload, got, c.media)
		}
	}
	if !(projmedia.Projector{}).Handles("content.item_created") || !(projmedia.Projector{}).Handles("push.scheduled") {
		t.Fatal("the media projector no longer handles the items and pushes it is not woken for")
	}
}
