package identity

// Events of the identity context. Type names are stable: never rename them.

// UserCreated: a CMS user was created.
type UserCreated struct {
	UserID       string
	Username     string
	Email        string
	Name         string
	PasswordHash string
	Admin        bool
	AllowedIPs   []string
}

// UsernameClaimed reserves a username (stream "username-<lower name>") so
// that two users can never share one.
type UsernameClaimed struct {
	Username string
	UserID   string
}

// UsernameReleased frees a username after a rename.
type UsernameReleased struct {
	Username string
	UserID   string
}

// UserRenamed: the login name changed.
type UserRenamed struct {
	UserID   string
	Username string
}

// UserProfileUpdated: display name or email changed.
type UserProfileUpdated struct {
	UserID string
	Email  string
	Name   string
}

// UserPasswordChanged: a new password hash.
type UserPasswordChanged struct {
	UserID       string
	PasswordHash string
}

// UserAdminChanged: the admin flag was set or cleared.
type UserAdminChanged struct {
	UserID string
	Admin  bool
}

// UserAllowedIPsChanged: the IP allowlist was replaced (empty = any).
type UserAllowedIPsChanged struct {
	UserID     string
	AllowedIPs []string
}

// UserDisabled: the user may no longer sign in; their tokens stop working.
type UserDisabled struct{ UserID string }

// UserEnabled: a disabled user may sign in again.
type UserEnabled struct{ UserID string }

// AppCreated: an app with client credentials.
type AppCreated struct {
	AppID            string
	Name             string
	ClientID         string
	ClientSecretHash string
}

// AppRenamed: the app's name changed.
type AppRenamed struct {
	AppID string
	Name  string
}

func (UserCreated) EventType() string           { return "identity.user_created" }
func (UsernameClaimed) EventType() string       { return "identity.username_claimed" }
func (UsernameReleased) EventType() string      { return "identity.username_released" }
func (UserRenamed) EventType() string           { return "identity.user_renamed" }
func (UserProfileUpdated) EventType() string    { return "identity.user_profile_updated" }
func (UserPasswordChanged) EventType() string   { return "identity.user_password_changed" }
func (UserAdminChanged) EventType() string      { return "identity.user_admin_changed" }
func (UserAllowedIPsChanged) EventType() string { return "identity.user_allowed_ips_changed" }
func (UserDisabled) EventType() string          { return "identity.user_disabled" }
func (UserEnabled) EventType() string           { return "identity.user_enabled" }
func (AppCreated) EventType() string            { return "identity.app_created" }
func (AppRenamed) EventType() string            { return "identity.app_renamed" }

// Events lists a zero value of every event type of this context, for
// registration with a codec.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{
		UserCreated{}, UsernameClaimed{}, UsernameReleased{}, UserRenamed{}, UserProfileUpdated{},
		UserPasswordChanged{}, UserAdminChanged{}, UserAllowedIPsChanged{}, UserDisabled{},
		UserEnabled{}, AppCreated{}, AppRenamed{}, ServerVersionSet{},
	}
}
