// Package push is the push-notification context: what a schedule sends,
// to whom, and what a provider answered for each device. Pure.
package push

import "time"

// Platform of a device.
type Platform string

const (
	Android Platform = "android"
	IOS     Platform = "ios"
)

// Image of a rich push (server 2.4.0). Layout is one of default, top, left,
// right, bottom, background, expanded.
type Image struct {
	URL    string
	Layout string
}

// Notification is what a schedule sends to every device of its audience.
type Notification struct {
	Title       string
	Body        string
	Icon        string
	Sound       string
	Color       string // #rrggbb
	ClickAction string
	Badge       *int
	Image       *Image
	URL         string         // deeplink
	Extra       map[string]any // custom data, sent as a JSON string under "extra"
	Silent      bool           // content_available = 1
}

// Device is one push token of one app user.
type Device struct {
	AppUserID string
	Alias     string
	Platform  Platform
	Token     string
}

// Message is one notification to one device.
type Message struct {
	ScheduleID   string
	Device       Device
	Notification Notification
}

// Outcome of one delivery attempt.
type Outcome int

const (
	// Delivered: the provider accepted the message.
	Delivered Outcome = iota + 1
	// InvalidToken: the provider says the token is unknown or expired;
	// it is removed from the device and never retried.
	InvalidToken
	// Retry: a transient failure (throttling, 5xx, network); try again
	// after RetryAfter (zero: the caller's backoff decides).
	Retry
	// Failed: a permanent failure other than the token (bad payload,
	// bad credentials); not retried.
	Failed
)

func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case InvalidToken:
		return "invalid_token"
	case Retry:
		return "retry"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// Result is a provider's answer for one message.
type Result struct {
	Outcome    Outcome
	RetryAfter time.Duration
	Reason     string // provider's error code or message, for the record
}

// TagMode says how a segment's tags combine.
type TagMode string

const (
	// Partial: an app user matches when it has any of the tags.
	Partial TagMode = "partial"
	// Total: an app user matches when it has all of the tags.
	Total TagMode = "total"
)

// TagFilter is one tag of a segment: by id alone (market tags carry fixed
// ids), or by name, with or without a value (no value: any value).
type TagFilter struct {
	ID    string
	Name  string
	Value string
}

// Target says whom a schedule reaches: app users by alias, identified
// users (every app user linked to them), or a segment of tags.
type Target struct {
	Aliases    []string
	Identified []string
	Tags       []TagFilter
	TagMode    TagMode
}

// DeviceKey orders the devices of an audience, so that a dispatch can
// resume after the last device it recorded.
type DeviceKey struct {
	AppUserID string
	Token     string
}

// Key returns the device's position in its audience's order.
func (d Device) Key() DeviceKey { return DeviceKey{AppUserID: d.AppUserID, Token: d.Token} }

// Less orders keys by app user id, then token.
func (k DeviceKey) Less(o DeviceKey) bool {
	if k.AppUserID != o.AppUserID {
		return k.AppUserID < o.AppUserID
	}
	return k.Token < o.Token
}
