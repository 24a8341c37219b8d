package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The live stream of an app's content changes: GET
// /api/generalcontent/events, Server-Sent Events fed from the event log.

const eventsPath = "/api/generalcontent/events"

// sseEvent is one message of a stream.
type sseEvent struct {
	ID, Event, Data string
}

// change decodes the data of an `event: content` message.
func (e sseEvent) change(t testing.TB) liveChange {
	t.Helper()
	var c liveChange
	if err := json.Unmarshal([]byte(e.Data), &c); err != nil {
		t.Fatalf("event %+v: data: %v", e, err)
	}
	return c
}

type liveChange struct {
	Kind     string `json:"kind"`
	Type     string `json:"type"`
	App      string `json:"app"`
	Module   string `json:"module"`
	Item     string `json:"item"`
	Revision int64  `json:"revision"`
	At       int64  `json:"at"`
	By       string `json:"by"`
}

// liveStream is an open stream, read by a goroutine into events; ended is
// closed when the stream ends.
type liveStream struct {
	t      testing.TB
	resp   *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	ended  chan struct{}
}

// openEvents opens app's stream with token (and Last-Event-ID lastID if
// not empty). A refusal is returned as a response, the stream nil.
func (ts *testServer) openEvents(app, token, lastID string) (*liveStream, response) {
	ts.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.base+eventsPath+"?app="+url.QueryEscape(app), nil)
	if err != nil {
		ts.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	// No client timeout: the stream lasts.
	resp, err := (&http.Client{Transport: ts.client.Transport}).Do(req)
	if err != nil {
		cancel()
		ts.t.Fatalf("open events: %v", err)
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		var b strings.Builder
		_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
		return nil, response{Status: resp.StatusCode, Header: resp.Header, Body: []byte(b.String()), req: "GET " + eventsPath}
	}
	s := &liveStream{t: ts.t, resp: resp, cancel: cancel, events: make(chan sseEvent, 1000), ended: make(chan struct{})}
	go s.read()
	ts.t.Cleanup(s.close)
	return s, response{Status: resp.StatusCode, Header: resp.Header}
}

// read parses the stream into events until it ends.
func (s *liveStream) read() {
	defer close(s.ended)
	sc := bufio.NewScanner(s.resp.Body)
	var e sseEvent
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if e.Event != "" || e.Data != "" {
				s.events <- e
			}
			e = sseEvent{}
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "id: "):
			e.ID = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			e.Event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			e.Data = strings.TrimPrefix(line, "data: ")
		}
	}
}

