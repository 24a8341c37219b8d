package identity

import (
	"context"
	"net/http"

	httpapi "github.com/halocms/halocms/adapters/http"

	cmdrights "github.com/halocms/halocms/commands/rights"
	"github.com/halocms/halocms/domain/rights"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
)

// rightBody is the body of grant and revoke.
type rightBody struct {
	User        string   `json:"user"`
	App         string   `json:"app"`
	Module      string   `json:"module,omitempty"`
	Item        string   `json:"item,omitempty"`
	Permissions []string `json:"permissions"`
}

type rightJSON struct {
	App         string   `json:"app"`
	Module      string   `json:"module,omitempty"`
	Item        string   `json:"item,omitempty"`
	Permissions []string `json:"permissions"`
}

func rightFromEntry(e rights.Entry) rightJSON {
	j := rightJSON{App: e.App, Permissions: e.Permissions}
	switch e.Scope.Kind {
	case rights.ModuleScope:
		j.Module = e.Scope.ID
	case rights.ItemScope:
		j.Item = e.Scope.ID
	}
	return j
}

type rightsResponse struct {
	User    string      `json:"user"`
	App     string      `json:"app"`
	Changed bool        `json:"changed"`
	Rights  []rightJSON `json:"rights"`
}

func (s *API) grant(w http.ResponseWriter, r *http.Request) error {
	return s.changeRights(w, r, "rights.grant", s.Rights.Grant)
}

func (s *API) revokeRight(w http.ResponseWriter, r *http.Request) error {
	return s.changeRights(w, r, "rights.revoke", s.Rights.Revoke)
}

func (s *API) changeRights(w http.ResponseWriter, r *http.Request, name string,
	do func(ctx context.Context, c cmdrights.Change) (cmdrights.Result, error)) error {
	var b rightBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	res, err := do(r.Context(), cmdrights.Change{User: b.User, App: b.App, Module: b.Module, Item: b.Item, Permissions: b.Permissions})
	s.kit.Metrics.Command(name, err)
	if err != nil {
		return err
	}
	out := rightsResponse{User: res.User, App: res.App, Changed: res.Changed, Rights: []rightJSON{}}
	for _, e := range res.Rights {
		out.Rights = append(out.Rights, rightFromEntry(e))
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listRights serves GET /api/authentication/right?user=&app=: a user's
// effective rights from the projection. Users may list their own; admins
// and managers of the app anyone's.
func (s *API) listRights(w http.ResponseWriter, r *http.Request) error {
	user, rs, err := s.Authorizer.List(r.Context(), r.URL.Query().Get("user"), r.URL.Query().Get("app"))
	if err != nil {
		return err
	}
	out := []rightJSON{}
	for _, x := range rs {
		j := rightJSON{App: x.App, Permissions: x.Permissions}
		switch x.ScopeKind {
		case "module":
			j.Module = x.ScopeID
		case "item":
			j.Item = x.ScopeID
		}
		out = append(out, j)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"user": user, "rights": out})
	return nil
}

type auditChangeJSON struct {
	EventID     string   `json:"eventId"`
	Position    int64    `json:"position"`
	RecordedAt  int64    `json:"recordedAt"`
	Action      string   `json:"action"`
	App         string   `json:"app"`
	Module      string   `json:"module,omitempty"`
	Item        string   `json:"item,omitempty"`
	Permissions []string `json:"permissions"`
	By          string   `json:"by"`
	ClientIP    string   `json:"clientIp,omitempty"`
	Correlation string   `json:"correlationId,omitempty"`
}

func (s *API) auditRights(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	at, err := httpapi.ParseMoment(q.Get("at"), "at")
	if err != nil {
		return err
	}
	rep, err := s.Audit.Rights(r.Context(), rmaudit.RightsQuery{User: q.Get("user"), App: q.Get("app"), At: at})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, RightsAudit(rep))
	return nil
}

// RightsAudit is the wire form of a rights audit, as GET /api/audit/rights
// answers it. `cms audit rights --json` prints it too, so that a script
// reads the same names and units (epoch milliseconds) from either.
func RightsAudit(rep rmaudit.RightsReport) any {
	changes := make([]auditChangeJSON, 0, len(rep.Changes))
	for _, c := range rep.Changes {
		j := auditChangeJSON{EventID: c.EventID, Position: c.Position.Pos, RecordedAt: httpapi.Ms(c.RecordedAt), Action: c.Action,
			App: c.App, Permissions: c.Permissions, By: c.By, ClientIP: c.ClientIP, Correlation: c.Correlation}
		switch c.Scope.Kind {
		case rights.ModuleScope:
			j.Module = c.Scope.ID
		case rights.ItemScope:
			j.Item = c.Scope.ID
		}
		changes = append(changes, j)
	}
	eff := []rightJSON{}
	for _, e := range rep.Effective {
		eff = append(eff, rightFromEntry(e))
	}
	return map[string]any{"user": rep.User, "app": rep.App, "at": httpapi.Ms(rep.At), "changes": changes, "effective": eff}
}
