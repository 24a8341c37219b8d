package push

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Stream is a schedule's own stream: what it sends, to whom, when, and
// what each device's provider answered.
func Stream(id string) string { return "push-" + id }

// ActivityStream holds the activity devices report for a schedule, apart
// from the schedule's stream so that thousands of devices do not contend
// for its version.
func ActivityStream(id string) string { return "pushactivity-" + id }

// Limits of a schedule.
const (
	MaxNameLength = 200
	MaxRecipients = 10_000 // aliases or identified users of one schedule
	MaxTags       = 100
	MaxTextLength = 200 // an alias, id, tag name or value
	MaxURLLength  = 2048
	// MaxIDLength bounds an app id (ids are 24 characters; the read
	// models index them).
	MaxIDLength = 64
	// PastTolerance: a send time at most this far in the past means "now"
	// (clocks differ); older is refused.
	PastTolerance = time.Minute
)

// Status of a schedule.
type Status string

const (
	StatusScheduled   Status = "scheduled"
	StatusDispatching Status = "dispatching"
	StatusDispatched  Status = "dispatched"
	StatusCancelled   Status = "cancelled"
	StatusDeleted     Status = "deleted"
)

// Layouts of a rich push image.
var Layouts = []string{"default", "top", "left", "right", "bottom", "background", "expanded"}

// Spec is what a push is scheduled or edited with.
type Spec struct {
	Name         string
	Target       Target
	Notification Notification
	SendOn       time.Time // zero: now
}

// Delivery is what happened to the push on one device.
type Delivery struct {
	AppUserID string
	Alias     string
	Platform  Platform
	Token     string
	Outcome   Outcome // Retry: pending, not sent yet
	Reason    string
	Attempts  int
}

// Key is the device's place in the audience's order.
func (d Delivery) Key() DeviceKey { return DeviceKey{AppUserID: d.AppUserID, Token: d.Token} }

// Device is the device the delivery went to.
func (d Delivery) Device() Device {
	return Device{AppUserID: d.AppUserID, Alias: d.Alias, Platform: d.Platform, Token: d.Token}
}

// Schedule is a push notification schedule, rebuilt from its events.
type Schedule struct {
	ID           string
	App          string
	Name         string
	Target       Target
	Notification Notification
	SendOn       time.Time
	Status       Status
	Dispatcher   string
	// Last is the last device of the audience recorded so far: a dispatch
	// resumes after it.
	Last DeviceKey
	// Pending are deliveries recorded as not sent yet (an interrupted
	// dispatch), to send first when the dispatch resumes.
	Pending []Delivery
	// Devices with a final outcome, by outcome.
	Sent, Failed, Invalid int
	exists                bool
}

// Exists reports whether the schedule was created and not deleted.
func (s Schedule) Exists() bool { return s.exists && s.Status != StatusDeleted }

// Apply folds one event into the state.
func (s Schedule) Apply(ev any) Schedule {
	switch e := ev.(type) {
	case Scheduled:
		s = Schedule{ID: e.ScheduleID, App: e.App, Name: e.Name, Target: e.Target, Notification: e.Notification,
			SendOn: e.SendOn, Status: StatusScheduled, exists: true}
	case Edited:
		s.Name, s.Target, s.Notification, s.SendOn = e.Name, e.Target, e.Notification, e.SendOn
	case Cancelled:
		s.Status = StatusCancelled
	case Deleted:
		s.Status = StatusDeleted
	case DispatchStarted:
		s.Status, s.Dispatcher = StatusDispatching, e.Dispatcher
	case DeliveriesRecorded:
		pending := slices.Clone(s.Pending)
		for _, d := range e.Deliveries {
			k := d.Key()
			pending = slices.DeleteFunc(pending, func(p Delivery) bool { return p.Key() == k })
			if s.Last.Less(k) {
				s.Last = k
			}
			switch d.Outcome {
			case Delivered:
				s.Sent++
			case InvalidToken:
				s.Invalid++
			case Failed:
				s.Failed++
			case Retry:
				pending = append(pending, d)
			}
		}
		s.Pending = pending
	case Dispatched:
		s.Status = StatusDispatched
		s.Sent, s.Failed, s.Invalid = e.Sent, e.Failed, e.Invalid
	}
	return s
}

