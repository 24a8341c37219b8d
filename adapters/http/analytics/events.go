package analytics

import (
	"encoding/json"
	"net/http"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/fault"
	rmanalytics "github.com/halocms/halocms/readmodels/analytics"
)

// eventBody is a HaloEvent as the Android SDK sends it. The fields the
// server fills are accepted and ignored: the SDK's model has them, and a
// client that sends back an answer it got is not wrong.
type eventBody struct {
	Type       any            `json:"type"`
	Coord      any            `json:"coord"`
	Extra      map[string]any `json:"extra"`
	ClientID   any            `json:"clientId"`
	ClientType any            `json:"clientType"`
	AppID      any            `json:"appId"`
	CustomerID any            `json:"customerId"`
	Category   any            `json:"category"`
	IP         any            `json:"ip"`
}

// report checks the body: type a string (or a whole number) from 1 to 4,
// coord a string or null, extra an object or null.
func (b eventBody) report() (analytics.Report, error) {
	var typ string
	switch v := b.Type.(type) {
	case string:
		typ = v
	case json.Number:
		typ = v.String()
	case nil:
		return analytics.Report{}, fault.Invalidf("type is required").With("field", "type")
	default:
		return analytics.Report{}, fault.Invalidf("type must be a string").With("field", "type")
	}
	coord, ok := b.Coord.(string)
	if !ok && b.Coord != nil {
		return analytics.Report{}, fault.Invalidf("coord must be a string").With("field", "coord")
	}
	return analytics.NewReport(typ, coord, b.Extra)
}

// eventJSON is the answer: the event with the server's fields, in the
// order of HALO's answer (wire reference §8.1).
type eventJSON struct {
	ClientID   string         `json:"clientId"`
	ClientType string         `json:"clientType"`
	AppID      int            `json:"appId"`
	CustomerID int            `json:"customerId"`
	Category   string         `json:"category"`
	Type       string         `json:"type"`
	Coord      *string        `json:"coord"`
	IP         *string        `json:"ip"`
	Extra      map[string]any `json:"extra"`
}

// record serves POST /api/events/daily: the report is appended and echoed
// with the server's fields; it does not wait for the figures.
func (s *API) record(w http.ResponseWriter, r *http.Request) error {
	var b eventBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	rep, err := b.report()
	if err != nil {
		return err
	}
	ev, err := s.Commands.Record(r.Context(), rep)
	s.kit.Metrics.Command("analytics.record", err)
	if err != nil {
		return err
	}
	client, err := s.Queries.ClientID(r.Context(), ev.App)
	if err != nil {
		return err
	}
	out := eventJSON{ClientID: client, ClientType: "app", AppID: s.kit.AppNumber(r.Context(), ev.App), CustomerID: httpapi.CustomerID,
		Category: "MOB_APP", Type: analytics.TypeOfCode(ev.Type).String(), Extra: ev.Extra}
	if ev.Coord != "" {
		out.Coord = &ev.Coord
	}
	if ev.IP != "" {
		out.IP = &ev.IP
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

type dayJSON struct {
	Day           string           `json:"day"`
	ActiveDevices int64            `json:"activeDevices"`
	Events        int64            `json:"events"`
	ByType        map[string]int64 `json:"byType"`
}

type statsJSON struct {
	App   string    `json:"app"`
	AppID int       `json:"appId"`
	From  string    `json:"from"`
	To    string    `json:"to"`
	Days  []dayJSON `json:"days"`
}

// dayParam reads a YYYY-MM-DD query parameter (zero when absent).
func dayParam(r *http.Request, name string) (time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, fault.Invalidf("%s must be a day, YYYY-MM-DD", name).With("field", name)
	}
	return d, nil
}

// stats serves GET /api/events/daily/stats?app=&from=&to=: an app's
// events per day and type and its active devices per day.
func (s *API) stats(w http.ResponseWriter, r *http.Request) error {
	req := rmanalytics.StatsRequest{}
	var err error
	if req.From, err = dayParam(r, "from"); err != nil {
		req.Malformed = err
	} else if req.To, err = dayParam(r, "to"); err != nil {
		req.Malformed = err
	} else {
		req.App, req.Malformed = s.kit.AppParam(r)
	}
	st, err := s.Queries.Stats(r.Context(), req)
	if err != nil {
		return err
	}
	out := statsJSON{App: st.App, AppID: st.AppNumber, From: st.From.Format(time.DateOnly), To: st.To.Format(time.DateOnly),
		Days: make([]dayJSON, len(st.Days))}
	for i, d := range st.Days {
		by := make(map[string]int64, len(d.ByType))
		for t, n := range d.ByType {
			by[t.String()] = n
		}
		out.Days[i] = dayJSON{Day: d.Day.Format(time.DateOnly), ActiveDevices: d.ActiveDevices, Events: d.Events, ByType: by}
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
