package content

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Live opens the live streams of apps' content changes (see
// rmcontent.Live: it checks who may follow what).
type Live interface {
	Open(ctx context.Context, req rmcontent.LiveRequest) (*rmcontent.LiveStream, error)
}

// liveWriteTimeout bounds each write of a stream: a client that stops
// reading is dropped instead of holding its handler.
const liveWriteTimeout = 10 * time.Second

// events serves GET /api/generalcontent/events?app=APP: the app's content
// changes as Server-Sent Events, resumable with Last-Event-ID.
func (s *API) events(w http.ResponseWriter, r *http.Request) error {
	stream, err := s.Live.Open(r.Context(), rmcontent.LiveRequest{App: r.URL.Query().Get("app"),
		LastEventID: r.Header.Get("Last-Event-ID"), Recheck: httpapi.Reauthenticate})
	if err != nil {
		if r.Context().Err() != nil {
			return nil // the client left while the stream was being opened
		}
		return err
	}
	defer stream.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer answers must not hold this one
	w.WriteHeader(http.StatusOK)
	sink := &sse{w: w, rc: http.NewResponseController(w)}
	// The retry hint, and the headers on their way: the client knows the
	// stream is open before the first change.
	if err := sink.write("retry: 3000\n: live\n\n"); err != nil {
		return nil
	}
	// A failed write ends the stream: the client went away or stopped
	// reading. The answer began: there is nothing more to say.
	_ = stream.Run(r.Context(), sink)
	return nil
}

// sse writes a stream as Server-Sent Events.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// changeJSON is a change on the wire.
type changeJSON struct {
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	App      string `json:"app"`
	Module   string `json:"module"`
	Item     string `json:"item,omitempty"`
	Revision int64  `json:"revision"`
	At       int64  `json:"at"`
	By       string `json:"by"`
}

func (s *sse) Change(c rmcontent.Change) error {
	data, err := json.Marshal(changeJSON{Kind: c.Kind, Type: c.Type, App: c.App, Module: c.Module, Item: c.Item,
		Revision: c.Revision, At: httpapi.Ms(c.At), By: c.By})
	if err != nil {
		return err
	}
	return s.write(fmt.Sprintf("id: %d\nevent: content\ndata: %s\n\n", c.Pos, data))
}

func (s *sse) Reset(mark int64) error {
	id := ""
	if mark > 0 {
		id = fmt.Sprintf("id: %d\n", mark)
	}
	return s.write(id + "event: reset\ndata: {}\n\n")
}

func (s *sse) KeepAlive() error { return s.write(": keep-alive\n\n") }

// write sends text at once, within liveWriteTimeout.
func (s *sse) write(text string) error {
	_ = s.rc.SetWriteDeadline(time.Now().Add(liveWriteTimeout))
	if _, err := s.w.Write([]byte(text)); err != nil {
		return err
	}
	return s.rc.Flush()
}