func (s Schedule) notFound() error {
	return fault.NotFoundf("push schedule %s not found", s.ID).With("id", s.ID)
}

// NewSchedule decides the scheduling of a push of an app.
func NewSchedule(existing Schedule, id, app string, spec Spec, now time.Time) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("push schedule %s already exists", id)
	}
	if err := ValidateApp(app); err != nil {
		return nil, err
	}
	spec, err := ValidateSpec(spec, now)
	if err != nil {
		return nil, err
	}
	return []any{Scheduled{ScheduleID: id, App: app, Name: spec.Name, Target: spec.Target,
		Notification: spec.Notification, SendOn: spec.SendOn}}, nil
}

// ValidateApp refuses an empty or over-long app id (400). Whether the
// app exists is the command's to check.
func ValidateApp(app string) error {
	if strings.TrimSpace(app) == "" {
		return invalid("appId", "appId is required")
	}
	if len(app) > MaxIDLength {
		return invalid("appId", "appId is at most %d characters", MaxIDLength)
	}
	return nil
}

// Edit decides a change of a scheduled push; once its dispatch started,
// or once cancelled, it cannot change.
func (s Schedule) Edit(spec Spec, now time.Time) ([]any, error) {
	if !s.Exists() {
		return nil, s.notFound()
	}
	if s.Status != StatusScheduled {
		return nil, fault.Conflictf("the push is %s: only a scheduled push can be edited", s.Status).With("status", string(s.Status))
	}
	spec, err := ValidateSpec(spec, now)
	if err != nil {
		return nil, err
	}
	return []any{Edited{ScheduleID: s.ID, App: s.App, Name: spec.Name, Target: spec.Target,
		Notification: spec.Notification, SendOn: spec.SendOn}}, nil
}

// Cancel decides that a scheduled push will not be sent. Cancelling a
// cancelled push changes nothing.
func (s Schedule) Cancel() ([]any, error) {
	switch {
	case !s.Exists():
		return nil, s.notFound()
	case s.Status == StatusCancelled:
		return nil, nil
	case s.Status != StatusScheduled:
		return nil, fault.Conflictf("the push is %s: only a scheduled push can be cancelled", s.Status).With("status", string(s.Status))
	}
	return []any{Cancelled{ScheduleID: s.ID, App: s.App}}, nil
}

// Delete decides the deletion of a push; one being sent cannot be deleted
// until its dispatch ends.
func (s Schedule) Delete() ([]any, error) {
	if !s.Exists() {
		return nil, s.notFound()
	}
	if s.Status == StatusDispatching {
		return nil, fault.Conflictf("the push is being sent: delete it once it is sent").With("status", string(s.Status))
	}
	return []any{Deleted{ScheduleID: s.ID, App: s.App}}, nil
}

// Due reports whether a dispatcher should work on the schedule at now:
// scheduled for now or earlier, or being sent (a dispatch to resume).
func (s Schedule) Due(now time.Time) bool {
	return s.Status == StatusScheduled && !s.SendOn.After(now) || s.Status == StatusDispatching
}

// StartDispatch decides that dispatcher starts (or resumes) sending the
// push.
func (s Schedule) StartDispatch(dispatcher string, now time.Time) ([]any, error) {
	if !s.Exists() {
		return nil, s.notFound()
	}
	if !s.Due(now) {
		return nil, fault.Conflictf("the push is %s and not due at %s", s.Status, now.UTC().Format(time.RFC3339))
	}
	return []any{DispatchStarted{ScheduleID: s.ID, App: s.App, Dispatcher: dispatcher, Resumed: s.Status == StatusDispatching}}, nil
}

