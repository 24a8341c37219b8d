package identity

// Credentials is what signing a CMS user in, and checking the user's
// tokens, needs to know of the user. The identity read model answers with
// it; the token service checks it.
type Credentials struct {
	ID           string
	Admin        bool
	Disabled     bool
	AllowedIPs   []string
	PasswordHash string
	// Name is how the user appears as the author of what they write:
	// their name, else their username.
	Name string
}

// AppCredentials is what the client_credentials grant needs to know of an
// app.
type AppCredentials struct {
	ID         string
	SecretHash string
}
