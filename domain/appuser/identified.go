package appuser

import (
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// Networks an identified user signs in with. Only HALO's own (email and
// password) can be checked here: Facebook and Google tokens would need
// those providers' servers.
const (
	NetworkHalo     = "halo"
	NetworkFacebook = "facebook"
	NetworkGoogle   = "google"
)

// Password limits of identified users (bcrypt reads at most 72 bytes).
const (
	MinPasswordLength = 8
	MaxPasswordLength = 72
	MaxProfileLength  = 500 // name, surname, display name
	MaxPhotoURLLength = 2048
)

// UserProfile is what HALO shows of an identified user.
type UserProfile struct {
	Name        string
	Surname     string
	DisplayName string
	PhotoURL    string
}

// Identified is an identified user (APP+), rebuilt from its events.
type Identified struct {
	ID           string
	App          string
	Email        string
	PasswordHash string
	Profile      UserProfile
	exists       bool
}

// Exists reports whether the identified user registered.
func (i Identified) Exists() bool { return i.exists }

// Apply folds one event into the state.
func (i Identified) Apply(ev any) Identified {
	if e, ok := ev.(IdentifiedRegistered); ok {
		i = Identified{ID: e.IdentifiedID, App: e.App, Email: e.Email, PasswordHash: e.PasswordHash, Profile: e.Profile, exists: true}
	}
	return i
}

// EmailClaim is the reservation of an email within an app.
type EmailClaim struct{ IdentifiedID string }

// Apply folds one event into the reservation.
func (c EmailClaim) Apply(ev any) EmailClaim {
	if e, ok := ev.(IdentifiedEmailClaimed); ok {
		c.IdentifiedID = e.IdentifiedID
	}
	return c
}

// CheckCredentials validates a sign-up's email and password (8 to 72
// bytes).
func CheckCredentials(email, password string) error {
	bad := Problems{}
	switch {
	case email == "":
		bad.Add("email", CodeRequired)
	case !ValidEmail(email):
		bad.Add("email", CodeInvalid)
	}
	if len(password) < MinPasswordLength || len(password) > MaxPasswordLength {
		bad.Add("password", CodeInvalid)
	}
	return bad.Err()
}

// Register decides the sign-up of an identified user; claim is the
// reservation of the email, which must be free. The password is checked
// with CheckCredentials and hashed by the caller first. The first event
// goes to the identified user's stream, the second to the email's.
func Register(existing Identified, claim EmailClaim, id, app, email, passwordHash string, p UserProfile) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("identified user %s already exists", id)
	}
	if claim.IdentifiedID != "" {
		return nil, fault.Conflictf("this email is already registered").With("field", "email")
	}
	p.Name, p.Surname = strings.TrimSpace(p.Name), strings.TrimSpace(p.Surname)
	p.DisplayName, p.PhotoURL = strings.TrimSpace(p.DisplayName), strings.TrimSpace(p.PhotoURL)
	bad := Problems{}
	for field, v := range map[string]string{"profile.name": p.Name, "profile.surname": p.Surname, "profile.displayName": p.DisplayName} {
		if tooLong(v, MaxProfileLength) {
			bad.Add(field, CodeTooLong)
		}
	}
	if len(p.PhotoURL) > MaxPhotoURLLength {
		bad.Add("profile.photoUrl", CodeTooLong)
	}
	if err := bad.Err(); err != nil {
		return nil, err
	}
	if p.DisplayName == "" {
		p.DisplayName = strings.TrimSpace(p.Name + " " + p.Surname)
	}
	return []any{
		IdentifiedRegistered{IdentifiedID: id, App: app, Email: email, PasswordHash: passwordHash, Network: NetworkHalo, Profile: p},
		IdentifiedEmailClaimed{App: app, Email: email, IdentifiedID: id},
	}, nil
}
