package push

import (
	"bytes"
	"encoding/json"
	"maps"
	"strconv"
	"strings"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/push"
	rmpush "github.com/halocms/halocms/readmodels/push"
)

// Push bodies. One shape serves POST /api/push/schedule (HALO §7.1),
// /toAliases, /toIdentified, the Android demo's /api/authentication/schedule
// and PUT /api/push/schedule/{id}: the target is `aliases`, `identified`
// or `filterTags` (+ `tagMode`), and the notification is either our
// `notification` object or HALO's `payload` {notification, data}. The
// keys of the response shape (id, status, statistics, dates) are accepted
// and ignored, so that a schedule read can be sent back.

// flexString is a string sent as a JSON string or number (HALO app ids
// are integers).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = flexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fault.Invalidf("must be a string or a number")
	}
	*f = flexString(n.String())
	return nil
}

// pushInt is an integer sent as a number, a string of digits or a
// boolean (content_available: 1, "1" or true).
type pushInt struct {
	v   int
	set bool
}

func (f *pushInt) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	switch s {
	case "null", "":
		*f = pushInt{}
		return nil
	case "true":
		*f = pushInt{v: 1, set: true}
		return nil
	case "false":
		*f = pushInt{v: 0, set: true}
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fault.Invalidf("must be a whole number")
	}
	*f = pushInt{v: n, set: true}
	return nil
}

func (f *pushInt) ptr() *int {
	if f == nil || !f.set {
		return nil
	}
	v := f.v
	return &v
}

// imageJSON is a push image: an object {url, layout}, or a string holding
// that object as JSON (how the data payload carries it).
type imageJSON struct {
	URL    string `json:"url"`
	Layout string `json:"layout"`
}

func (i *imageJSON) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		b = []byte(s)
	}
	type plain imageJSON
	var p plain
	if err := httpapi.DecodeFrom(bytes.NewReader(b), &p); err != nil {
		return fault.Invalidf("image must be an object {url, layout} or a string holding one")
	}
	*i = imageJSON(p)
	return nil
}

// extraJSON is custom data: an object, or a string holding one.
type extraJSON map[string]any

func (e *extraJSON) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		b = []byte(s)
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return fault.Invalidf("extra must be an object or a string holding one")
	}
	*e = m
	return nil
}

type tagFilterJSON struct {
	ID      string `json:"id,omitempty"`
	Name    string `json:"name,omitempty"`
	Value   string `json:"value,omitempty"`
	TagType any    `json:"tagType,omitempty"` // accepted, ignored
}

// notificationJSON is the notification of a schedule, in and out.
type notificationJSON struct {
	Title       string     `json:"title"`
	Body        string     `json:"body"`
	Image       *imageJSON `json:"image"`
	URL         string     `json:"url"`
	Extra       extraJSON  `json:"extra"`
	Silent      bool       `json:"silent"`
	Sound       string     `json:"sound"`
	Badge       *pushInt   `json:"badge"`
	Icon        string     `json:"icon"`
	Color       string     `json:"color"`
	ClickAction string     `json:"clickAction"`
}

// payloadJSON is HALO's §7.1 payload: FCM-style notification and data.
type payloadJSON struct {
	Notification *struct {
		Title        string     `json:"title"`
		Body         string     `json:"body"`
		Icon         string     `json:"icon"`
		Sound        string     `json:"sound"`
		Badge        *pushInt   `json:"badge"`
		Color        string     `json:"color"`
		ClickAction  string     `json:"click_action"`
		Image        *imageJSON `json:"image"`
		Tag          string     `json:"tag"`
		BodyLocKey   string     `json:"body_loc_key"`
		BodyLocArgs  any        `json:"body_loc_args"`
		TitleLocKey  string     `json:"title_loc_key"`
		TitleLocArgs any        `json:"title-loc-args"`
	} `json:"notification"`
	Data *struct {
		URL              string     `json:"url"`
		ContentAvailable *pushInt   `json:"content_available"`
		Extra            extraJSON  `json:"extra"`
		Custom           extraJSON  `json:"custom"` // the Android demo's name for extra
		Image            *imageJSON `json:"image"`
	} `json:"data"`
}

