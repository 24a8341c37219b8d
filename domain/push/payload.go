package push

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// MaxDataBytes is FCM's limit on a data message's payload: the push is
// refused when its data (Data, JSON-encoded) is larger.
const MaxDataBytes = 4096

// Data is the data payload of the notification as HALO's SDKs read it
// (wire reference §7.2): every value a string, empty ones left out; image
// is a string of JSON {"url", "layout"} (layout "default" when unset),
// extra a string of JSON; a silent push carries content_available "1". The
// Android SDK builds the whole notification from these keys, so every
// provider sends them. The error is extra's, when it is not JSON.
func (n Notification) Data(scheduleID string) (map[string]string, error) {
	d := map[string]string{}
	set := func(k, v string) {
		if v != "" {
			d[k] = v
		}
	}
	set("scheduleId", scheduleID)
	set("title", n.Title)
	set("body", n.Body)
	set("icon", n.Icon)
	set("sound", n.Sound)
	set("color", n.Color)
	set("click_action", n.ClickAction)
	set("url", n.URL)
	if n.Badge != nil {
		d["badge"] = strconv.Itoa(*n.Badge)
	}
	if n.Image != nil && n.Image.URL != "" {
		layout := n.Image.Layout
		if layout == "" {
			layout = "default"
		}
		b, _ := json.Marshal(struct {
			URL    string `json:"url"`
			Layout string `json:"layout"`
		}{n.Image.URL, layout})
		d["image"] = string(b)
	}
	if n.Silent {
		d["content_available"] = "1"
	}
	if len(n.Extra) > 0 {
		b, err := json.Marshal(n.Extra)
		if err != nil {
			return nil, fmt.Errorf("extra is not JSON: %w", err)
		}
		d["extra"] = string(b)
	}
	return d, nil
}

// DataSize is the size in bytes of the JSON-encoded data payload of the
// notification, with a schedule id of the usual 24 characters.
func (n Notification) DataSize() (int, error) {
	d, err := n.Data("000000000000000000000000")
	if err != nil {
		return 0, err
	}
	b, err := json.Marshal(d)
	return len(b), err
}
