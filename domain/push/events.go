package push

import "time"

// Events of the push context. Type names are stable: never rename them.
// Who caused an event (a CMS user, the dispatcher, an app) is in its
// metadata.

// Scheduled: a push was scheduled for an app, to be sent at SendOn.
type Scheduled struct {
	ScheduleID   string
	App          string
	Name         string
	Target       Target
	Notification Notification
	SendOn       time.Time
}

// Edited: the push's name, target, notification or time changed before
// its dispatch started; the event holds the new content in full.
type Edited struct {
	ScheduleID   string
	App          string
	Name         string
	Target       Target
	Notification Notification
	SendOn       time.Time
}

// Cancelled: the push will not be sent.
type Cancelled struct{ ScheduleID, App string }

// Deleted: the push is gone from the CMS lists (a scheduled one is never
// sent).
type Deleted struct{ ScheduleID, App string }

// DispatchStarted: a dispatcher claimed the push and starts (or, Resumed,
// continues) sending it.
type DispatchStarted struct {
	ScheduleID string
	App        string
	Dispatcher string
	Resumed    bool
}

// DeliveriesRecorded: what the provider answered for a batch of devices,
// in the audience's device order. A delivery with the Retry outcome is
// pending: not sent yet (the dispatch was interrupted); it is sent when
// the dispatch resumes and recorded again with its final outcome.
type DeliveriesRecorded struct {
	ScheduleID string
	App        string
	Deliveries []Delivery
}

// Dispatched: every device of the audience has a final outcome.
type Dispatched struct {
	ScheduleID string
	App        string
	Sent       int
	Failed     int
	Invalid    int
}

// ActivityRecorded: a device reported what happened to the push (stream
// ActivityStream, apart from the schedule's own).
type ActivityRecorded struct {
	ScheduleID string
	App        string
	Alias      string
	Action     Action
	Platform   Platform
}

func (Scheduled) EventType() string          { return "push.scheduled" }
func (Edited) EventType() string             { return "push.edited" }
func (Cancelled) EventType() string          { return "push.cancelled" }
func (Deleted) EventType() string            { return "push.deleted" }
func (DispatchStarted) EventType() string    { return "push.dispatch_started" }
func (DeliveriesRecorded) EventType() string { return "push.deliveries_recorded" }
func (Dispatched) EventType() string         { return "push.dispatched" }
func (ActivityRecorded) EventType() string   { return "push.activity_recorded" }

// Events lists a zero value of every event type of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{
		Scheduled{}, Edited{}, Cancelled{}, Deleted{}, DispatchStarted{}, DeliveriesRecorded{}, Dispatched{},
		ActivityRecorded{},
	}
}