// pushBody is a schedule as clients send it.
type pushBody struct {
	AppID        flexString        `json:"appId"`
	Name         *string           `json:"name"`
	SendOn       *json.Number      `json:"sendOn"`
	Aliases      []string          `json:"aliases"`
	Identified   []string          `json:"identified"`
	FilterTags   []tagFilterJSON   `json:"filterTags"`
	TagMode      string            `json:"tagMode"`
	Notification *notificationJSON `json:"notification"`
	Payload      *payloadJSON      `json:"payload"`

	// Keys of the response shape, ignored.
	ID                any `json:"id"`
	Status            any `json:"status"`
	CreatedAt         any `json:"createdAt"`
	UpdatedAt         any `json:"updatedAt"`
	DispatchStartedAt any `json:"dispatchStartedAt"`
	DispatchedAt      any `json:"dispatchedAt"`
	Statistics        any `json:"statistics"`
}

// targetKind restricts the target a path takes.
type targetKind int

const (
	anyTarget targetKind = iota
	aliasesTarget
	identifiedTarget
)

// spec turns the body into a push spec; kind restricts the target.
func (b pushBody) spec(kind targetKind) (push.Spec, error) {
	var sp push.Spec
	if b.Name == nil {
		return sp, fault.Invalidf("name is required").With("field", "name")
	}
	sp.Name = *b.Name
	switch {
	case kind == aliasesTarget && (len(b.Identified) > 0 || len(b.FilterTags) > 0):
		return sp, fault.Invalidf("toAliases takes aliases only").With("field", "aliases")
	case kind == aliasesTarget && len(b.Aliases) == 0:
		return sp, fault.Invalidf("aliases must list at least one app user alias").With("field", "aliases")
	case kind == identifiedTarget && (len(b.Aliases) > 0 || len(b.FilterTags) > 0):
		return sp, fault.Invalidf("toIdentified takes identified users only").With("field", "identified")
	case kind == identifiedTarget && len(b.Identified) == 0:
		return sp, fault.Invalidf("identified must list at least one identified user id").With("field", "identified")
	}
	sp.Target = push.Target{Aliases: b.Aliases, Identified: b.Identified, TagMode: push.TagMode(b.TagMode)}
	for _, f := range b.FilterTags {
		sp.Target.Tags = append(sp.Target.Tags, push.TagFilter{ID: f.ID, Name: f.Name, Value: f.Value})
	}
	if b.SendOn != nil {
		ms, err := b.SendOn.Float64()
		if err != nil || ms < 0 || ms > 1e15 {
			return sp, fault.Invalidf("sendOn must be epoch milliseconds").With("field", "sendOn")
		}
		if ms > 0 {
			sp.SendOn = time.UnixMilli(int64(ms))
		}
	}
	var err error
	switch {
	case b.Notification != nil && b.Payload != nil:
		return sp, fault.Invalidf("give notification or payload, not both").With("field", "notification")
	case b.Notification != nil:
		sp.Notification = b.Notification.domain()
	case b.Payload != nil:
		sp.Notification, err = b.Payload.domain()
	default:
		return sp, fault.Invalidf("notification (or HALO's payload) is required").With("field", "notification")
	}
	return sp, err
}

func (i *imageJSON) domain() *push.Image {
	if i == nil {
		return nil
	}
	return &push.Image{URL: i.URL, Layout: i.Layout}
}

func (n notificationJSON) domain() push.Notification {
	return push.Notification{Title: n.Title, Body: n.Body, Icon: n.Icon, Sound: n.Sound, Color: n.Color,
		ClickAction: n.ClickAction, Badge: n.Badge.ptr(), Image: n.Image.domain(), URL: n.URL, Extra: n.Extra,
		Silent: n.Silent}
}

func (p payloadJSON) domain() (push.Notification, error) {
	var n push.Notification
	if pn := p.Notification; pn != nil {
		if pn.Tag != "" || pn.BodyLocKey != "" || pn.BodyLocArgs != nil || pn.TitleLocKey != "" || pn.TitleLocArgs != nil {
			return n, fault.Invalidf("payload.notification: tag and the localization keys are not supported").With("field", "payload.notification")
		}
		n = push.Notification{Title: pn.Title, Body: pn.Body, Icon: pn.Icon, Sound: pn.Sound, Color: pn.Color,
			ClickAction: pn.ClickAction, Badge: pn.Badge.ptr(), Image: pn.Image.domain()}
	}
	if d := p.Data; d != nil {
		n.URL = d.URL
		if c := d.ContentAvailable.ptr(); c != nil && *c == 1 {
			n.Silent = true
		}
		if d.Image != nil {
			n.Image = d.Image.domain()
		}
		if len(d.Extra) > 0 || len(d.Custom) > 0 {
			n.Extra = map[string]any{}
			maps.Copy(n.Extra, d.Custom)
			maps.Copy(n.Extra, d.Extra)
		}
	}
	return n, nil
}

