package push

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
)

var t0 = time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)

func fold(s Schedule, evs []any) Schedule {
	for _, e := range evs {
		s = s.Apply(e)
	}
	return s
}

func spec() Spec {
	return Spec{Name: " Sale ", Target: Target{Aliases: []string{"a1", " a2", "a1"}},
		Notification: Notification{Title: "Hi", Body: "There", Image: &Image{URL: "https://x.test/i.png"}}}
}

func mustKind(t *testing.T, err error, kind fault.Kind, what string) {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("%s: err = %v, want %s", what, err, kind)
	}
}

func scheduled(t *testing.T, sp Spec) Schedule {
	t.Helper()
	evs, err := NewSchedule(Schedule{}, "s1", "app1", sp, t0)
	if err != nil {
		t.Fatalf("NewSchedule: %v", err)
	}
	s := fold(Schedule{}, evs)
	if !s.Exists() || s.Status != StatusScheduled {
		t.Fatalf("after scheduling: %+v", s)
	}
	return s
}

func TestNewScheduleNormalises(t *testing.T) {
	s := scheduled(t, spec())
	if s.Name != "Sale" || strings.Join(s.Target.Aliases, ",") != "a1,a2" {
		t.Fatalf("name %q aliases %v", s.Name, s.Target.Aliases)
	}
	if !s.SendOn.Equal(t0) {
		t.Fatalf("no sendOn: %v, want now %v", s.SendOn, t0)
	}
	if s.Notification.Image.Layout != "default" {
		t.Fatalf("layout %q, want default", s.Notification.Image.Layout)
	}
	if _, err := NewSchedule(s, "s1", "app1", spec(), t0); !fault.Is(err, fault.Conflict) {
		t.Fatalf("scheduling an existing id: %v", err)
	}
	sp := spec()
	sp.Target = Target{Tags: []TagFilter{{Name: "lang", Value: "de"}}}
	if s := scheduled(t, sp); s.Target.TagMode != Partial {
		t.Fatalf("tag mode %q, want partial by default", s.Target.TagMode)
	}
}

func TestValidation(t *testing.T) {
	big := map[string]any{"blob": strings.Repeat("x", MaxDataBytes)}
	cases := []struct {
		name  string
		edit  func(*Spec)
		field string
	}{
		{"empty name", func(s *Spec) { s.Name = "  " }, "name"},
		{"no target", func(s *Spec) { s.Target = Target{} }, "target"},
		{"two kinds", func(s *Spec) { s.Target.Identified = []string{"i1"} }, "target"},
		{"empty alias", func(s *Spec) { s.Target.Aliases = []string{"a", " "} }, "aliases"},
		{"too many", func(s *Spec) { s.Target.Aliases = make([]string, MaxRecipients+1) }, "aliases"},
		{"tag without id or name", func(s *Spec) { s.Target = Target{Tags: []TagFilter{{Value: "x"}}} }, "filterTags"},
		{"bad tag mode", func(s *Spec) { s.Target = Target{Tags: []TagFilter{{ID: "x"}}, TagMode: "some"} }, "tagMode"},
		{"nothing to show", func(s *Spec) { s.Notification = Notification{} }, "notification"},
		{"bad color", func(s *Spec) { s.Notification.Color = "red" }, "color"},
		{"negative badge", func(s *Spec) { b := -1; s.Notification.Badge = &b }, "badge"},
		{"image not http", func(s *Spec) { s.Notification.Image = &Image{URL: "ftp://x/y"} }, "image"},
		{"bad layout", func(s *Spec) { s.Notification.Image = &Image{URL: "https://x/y", Layout: "diagonal"} }, "image"},
		{"oversized", func(s *Spec) { s.Notification.Extra = big }, "notification"},
		{"past", func(s *Spec) { s.SendOn = t0.Add(-2 * PastTolerance) }, "sendOn"},
	}
	for _, c := range cases {
		sp := spec()
		c.edit(&sp)
		_, err := NewSchedule(Schedule{}, "s1", "app1", sp, t0)
		var fe *fault.Error
		if !errors.As(err, &fe) || fe.Kind != fault.Invalid || fe.Extra["field"] != c.field {
			t.Errorf("%s: err = %v (%+v), want invalid on field %s", c.name, err, fe, c.field)
		}
	}
	// A silent push needs no text; a send time just in the past is now.
	sp := spec()
	sp.Notification = Notification{Silent: true, Extra: map[string]any{"k": "v"}}
	sp.SendOn = t0.Add(-PastTolerance / 2)
	if _, err := NewSchedule(Schedule{}, "s1", "app1", sp, t0); err != nil {
		t.Fatalf("silent push, send time within the tolerance: %v", err)
	}
	if _, err := NewSchedule(Schedule{}, "s1", "", spec(), t0); !fault.Is(err, fault.Invalid) {
		t.Fatalf("no app: %v", err)
	}
	if _, err := NewSchedule(Schedule{}, "s1", strings.Repeat("a", MaxIDLength+1), spec(), t0); !fault.Is(err, fault.Invalid) {
		t.Fatalf("an app id over %d characters: %v", MaxIDLength, err)
	}
}

