package identity

import (
	"net/http"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdidentity "github.com/halocms/halocms/commands/identity"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
)

// userJSON is a CMS user on the wire; never with the password or its hash.
type userJSON struct {
	ID         string   `json:"id"`
	Username   string   `json:"username"`
	Email      string   `json:"email"`
	Name       string   `json:"name"`
	Admin      bool     `json:"admin"`
	AllowedIPs []string `json:"allowedIps"`
	Disabled   bool     `json:"disabled"`
	CreatedAt  int64    `json:"createdAt,omitempty"`
	UpdatedAt  int64    `json:"updatedAt,omitempty"`
}

func userFromView(u rmidentity.User) userJSON {
	ips := u.AllowedIPs
	if ips == nil {
		ips = []string{}
	}
	return userJSON{ID: u.ID, Username: u.Username, Email: u.Email, Name: u.Name, Admin: u.Admin,
		AllowedIPs: ips, Disabled: u.Disabled, CreatedAt: httpapi.Ms(u.CreatedAt), UpdatedAt: httpapi.Ms(u.UpdatedAt)}
}

func userFromDomain(u identity.User) userJSON {
	ips := u.AllowedIPs
	if ips == nil {
		ips = []string{}
	}
	return userJSON{ID: u.ID, Username: u.Username, Email: u.Email, Name: u.Name, Admin: u.Admin,
		AllowedIPs: ips, Disabled: u.Disabled}
}

// userBody is what POST and PUT accept. Read-only fields a client may echo
// back from a GET (createdAt, updatedAt) are accepted and ignored.
type userBody struct {
	ID              string    `json:"id"`
	Username        *string   `json:"username"`
	Password        *string   `json:"password"`
	CurrentPassword *string   `json:"currentPassword"`
	Email           *string   `json:"email"`
	Name            *string   `json:"name"`
	Admin           *bool     `json:"admin"`
	AllowedIPs      *[]string `json:"allowedIps"`
	Disabled        *bool     `json:"disabled"`
	CreatedAt       any       `json:"createdAt"`
	UpdatedAt       any       `json:"updatedAt"`
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (s *API) getSelf(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Users.Self(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, userFromView(u))
	return nil
}

func (s *API) putSelf(w http.ResponseWriter, r *http.Request) error {
	a := access.From(r.Context())
	if a.Kind != access.User {
		return fault.Forbiddenf("only CMS users have a profile")
	}
	var b userBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if b.ID != "" && b.ID != a.ID {
		return fault.Invalidf("id does not match the signed-in user").With("field", "id")
	}
	b.ID = a.ID
	return s.update(w, r, b)
}

func (s *API) listUsers(w http.ResponseWriter, r *http.Request) error {
	us, err := s.Users.Users(r.Context())
	if err != nil {
		return err
	}
	out := make([]userJSON, len(us))
	for i, u := range us {
		out[i] = userFromView(u)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Users.User(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, userFromView(u))
	return nil
}

func (s *API) createUser(w http.ResponseWriter, r *http.Request) error {
	var b userBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if b.Username == nil {
		return fault.Invalidf("username is required").With("field", "username")
	}
	if b.Password == nil {
		return fault.Invalidf("password is required").With("field", "password")
	}
	u, err := s.Identity.CreateUser(r.Context(), cmdidentity.CreateUser{
		Username: *b.Username, Password: *b.Password, Email: deref(b.Email), Name: deref(b.Name),
		Admin: deref(b.Admin), AllowedIPs: deref(b.AllowedIPs),
	})
	s.kit.Metrics.Command("identity.create_user", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, userFromDomain(u))
	return nil
}

// updateUser serves PUT /core-api/user/{id} and PUT /core-api/user/ (id in
// the body).
func (s *API) updateUser(w http.ResponseWriter, r *http.Request) error {
	var b userBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if id := chi.URLParam(r, "id"); id != "" {
		if b.ID != "" && b.ID != id {
			return fault.Invalidf("id in the body does not match the path").With("field", "id")
		}
		b.ID = id
	}
	if b.ID == "" {
		return fault.Invalidf("id is required").With("field", "id")
	}
	return s.update(w, r, b)
}

func (s *API) update(w http.ResponseWriter, r *http.Request, b userBody) error {
	u, err := s.Identity.UpdateUser(r.Context(), cmdidentity.UpdateUser{
		ID: b.ID, Username: b.Username, Password: b.Password, CurrentPassword: b.CurrentPassword, Email: b.Email, Name: b.Name,
		Admin: b.Admin, AllowedIPs: b.AllowedIPs, Disabled: b.Disabled,
	})
	s.kit.Metrics.Command("identity.update_user", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, userFromDomain(u))
	return nil
}