func (s *liveStream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// next returns the next event, failing the test after wait.
func (s *liveStream) next(t testing.TB, wait time.Duration) sseEvent {
	t.Helper()
	select {
	case e := <-s.events:
		return e
	case <-s.ended:
		select {
		case e := <-s.events:
			return e
		default:
		}
		t.Fatalf("the stream ended")
	case <-time.After(wait):
		t.Fatalf("no event within %s", wait)
	}
	return sseEvent{}
}

// quiet fails the test if an event comes within wait.
func (s *liveStream) quiet(t testing.TB, wait time.Duration) {
	t.Helper()
	select {
	case e := <-s.events:
		t.Errorf("unexpected event %+v", e)
	case <-time.After(wait):
	}
}

// endsWithin fails the test unless the stream ends within wait.
func (s *liveStream) endsWithin(t testing.TB, wait time.Duration) {
	t.Helper()
	select {
	case <-s.ended:
	case <-time.After(wait):
		t.Fatalf("the stream is still open after %s", wait)
	}
}

// liveSettled returns once the process's follower of the log has passed
// every change made so far: a stream opened then starts after them (a
// stream starts where the follower is, a few milliseconds behind the
// log).
func (ts *testServer) liveSettled(app string) {
	ts.t.Helper()
	s, r := ts.openEvents(app, ts.admin, "")
	if s == nil {
		ts.t.Fatalf("open: %s", r)
	}
	defer s.close()
	m := ts.createModule(ts.admin, moduleBody(app, "settled "+strconv.FormatInt(time.Now().UnixNano(), 36), fld("title", ftText)))
	for {
		if c := s.next(ts.t, 10*time.Second).change(ts.t); c.Module == m.ID {
			return
		}
	}
}

func TestLiveStream(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withConfig(func(c *Config) {
		c.ReadYourWrites = 20 * time.Second
		c.Live.MaxPerUser = 3
		c.Live.Recheck = 200 * time.Millisecond
	}))
	app, other := ts.createApp("Live app"), ts.createApp("Live other app")
	modA := ts.createModule(ts.admin, moduleBody(app.ID, "A", fld("title", ftText)))
	modB := ts.createModule(ts.admin, moduleBody(app.ID, "B", fld("title", ftText)))
	_, editor := ts.userWith("live-editor", grantTo{app: app.ID, perms: []string{"read", "write", "update", "delete"}})
	_, reader := ts.userWith("live-reader", grantTo{app: app.ID, perms: []string{"read"}})
	_, moduleReader := ts.userWith("live-module-reader", grantTo{app: app.ID, module: modA.ID, perms: []string{"read"}})
	_, stranger := ts.userWith("live-stranger", grantTo{app: other.ID, perms: []string{"read"}})
	item := ts.createItem(editor, itemBody(modA.ID, "first", map[string]any{"title": "one"}))
	_, itemReader := ts.userWith("live-item-reader", grantTo{app: app.ID, item: item.ID, perms: []string{"read"}})
	const wait = 10 * time.Second
	ts.liveSettled(app.ID)

	t.Run("refusals", func(t *testing.T) {
		ts := ts.with(t)
		for _, c := range []struct {
			name, token, app string
			status           int
		}{
			{"no token", "", app.ID, 401},
			{"an app token", ts.appToken(app), app.ID, 403},
			{"no right on the app", stranger, app.ID, 403},
			{"no app", reader, "", 400},
		} {
			s, r := ts.openEvents(c.app, c.token, "")
			if s != nil {
				t.Errorf("%s: stream opened, want %d", c.name, c.status)
				continue
			}
			expectHaloError(t, r, c.status)
		}
	})

	t.Run("another user's change arrives", func(t *testing.T) {
		ts := ts.with(t)
		s, r := ts.openEvents(app.ID, reader, "")
		if s == nil {
			t.Fatalf("open: %s", r)
		}
		if ct := r.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("Content-Type %q", ct)
		}
		ts.put(instancePath+"/"+item.ID, editor, itemBody(modA.ID, "first", map[string]any{"title": "two"}))
		e := s.next(t, wait)
		c := e.change(t)
		if e.Event != "content" || c.Kind != "item" || c.Type != "content.item_edited" || c.App != app.ID || c.Module != modA.ID ||
			c.Item != item.ID || c.Revision != 1 || c.By != "User live-editor" || !near(c.At, time.Minute) {
			t.Errorf("event %+v, data %+v", e, c)
		}
		if id, err := strconv.ParseInt(e.ID, 10, 64); err != nil || id <= 0 {
			t.Errorf("id %q, want a position", e.ID)
		}
		m := ts.createModule(editor, moduleBody(app.ID, "Fresh", fld("title", ftText)))
		if c := s.next(t, wait).change(t); c.Kind != "module" || c.Type != "content.module_created" || c.Module != m.ID || c.Item != "" || c.Revision != 0 {
			t.Errorf("module change %+v", c)
		}
	})

	t.Run("module and item rights filter", func(t *testing.T) {
		ts := ts.with(t)
		ms, r := ts.openEvents(app.ID, moduleReader, "")
		if ms == nil {
			t.Fatalf("open: %s", r)
		}
		is, r := ts.openEvents(app.ID, itemReader, "")
		if is == nil {
			t.Fatalf("open: %s", r)
		}
		inB := ts.createItem(editor, itemBody(modB.ID, "in B", map[string]any{"title": "b"}))
		inA := ts.createItem(editor, itemBody(modA.ID, "in A", map[string]any{"title": "a"}))
		ts.transit(editor, item.ID, "publish", nil)
		if c := ms.next(t, wait).change(t); c.Item != inA.ID {
			t.Errorf("the module reader's first change is %+v, want the creation of %s (not %s of module B)", c, inA.ID, inB.ID)
		}
		if c := ms.next(t, wait).change(t); c.Item != item.ID || c.Type != "content.item_published" {
			t.Errorf("the module reader's second change is %+v", c)
		}
		if c := is.next(t, wait).change(t); c.Item != item.ID || c.Type != "content.item_published" {
			t.Errorf("the item reader's first change is %+v, want the publication of %s", c, item.ID)
		}
	})

	t.Run("Last-Event-ID resumes without loss or repetition", func(t *testing.T) {
		ts := ts.with(t)
		witness, _ := ts.openEvents(app.ID, reader, "")
		first, _ := ts.openEvents(app.ID, reader, "")
		it := ts.createItem(editor, itemBody(modA.ID, "resumed", map[string]any{"title": "r0"}))
		start := first.next(t, wait)
		if start.change(t).Item != it.ID {
			t.Fatalf("first change %+v", start)
		}
		witness.next(t, wait)
		first.close()
		// Missed while away: three changes.
		ts.put(instancePath+"/"+it.ID, editor, itemBody(modA.ID, "resumed", map[string]any{"title": "r1"}))
		ts.transit(editor, it.ID, "publish", nil)
		ts.do(request{method: http.MethodDelete, path: instancePath + "/" + it.ID, token: editor})
		var missed []sseEvent
		for range 3 {
			missed = append(missed, witness.next(t, wait))
		}
		again, r := ts.openEvents(app.ID, reader, start.ID)
		if again == nil {
			t.Fatalf("resume: %s", r)
		}
		for i, want := range missed {
			if got := again.next(t, wait); got != want {
				t.Errorf("replayed %d: %+v, want %+v", i, got, want)
			}
		}
		ts.transit(editor, it.ID, "restore", nil)
		live, seen := again.next(t, wait), witness.next(t, wait)
		if live != seen || live.change(t).Type != "content.item_restored" {
			t.Errorf("after the replay: %+v, want %+v", live, seen)
		}
		again.quiet(t, 300*time.Millisecond)
	})

	t.Run("an unknown Last-Event-ID resets", func(t *testing.T) {
		ts := ts.with(t)
		s, _ := ts.openEvents(app.ID, reader, "999999999")
		if e := s.next(t, wait); e.Event != "reset" {
			t.Errorf("first event %+v, want a reset", e)
		}
	})

	t.Run("per-user bound", func(t *testing.T) {
		ts := ts.with(t)
		_, tok := ts.userWith("live-greedy", grantTo{app: app.ID, perms: []string{"read"}})
		var open []*liveStream
		for range 3 {
			s, r := ts.openEvents(app.ID, tok, "")
			if s == nil {
				t.Fatalf("open: %s", r)
			}
			open = append(open, s)
		}
		_, r := ts.openEvents(app.ID, tok, "")
		expectHaloError(t, r, http.StatusTooManyRequests)
		if r.Header.Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After: %v", r.Header)
		}
		// Another user is not bound by this one's streams; one closed
		// frees a place.
		if s, r := ts.openEvents(app.ID, reader, ""); s == nil {
			t.Errorf("another user: %s", r)
		}
		open[0].close()
		deadline := time.Now().Add(wait)
		for {
			s, r := ts.openEvents(app.ID, tok, "")
			if s != nil {
				break
			}
			if r.Status != http.StatusTooManyRequests || time.Now().After(deadline) {
				t.Fatalf("after closing one: %s", r)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("a revoked token ends the stream", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("live-reader", userPass)
		s, r := ts.openEvents(app.ID, tok, "")
		if s == nil {
			t.Fatalf("open: %s", r)
		}
		expectStatus(t, ts.post("/api/oauth/revoke", "", form("token", tok)), 200)
		s.endsWithin(t, 5*time.Second)
		_, r = ts.openEvents(app.ID, tok, "")
		expectHaloError(t, r, 401)
	})

	t.Run("a revoked right ends the stream", func(t *testing.T) {
		ts := ts.with(t)
		u, tok := ts.userWith("live-demoted", grantTo{app: app.ID, perms: []string{"read"}})
		s, r := ts.openEvents(app.ID, tok, "")
		if s == nil {
			t.Fatalf("open: %s", r)
		}
		expectStatus(t, ts.revoke(ts.admin, map[string]any{"user": u.ID, "app": app.ID, "permissions": []string{"read"}}), 200)
		s.endsWithin(t, 5*time.Second)
	})
}

// Shutting the server down ends the open streams at once: it does not
// wait for them (http.Server.Shutdown waits for every handler).
func TestLiveStreamShutdown(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Live shutdown")
	s, r := ts.openEvents(app.ID, ts.admin, "")
	if s == nil {
		t.Fatalf("open: %s", r)
	}
	start := time.Now()
	ts.cancel()
	var err error
	select {
	case err = <-ts.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop within 10 s")
	}
	ts.done <- err // for the cleanup's stop
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the server took %s to stop with a stream open, want under 2 s", took)
	}
	t.Logf("stopped in %s with a stream open", time.Since(start).Round(time.Millisecond))
	s.endsWithin(t, time.Second)
}
