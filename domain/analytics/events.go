package analytics

import (
	"fmt"
	"hash/fnv"
	"time"
)

// Recorded: an app reported an event (analytics.event_recorded). Device is
// who reported it, when the token tells ("identified:<id>" for an
// identified user's token); "" when only the app is known (an app token),
// which counts the event but no active device. Type is the code (1 to 4).
type Recorded struct {
	App    string
	Device string
	Type   int
	Coord  string
	Extra  map[string]any
	IP     string
	At     time.Time
}

func (Recorded) EventType() string { return "analytics.event_recorded" }

// Events lists the context's event types.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{Recorded{}}
}

// Shards is how many streams one app's events of a day spread over.
const (
	shardBits = 6
	Shards    = 1 << shardBits
)

// Stream is where an event goes: one of Shards streams per app and UTC
// day, picked by the device (or by salt, a fresh id, when there is none),
// so that concurrent reports rarely touch one stream, and a device's
// reports of a day stay in order in one. Nothing reads these streams to
// decide: they are appended to without an expected version.
func Stream(app string, at time.Time, device, salt string) string {
	h := fnv.New32a()
	if device != "" {
		h.Write([]byte(device))
	} else {
		h.Write([]byte(salt))
	}
	// FNV's low bits vary little between similar keys: mix, take the top.
	shard := (h.Sum32() * 0x9E3779B1) >> (32 - shardBits)
	return fmt.Sprintf("analytics-%s-%s-%02d", app, at.UTC().Format("20060102"), shard)
}