// Record decides the recording of a batch of deliveries: each device
// either pending from earlier, or after every device recorded so far, in
// the audience's order.
func (s Schedule) Record(ds []Delivery) ([]any, error) {
	if s.Status != StatusDispatching {
		return nil, fault.Conflictf("the push is %s, not being sent", s.Status)
	}
	if len(ds) == 0 {
		return nil, nil
	}
	last := s.Last
	seen := map[DeviceKey]bool{}
	for _, d := range ds {
		k := d.Key()
		if seen[k] {
			return nil, fault.Invalidf("device %s/%s recorded twice in one batch", k.AppUserID, k.Token)
		}
		seen[k] = true
		if d.Outcome < Delivered || d.Outcome > Failed {
			return nil, fault.Invalidf("device %s/%s: invalid outcome", k.AppUserID, k.Token)
		}
		if slices.ContainsFunc(s.Pending, func(p Delivery) bool { return p.Key() == k }) {
			continue
		}
		if !last.Less(k) {
			return nil, fault.Invalidf("device %s/%s is out of order or recorded already", k.AppUserID, k.Token)
		}
		last = k
	}
	return []any{DeliveriesRecorded{ScheduleID: s.ID, App: s.App, Deliveries: ds}}, nil
}

// Finish decides the end of the dispatch: every device has a final
// outcome.
func (s Schedule) Finish() ([]any, error) {
	if s.Status != StatusDispatching {
		return nil, fault.Conflictf("the push is %s, not being sent", s.Status)
	}
	if len(s.Pending) > 0 {
		return nil, fault.Conflictf("%d devices are still pending", len(s.Pending))
	}
	return []any{Dispatched{ScheduleID: s.ID, App: s.App, Sent: s.Sent, Failed: s.Failed, Invalid: s.Invalid}}, nil
}

var colorRe = regexp.MustCompile(`^#[0-9a-fA-F]{6}$`)

func invalid(field, format string, args ...any) *fault.Error {
	return fault.Invalidf(format, args...).With("field", field)
}

// ValidateSpec checks a push and returns it normalised: name and target
// entries trimmed, duplicates dropped, the tag mode and image layout
// defaulted, the send time set (now when zero) and cut to milliseconds.
func ValidateSpec(s Spec, now time.Time) (Spec, error) {
	s.Name = strings.TrimSpace(s.Name)
	if s.Name == "" || utf8.RuneCountInString(s.Name) > MaxNameLength {
		return s, invalid("name", "name must be 1 to %d characters", MaxNameLength)
	}
	t, err := validateTarget(s.Target)
	if err != nil {
		return s, err
	}
	s.Target = t
	if s.Notification, err = validateNotification(s.Notification); err != nil {
		return s, err
	}
	now = now.Truncate(time.Millisecond)
	switch {
	case s.SendOn.IsZero():
		s.SendOn = now
	case s.SendOn.Before(now.Add(-PastTolerance)):
		return s, invalid("sendOn", "sendOn is in the past (%s); leave it out to send now",
			s.SendOn.UTC().Format(time.RFC3339)).With("sendOn", s.SendOn.UnixMilli())
	}
	s.SendOn = s.SendOn.Truncate(time.Millisecond)
	return s, nil
}

func validateTarget(t Target) (Target, error) {
	kinds := 0
	for _, n := range []int{len(t.Aliases), len(t.Identified), len(t.Tags)} {
		if n > 0 {
			kinds++
		}
	}
	if kinds == 0 {
		return t, invalid("target", "the push has no target: give aliases, identified users or filterTags")
	}
	if kinds > 1 {
		return t, invalid("target", "give one kind of target: aliases, identified users or filterTags")
	}
	var err error
	if t.Aliases, err = cleanList("aliases", t.Aliases); err != nil {
		return t, err
	}
	if t.Identified, err = cleanList("identified", t.Identified); err != nil {
		return t, err
	}
	if len(t.Tags) > MaxTags {
		return t, invalid("filterTags", "at most %d filterTags", MaxTags)
	}
	tags := make([]TagFilter, 0, len(t.Tags))
	for i, f := range t.Tags {
		f = TagFilter{ID: strings.TrimSpace(f.ID), Name: strings.TrimSpace(f.Name), Value: f.Value}
		if f.ID == "" && f.Name == "" {
			return t, invalid("filterTags", "filterTags[%d] needs an id or a name", i).With("position", i)
		}
		if len(f.ID) > MaxTextLength || len(f.Name) > MaxTextLength || len(f.Value) > MaxTextLength {
			return t, invalid("filterTags", "filterTags[%d]: id, name and value are at most %d characters", i, MaxTextLength).With("position", i)
		}
		if !slices.Contains(tags, f) {
			tags = append(tags, f)
		}
	}
	if len(t.Tags) == 0 {
		tags = nil
	}
	t.Tags = tags
	switch t.TagMode {
	case "":
		if len(t.Tags) > 0 {
			t.TagMode = Partial
		}
	case Partial, Total:
	default:
		return t, invalid("tagMode", "tagMode must be partial (any tag) or total (every tag)")
	}
	return t, nil
}

