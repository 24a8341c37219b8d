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
