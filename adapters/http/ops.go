package httpapi

import (
	"context"
	"net/http"
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
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable"})
		return
	}
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ready"})
}