func TestDataPayload(t *testing.T) {
	badge := 3
	n := Notification{Title: "T", Body: "B", Badge: &badge, Silent: true, URL: "app://x",
		Image: &Image{URL: "https://i/x.png", Layout: "expanded"}, Extra: map[string]any{"k": 1}}
	d, err := n.Data("s1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"scheduleId": "s1", "title": "T", "body": "B", "badge": "3", "content_available": "1",
		"url": "app://x", "image": `{"url":"https://i/x.png","layout":"expanded"}`, "extra": `{"k":1}`}
	if len(d) != len(want) {
		t.Fatalf("data %v, want %v", d, want)
	}
	for k, v := range want {
		if d[k] != v {
			t.Errorf("data[%s] = %q, want %q", k, d[k], v)
		}
	}
	size, err := n.DataSize()
	if err != nil || size < 100 || size > 300 {
		t.Fatalf("DataSize = %d, %v", size, err)
	}
}

func TestEditCancelDelete(t *testing.T) {
	s := scheduled(t, spec())
	sp := spec()
	sp.Name = "Renamed"
	sp.SendOn = t0.Add(time.Hour)
	evs, err := s.Edit(sp, t0)
	if err != nil {
		t.Fatal(err)
	}
	s = fold(s, evs)
	if s.Name != "Renamed" || !s.SendOn.Equal(t0.Add(time.Hour)) {
		t.Fatalf("after edit: %+v", s)
	}
	if s.Due(t0) || !s.Due(t0.Add(time.Hour)) {
		t.Fatal("Due disagrees with the send time")
	}
	if _, err := s.StartDispatch("d1", t0); !fault.Is(err, fault.Conflict) {
		t.Fatalf("dispatch before the send time: %v", err)
	}
	evs, err = s.Cancel()
	if err != nil {
		t.Fatal(err)
	}
	c := fold(s, evs)
	if c.Status != StatusCancelled || c.Due(t0.Add(2*time.Hour)) {
		t.Fatalf("after cancel: %+v", c)
	}
	if evs, err := c.Cancel(); err != nil || len(evs) != 0 {
		t.Fatalf("cancel twice: %v %v", evs, err)
	}
	_, err = c.Edit(sp, t0)
	mustKind(t, err, fault.Conflict, "edit a cancelled push")
	evs, err = c.Delete()
	if err != nil {
		t.Fatal(err)
	}
	d := fold(c, evs)
	if d.Exists() {
		t.Fatal("deleted schedule exists")
	}
	_, err = d.Delete()
	mustKind(t, err, fault.NotFound, "delete twice")
	_, err = d.Edit(sp, t0)
	mustKind(t, err, fault.NotFound, "edit deleted")
	_, err = Schedule{ID: "x"}.Cancel()
	mustKind(t, err, fault.NotFound, "cancel unknown")
}

func dl(user, token string, o Outcome) Delivery {
	return Delivery{AppUserID: user, Token: token, Platform: Android, Outcome: o, Attempts: 1}
}

