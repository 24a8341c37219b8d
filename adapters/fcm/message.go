package fcm

import (
	"encoding/json"

	"github.com/halocms/halocms/domain/push"
)

// sendRequest is the body of messages:send.
type sendRequest struct {
	Message message `json:"message"`
}

type message struct {
	Token   string            `json:"token"`
	Data    map[string]string `json:"data,omitempty"`
	Android *androidConfig    `json:"android,omitempty"`
	APNs    *apnsConfig       `json:"apns,omitempty"`
}

type androidConfig struct {
	Priority string `json:"priority"`
}

type apnsConfig struct {
	Headers map[string]string `json:"headers"`
	Payload apnsPayload       `json:"payload"`
}

type apnsPayload struct {
	APS aps `json:"aps"`
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

// encode builds the messages:send body for m.
//
// HALO's Android SDK builds every notification itself from the data
// payload, so the message is a data message with the keys of
// push.Notification.Data (wire reference §7.2; FCM requires every value
// to be a string).
//
// Android devices get android.priority "high" unless the push is silent.
// iOS devices (the SDK registers FCM tokens there too) also get an apns
// block, since iOS shows only what aps says: alert {title, body}, sound,
// badge, category (click_action) and mutable-content 1 when there is an
// image (for the notification service extension), or, for a silent push,
// content-available 1 alone with apns-push-type background and
// apns-priority 5, as Apple requires.
func encode(m push.Message) ([]byte, error) {
	n := m.Notification
	data, err := n.Data(m.ScheduleID)
	if err != nil {
		return nil, err
	}
	msg := message{Token: m.Device.Token, Data: data}
	switch m.Device.Platform {
	case push.IOS:
		msg.APNs = apnsBlock(n)
	default:
		if !n.Silent {
			msg.Android = &androidConfig{Priority: "high"}
		}
	}
	return json.Marshal(sendRequest{Message: msg})
}

func apnsBlock(n push.Notification) *apnsConfig {
	if n.Silent {
		return &apnsConfig{
			Headers: map[string]string{"apns-push-type": "background", "apns-priority": "5"},
			Payload: apnsPayload{APS: aps{ContentAvailable: 1}},
		}
	}
	a := aps{Sound: n.Sound, Badge: n.Badge, Category: n.ClickAction}
	if n.Title != "" || n.Body != "" {
		a.Alert = &alert{Title: n.Title, Body: n.Body}
	}
	if n.Image != nil && n.Image.URL != "" {
		a.MutableContent = 1
	}
	return &apnsConfig{
		Headers: map[string]string{"apns-push-type": "alert", "apns-priority": "10"},
		Payload: apnsPayload{APS: a},
	}
}
