package identity

import (
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// App is the state of an app, rebuilt from its events.
type App struct {
	ID       string
	Name     string
	ClientID string
	exists   bool
}

// Exists reports whether the app was created.
func (a App) Exists() bool { return a.exists }

// Apply folds one event into the state.
func (a App) Apply(ev any) App {
	switch e := ev.(type) {
	case AppCreated:
		a = App{ID: e.AppID, Name: e.Name, ClientID: e.ClientID, exists: true}
	case AppRenamed:
		a.Name = e.Name
	}
	return a
}

func validateAppName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || len(name) > 200 {
		return "", fault.Invalidf("app name must be 1 to 200 characters").With("field", "name")
	}
	return name, nil
}

// CreateApp decides the creation of an app; the secret hash is made by the
// caller, which shows the secret once.
func CreateApp(existing App, id, name, clientID, secretHash string) (AppCreated, error) {
	if existing.exists {
		return AppCreated{}, fault.Conflictf("app %s already exists", id)
	}
	name, err := validateAppName(name)
	if err != nil {
		return AppCreated{}, err
	}
	return AppCreated{AppID: id, Name: name, ClientID: clientID, ClientSecretHash: secretHash}, nil
}

// Rename decides a new name.
func (a App) Rename(name string) ([]any, error) {
	if !a.exists {
		return nil, fault.NotFoundf("app not found")
	}
	name, err := validateAppName(name)
	if err != nil {
		return nil, err
	}
	if name == a.Name {
		return nil, nil
	}
	return []any{AppRenamed{AppID: a.ID, Name: name}}, nil
}