func TestDispatchLifecycle(t *testing.T) {
	s := scheduled(t, spec())
	evs, err := s.StartDispatch("d1", t0)
	if err != nil {
		t.Fatal(err)
	}
	s = fold(s, evs)
	if s.Status != StatusDispatching || s.Dispatcher != "d1" || evs[0].(DispatchStarted).Resumed {
		t.Fatalf("after start: %+v %+v", s, evs)
	}
	_, err = s.Edit(spec(), t0)
	mustKind(t, err, fault.Conflict, "edit while dispatching")
	_, err = s.Cancel()
	mustKind(t, err, fault.Conflict, "cancel while dispatching")
	_, err = s.Delete()
	mustKind(t, err, fault.Conflict, "delete while dispatching")

	// A resumed dispatch is marked so.
	evs, err = s.StartDispatch("d2", t0)
	if err != nil || !evs[0].(DispatchStarted).Resumed {
		t.Fatalf("resume: %v %v", evs, err)
	}
	s = fold(s, evs)

	batch := []Delivery{dl("u1", "t1", Delivered), dl("u1", "t2", InvalidToken), dl("u2", "t1", Retry), dl("u3", "t0", Failed)}
	evs, err = s.Record(batch)
	if err != nil {
		t.Fatal(err)
	}
	s = fold(s, evs)
	if s.Sent != 1 || s.Invalid != 1 || s.Failed != 1 || len(s.Pending) != 1 || s.Last != (DeviceKey{"u3", "t0"}) {
		t.Fatalf("after a batch: %+v", s)
	}
	_, err = s.Finish()
	mustKind(t, err, fault.Conflict, "finish with a pending device")
	// Out of order or recorded twice: refused.
	for _, bad := range [][]Delivery{
		{dl("u1", "t1", Delivered)},
		{dl("u4", "t1", Delivered), dl("u4", "t0", Delivered)},
		{dl("u5", "t1", Delivered), dl("u5", "t1", Delivered)},
	} {
		if _, err := s.Record(bad); err == nil {
			t.Errorf("Record(%v) accepted", bad)
		}
	}
	// The pending device is recorded again, with later ones.
	evs, err = s.Record([]Delivery{dl("u2", "t1", Delivered), dl("u4", "t9", Delivered)})
	if err != nil {
		t.Fatal(err)
	}
	s = fold(s, evs)
	if s.Sent != 3 || len(s.Pending) != 0 || s.Last != (DeviceKey{"u4", "t9"}) {
		t.Fatalf("after the pending one: %+v", s)
	}
	evs, err = s.Finish()
	if err != nil {
		t.Fatal(err)
	}
	s = fold(s, evs)
	if d := evs[0].(Dispatched); s.Status != StatusDispatched || d.Sent != 3 || d.Failed != 1 || d.Invalid != 1 {
		t.Fatalf("after finish: %+v %+v", s, d)
	}
	if _, err := s.StartDispatch("d3", t0.Add(time.Hour)); !fault.Is(err, fault.Conflict) {
		t.Fatalf("dispatch a dispatched push: %v", err)
	}
	if _, err := s.Record([]Delivery{dl("u9", "t", Delivered)}); !fault.Is(err, fault.Conflict) {
		t.Fatalf("record after the dispatch: %v", err)
	}
	if evs, err := s.Delete(); err != nil || len(evs) != 1 {
		t.Fatalf("delete a sent push: %v %v", evs, err)
	}
}

func TestOutcomeText(t *testing.T) {
	b, err := json.Marshal(dl("u", "t", InvalidToken))
	if err != nil || !strings.Contains(string(b), `"Outcome":"invalid_token"`) {
		t.Fatalf("encoded %s %v", b, err)
	}
	var d Delivery
	if err := json.Unmarshal(b, &d); err != nil || d.Outcome != InvalidToken {
		t.Fatalf("decoded %+v %v", d, err)
	}
	if err := json.Unmarshal([]byte(`{"Outcome":"maybe"}`), &d); err == nil {
		t.Fatal("unknown outcome decoded")
	}
	if _, err := json.Marshal(Delivery{}); err == nil {
		t.Fatal("zero outcome encoded")
	}
}

func TestActivity(t *testing.T) {
	evs, err := NewActivity("s1", "app1", " al ", "OPEN", "Android")
	if err != nil {
		t.Fatal(err)
	}
	if a := evs[0].(ActivityRecorded); a.Alias != "al" || a.Action != Open || a.Platform != Android {
		t.Fatalf("%+v", a)
	}
	for _, c := range [][3]string{{"", "open", "ios"}, {"al", "click", "ios"}, {"al", "open", "windows"}} {
		if _, err := NewActivity("s1", "app1", c[0], c[1], c[2]); !fault.Is(err, fault.Invalid) {
			t.Errorf("NewActivity(%v): %v", c, err)
		}
	}
}
