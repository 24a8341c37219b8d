package apns

import (
	"encoding/json"

	"github.com/halocms/halocms/domain/push"
)

// payload is the JSON body of a push.
type payload struct {
	APS              aps    `json:"aps"`
	ScheduleID       string `json:"scheduleId,omitempty"`
	Image            string `json:"image,omitempty"`
	Extra            string `json:"extra,omitempty"`
	URL              string `json:"url,omitempty"`
	ContentAvailable string `json:"content_available,omitempty"`
}

type aps struct {
	Alert            *alert `json:"alert,omitempty"`
	Sound            string `json:"sound,omitempty"`
	Badge            *int   `json:"badge,omitempty"`
	Category         string `json:"category,omitempty"`
	ContentAvailable int    `json:"content-available,omitempty"`
	MutableContent   int    `json:"mutable-content,omitempty"`
}

type alert struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

// encode builds the body of a push to m's device.
//
// iOS shows what aps says: alert {title, body}, sound, badge, category
// (the click action) and mutable-content 1 when there is an image (so the
// notification service extension can attach it). A silent push carries
// content-available 1 alone in aps, as Apple requires of background
// pushes. HALO's iOS SDK reads the rest from the userInfo's top level,
// under the keys of the HALO wire reference (§7.2), as FCM would deliver
// them: scheduleId, image, extra, url and content_available, encoded as
// push.Notification.Data encodes them. Empty keys are left out.
func encode(m push.Message) ([]byte, error) {
	n := m.Notification
	data, err := n.Data(m.ScheduleID)
	if err != nil {
		return nil, err
	}
	p := payload{ScheduleID: data["scheduleId"], Image: data["image"], Extra: data["extra"], URL: data["url"],
		ContentAvailable: data["content_available"]}
	if n.Silent {
		p.APS.ContentAvailable = 1
		return json.Marshal(p)
	}
	p.APS = aps{Sound: n.Sound, Badge: n.Badge, Category: n.ClickAction}
	if n.Title != "" || n.Body != "" {
		p.APS.Alert = &alert{Title: n.Title, Body: n.Body}
	}
	if p.Image != "" {
		p.APS.MutableContent = 1
	}
	return json.Marshal(p)
}
