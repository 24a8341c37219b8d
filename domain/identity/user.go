// Package identity is the CMS users and apps context: who may sign in to
// the CMS and which apps exist. Pure: no SQL, HTTP or JSON.
package identity

import (
	"net/mail"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// UserStream and UsernameStream name the streams of this context.
func UserStream(id string) string { return "cmsuser-" + id }

// UsernameStream is the reservation stream of a username (case-insensitive).
func UsernameStream(username string) string { return "username-" + strings.ToLower(username) }

// AppStream names an app's stream.
func AppStream(id string) string { return "app-" + id }

// User is the state of a CMS user, rebuilt from its events.
type User struct {
	ID           string
	Username     string
	Email        string
	Name         string
	Admin        bool
	AllowedIPs   []string
	Disabled     bool
	PasswordHash string
	exists       bool
}

// Exists reports whether the user was created.
func (u User) Exists() bool { return u.exists }

// Apply folds one event into the state.
func (u User) Apply(ev any) User {
	switch e := ev.(type) {
	case UserCreated:
		u = User{ID: e.UserID, Username: e.Username, Email: e.Email, Name: e.Name, Admin: e.Admin,
			AllowedIPs: e.AllowedIPs, PasswordHash: e.PasswordHash, exists: true}
	case UserRenamed:
		u.Username = e.Username
	case UserProfileUpdated:
		u.Email, u.Name = e.Email, e.Name
	case UserPasswordChanged:
		u.PasswordHash = e.PasswordHash
	case UserAdminChanged:
		u.Admin = e.Admin
	case UserAllowedIPsChanged:
		u.AllowedIPs = e.AllowedIPs
	case UserDisabled:
		u.Disabled = true
	case UserEnabled:
		u.Disabled = false
	}
	return u
}

var usernamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@+-]{1,63}$`)

// Password limits. The upper bound keeps hashing cheap and within what
// bcrypt accepts.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 72
)

// ValidateUsername checks a login name.
func ValidateUsername(s string) error {
	if !usernamePattern.MatchString(s) {
		return fault.Invalidf("username must be 2-64 characters: letters, digits and . _ @ + -").With("field", "username")
	}
	return nil
}

// ValidatePassword checks a new password's length (the hash is made by the
// caller).
func ValidatePassword(p string) error {
	if len(p) < MinPasswordLength || len(p) > MaxPasswordLength {
		return fault.Invalidf("password must be %d to %d bytes long", MinPasswordLength, MaxPasswordLength).With("field", "password")
	}
	return nil
}

func validateEmail(s string) error {
	if s == "" {
		return nil
	}
	if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
		return fault.Invalidf("email %q is not a valid address", s).With("field", "email")
	}
	return nil
}

func validateName(s string) error {
	if len(s) > 200 {
		return fault.Invalidf("name is longer than 200 characters").With("field", "name")
	}
	return nil
}

// NormalizeAllowedIPs parses an IP allowlist: CIDR prefixes (IPv4 or IPv6)
// or single addresses, returned in canonical, sorted, de-duplicated form.
func NormalizeAllowedIPs(list []string) ([]string, error) {
	out := make([]string, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		var p netip.Prefix
		var err error
		if strings.Contains(s, "/") {
			p, err = netip.ParsePrefix(s)
		} else {
			var a netip.Addr
			if a, err = netip.ParseAddr(s); err == nil {
				p = netip.PrefixFrom(a, a.BitLen())
			}
		}
		if err != nil {
			return nil, fault.Invalidf("allowedIps: %q is not an IP address or CIDR prefix", s).With("field", "allowedIps")
		}
		out = append(out, UnmapPrefix(p).Masked().String())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// UnmapPrefix turns an IPv4-mapped IPv6 prefix (::ffff:10.0.0.0/104) into
// its IPv4 form (10.0.0.0/8): client addresses are compared unmapped.
func UnmapPrefix(p netip.Prefix) netip.Prefix {
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p
}

// IPAllowed reports whether addr is inside the allowlist (an empty list
// allows every address).
func IPAllowed(allowlist []string, addr netip.Addr) bool {
	if len(allowlist) == 0 {
		return true
	}
	addr = addr.Unmap()
	for _, s := range allowlist {
		if p, err := netip.ParsePrefix(s); err == nil && p.Contains(addr) {
			return true
		}
	}
	return false
}

// NewUser is the input of CreateUser.
type NewUser struct {
	ID           string
	Username     string
	Email        string
	Name         string
	PasswordHash string
	Admin        bool
	AllowedIPs   []string
}

// CreateUser decides the creation of a user. The username reservation
// (UsernameClaimed) goes to its own stream; the caller appends both
// atomically.
func CreateUser(existing User, in NewUser) (UserCreated, error) {
	if existing.exists {
		return UserCreated{}, fault.Conflictf("user %s already exists", in.ID)
	}
	if err := ValidateUsername(in.Username); err != nil {
		return UserCreated{}, err
	}
	if err := validateEmail(in.Email); err != nil {
		return UserCreated{}, err
	}
	if err := validateName(in.Name); err != nil {
		return UserCreated{}, err
	}
	if in.PasswordHash == "" {
		return UserCreated{}, fault.Invalidf("password is required").With("field", "password")
	}
	ips, err := NormalizeAllowedIPs(in.AllowedIPs)
	if err != nil {
		return UserCreated{}, err
	}
	return UserCreated{UserID: in.ID, Username: in.Username, Email: in.Email, Name: in.Name,
		PasswordHash: in.PasswordHash, Admin: in.Admin, AllowedIPs: ips}, nil
}

// UserChanges lists the fields an update sets; nil means unchanged.
type UserChanges struct {
	Username     *string
	Email        *string
	Name         *string
	PasswordHash *string
	Admin        *bool
	AllowedIPs   *[]string
	Disabled     *bool
}

// Update decides which events an update produces: one per changed aspect,
// none for fields that already hold the requested value.
func (u User) Update(c UserChanges) ([]any, error) {
	if !u.exists {
		return nil, fault.NotFoundf("user not found")
	}
	var evs []any
	if c.Username != nil && *c.Username != u.Username {
		if err := ValidateUsername(*c.Username); err != nil {
			return nil, err
		}
		evs = append(evs, UserRenamed{UserID: u.ID, Username: *c.Username})
	}
	email, name := u.Email, u.Name
	if c.Email != nil {
		if err := validateEmail(*c.Email); err != nil {
			return nil, err
		}
		email = *c.Email
	}
	if c.Name != nil {
		if err := validateName(*c.Name); err != nil {
			return nil, err
		}
		name = *c.Name
	}
	if email != u.Email || name != u.Name {
		evs = append(evs, UserProfileUpdated{UserID: u.ID, Email: email, Name: name})
	}
	if c.PasswordHash != nil {
		evs = append(evs, UserPasswordChanged{UserID: u.ID, PasswordHash: *c.PasswordHash})
	}
	if c.Admin != nil && *c.Admin != u.Admin {
		evs = append(evs, UserAdminChanged{UserID: u.ID, Admin: *c.Admin})
	}
	if c.AllowedIPs != nil {
		ips, err := NormalizeAllowedIPs(*c.AllowedIPs)
		if err != nil {
			return nil, err
		}
		if !slices.Equal(ips, u.AllowedIPs) {
			evs = append(evs, UserAllowedIPsChanged{UserID: u.ID, AllowedIPs: ips})
		}
	}
	if c.Disabled != nil && *c.Disabled != u.Disabled {
		if *c.Disabled {
			evs = append(evs, UserDisabled{UserID: u.ID})
		} else {
			evs = append(evs, UserEnabled{UserID: u.ID})
		}
	}
	return evs, nil
}

// Username reservation state (stream "username-<name>").
type Username struct {
	Owner string // user id holding the name, "" when free
}

// Apply folds a reservation event.
func (n Username) Apply(ev any) Username {
	switch e := ev.(type) {
	case UsernameClaimed:
		n.Owner = e.UserID
	case UsernameReleased:
		n.Owner = ""
	}
	return n
}

// Claim decides a reservation of the name for userID.
func (n Username) Claim(username, userID string) (UsernameClaimed, error) {
	if n.Owner != "" && n.Owner != userID {
		return UsernameClaimed{}, fault.Conflictf("username %q is taken", username).With("field", "username")
	}
	return UsernameClaimed{Username: username, UserID: userID}, nil
}
