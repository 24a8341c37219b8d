package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"
)

func (s *server) healthz(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	if err := s.Ready.Ready(ctx); err != nil {
		s.kit.log.WarnContext(ctx, "not ready", "err", err)
		body := map[string]any{"status": "unavailable", "reason": "unknown"}
		var nr *NotReady
		if errors.As(err, &nr) {
			for k, v := range nr.Detail {
				body[k] = v
			}
			body["status"], body["reason"] = "unavailable", nr.Reason
		}
		if u := s.kit.stores.unreachable; u != nil && u(err) {
			// The database is out of reach: ask again in a few seconds.
			body["reason"] = "database"
			w.Header().Set("Retry-After", strconv.Itoa(OutageRetryAfter))
		}
		WriteJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	body := map[string]any{}
	if d, ok := s.Ready.(ReadyDetailer); ok {
		for k, v := range d.ReadyDetail(ctx) {
			body[k] = v
		}
	}
	body["status"] = "ready"
	WriteJSON(w, http.StatusOK, body)
}
