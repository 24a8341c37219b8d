package projection

import (
	"reflect"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/event"
)

func TestAnnouncementPayload(t *testing.T) {
	at := event.Position{TxID: 812, Pos: 40001}
	ann := func(keys []string, all bool) announcement {
		return announcement{Change: Change{Projection: "loyalty", Keys: keys, All: all}, at: at}
	}
	for _, c := range []struct{ in, want announcement }{
		{ann([]string{"a", "b-1"}, false), ann([]string{"a", "b-1"}, false)},
		{ann(nil, true), ann(nil, true)},
		{ann(nil, false), ann(nil, false)}, // nothing changed: the checkpoint still counts
		// What a notification cannot carry is a change of all.
		{ann([]string{strings.Repeat("x", 4000), strings.Repeat("y", 4000)}, false), ann(nil, true)},
		{ann([]string{"a b"}, false), ann(nil, true)},
		{ann([]string{"*"}, false), ann(nil, true)},
		{ann([]string{""}, false), ann(nil, true)},
	} {
		p := c.in.payload()
		if len(p) > maxPayload+len(" *") {
			t.Errorf("%+v: payload of %d bytes", c.in, len(p))
		}
		if got, ok := parseAnnouncement(p); !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%+v: payload %.60q read as %+v (%v), want %+v", c.in, p, got, ok, c.want)
		}
	}
	for _, p := range []string{"", "loyalty", "loyalty 12", "loyalty x.1 a", "loyalty 1.y *"} {
		if got, ok := parseAnnouncement(p); ok {
			t.Errorf("%q read as %+v, want unreadable", p, got)
		}
	}
}