// cleanList trims entries, refuses empty and long ones and drops
// duplicates, keeping the first occurrence.
func cleanList(field string, in []string) ([]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	if len(in) > MaxRecipients {
		return nil, invalid(field, "at most %d %s per push", MaxRecipients, field)
	}
	out := make([]string, 0, len(in))
	seen := make(map[string]bool, len(in))
	for i, v := range in {
		v = strings.TrimSpace(v)
		if v == "" || len(v) > MaxTextLength {
			return nil, invalid(field, "%s[%d] must be 1 to %d characters", field, i, MaxTextLength).With("position", i)
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out, nil
}

func validateNotification(n Notification) (Notification, error) {
	n.Title, n.Body = strings.TrimSpace(n.Title), strings.TrimSpace(n.Body)
	if n.Title == "" && n.Body == "" && !n.Silent {
		return n, invalid("notification", "a notification needs a title or a body, unless it is silent")
	}
	if n.Color != "" && !colorRe.MatchString(n.Color) {
		return n, invalid("color", "color must be #rrggbb")
	}
	if n.Badge != nil && *n.Badge < 0 {
		return n, invalid("badge", "badge must be 0 or more")
	}
	if len(n.URL) > MaxURLLength {
		return n, invalid("url", "url is at most %d characters", MaxURLLength)
	}
	if n.Image != nil {
		img := *n.Image
		img.URL = strings.TrimSpace(img.URL)
		u, err := url.Parse(img.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(img.URL) > MaxURLLength {
			return n, invalid("image", "image.url must be an http or https URL of at most %d characters", MaxURLLength)
		}
		if img.Layout == "" {
			img.Layout = "default"
		}
		if !slices.Contains(Layouts, img.Layout) {
			return n, invalid("image", "image.layout must be one of %s", strings.Join(Layouts, ", "))
		}
		n.Image = &img
	}
	size, err := n.DataSize()
	if err != nil {
		return n, invalid("extra", "extra cannot be encoded: %v", err)
	}
	if size > MaxDataBytes {
		return n, invalid("notification", "the push payload is %d bytes; the limit is %d", size, MaxDataBytes).
			With("size", size).With("limit", MaxDataBytes)
	}
	return n, nil
}

// Action is what a device reports about a push it got.
type Action string

const (
	Receipt Action = "receipt"
	Open    Action = "open"
	Dismiss Action = "dismiss"
)

// NewActivity decides the recording of a device's report on a push of
// app. The alias is the app user's (the SDKs send it as "device").
func NewActivity(scheduleID, app, alias, action, platform string) ([]any, error) {
	alias = strings.TrimSpace(alias)
	if alias == "" || len(alias) > MaxTextLength {
		return nil, invalid("device", "device (the app user's alias) must be 1 to %d characters", MaxTextLength)
	}
	a := Action(strings.ToLower(strings.TrimSpace(action)))
	if a != Receipt && a != Open && a != Dismiss {
		return nil, invalid("action", "action must be receipt, open or dismiss")
	}
	p := Platform(strings.ToLower(strings.TrimSpace(platform)))
	if p != "" && p != Android && p != IOS {
		return nil, invalid("platform", "platform must be android or ios")
	}
	return []any{ActivityRecorded{ScheduleID: scheduleID, App: app, Alias: alias, Action: a, Platform: p}}, nil
}