// scheduleJSON is a schedule as the API returns it.
type scheduleJSON struct {
	ID                string           `json:"id"`
	AppID             string           `json:"appId"`
	Name              string           `json:"name"`
	Status            string           `json:"status"`
	SendOn            int64            `json:"sendOn"`
	Aliases           []string         `json:"aliases"`
	Identified        []string         `json:"identified"`
	FilterTags        []tagFilterJSON  `json:"filterTags"`
	TagMode           string           `json:"tagMode"`
	Notification      notificationJSON `json:"notification"`
	CreatedAt         *int64           `json:"createdAt"`
	UpdatedAt         *int64           `json:"updatedAt"`
	DispatchStartedAt *int64           `json:"dispatchStartedAt"`
	DispatchedAt      *int64           `json:"dispatchedAt"`
	Statistics        statisticsJSON   `json:"statistics"`
}

type statisticsJSON struct {
	Sent      int `json:"sent"`
	Failed    int `json:"failed"`
	Invalid   int `json:"invalid"`
	Received  int `json:"received"`
	Opened    int `json:"opened"`
	Dismissed int `json:"dismissed"`
}

func notificationOut(n push.Notification) notificationJSON {
	out := notificationJSON{Title: n.Title, Body: n.Body, URL: n.URL, Extra: n.Extra, Silent: n.Silent, Sound: n.Sound,
		Icon: n.Icon, Color: n.Color, ClickAction: n.ClickAction}
	if out.Extra == nil {
		out.Extra = extraJSON{}
	}
	if n.Badge != nil {
		out.Badge = &pushInt{v: *n.Badge, set: true}
	}
	if n.Image != nil {
		out.Image = &imageJSON{URL: n.Image.URL, Layout: n.Image.Layout}
	}
	return out
}

// MarshalJSON writes the badge as a number.
func (f pushInt) MarshalJSON() ([]byte, error) { return []byte(strconv.Itoa(f.v)), nil }

func scheduleBase(id, app, name string, status push.Status, sendOn int64, t push.Target, n push.Notification) scheduleJSON {
	out := scheduleJSON{ID: id, AppID: app, Name: name, Status: string(status), SendOn: sendOn,
		Aliases: t.Aliases, Identified: t.Identified, FilterTags: []tagFilterJSON{}, TagMode: string(t.TagMode),
		Notification: notificationOut(n)}
	if out.Aliases == nil {
		out.Aliases = []string{}
	}
	if out.Identified == nil {
		out.Identified = []string{}
	}
	for _, f := range t.Tags {
		out.FilterTags = append(out.FilterTags, tagFilterJSON{ID: f.ID, Name: f.Name, Value: f.Value})
	}
	return out
}

func scheduleFromView(s rmpush.Schedule) scheduleJSON {
	out := scheduleBase(s.ID, s.App, s.Name, s.Status, s.SendOn, s.Target, s.Notification)
	created := s.CreatedAt
	out.CreatedAt, out.UpdatedAt, out.DispatchStartedAt, out.DispatchedAt = &created, s.UpdatedAt, s.DispatchStartedAt, s.DispatchedAt
	st := s.Stats
	out.Statistics = statisticsJSON{Sent: st.Sent, Failed: st.Failed, Invalid: st.Invalid, Received: st.Received,
		Opened: st.Opened, Dismissed: st.Dismissed}
	return out
}

func scheduleFromDomain(s push.Schedule) scheduleJSON {
	out := scheduleBase(s.ID, s.App, s.Name, s.Status, s.SendOn.UnixMilli(), s.Target, s.Notification)
	out.Statistics = statisticsJSON{Sent: s.Sent, Failed: s.Failed, Invalid: s.Invalid}
	return out
}

type schedulePageJSON struct {
	Pagination httpapi.PaginationJSON `json:"pagination"`
	Items      []scheduleJSON         `json:"items"`
}

// activityJSON is a device's push activity report, in and out (the
// response echoes it, as in push-activity-response-*.android.json).
type activityJSON struct {
	Device   string `json:"device"`
	Schedule string `json:"schedule"`
	Action   string `json:"action"`
	Platform string `json:"platform,omitempty"`
}
