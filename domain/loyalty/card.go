package loyalty

import (
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Limits of a stamp card definition (characters).
const (
	MaxCardName        = 255
	MaxCardDescription = 2000
	MaxCardReward      = 500
	MaxStampsNeeded    = 1000
)

// CardSpec is what a stamp card is defined or changed with.
type CardSpec struct {
	Name         string
	Description  string
	Reward       string
	StampsNeeded int
}

// Card is a stamp card definition of an app, folded from its stream.
type Card struct {
	ID           string
	App          string
	Name         string
	Description  string
	Reward       string
	StampsNeeded int
	Retired      bool
	exists       bool
}

// Exists reports whether the card was defined.
func (c Card) Exists() bool { return c.exists }

// Apply folds one event into the definition.
func (c Card) Apply(ev any) Card {
	switch e := ev.(type) {
	case CardDefined:
		c = Card{ID: e.Card, App: e.App, Name: e.Name, Description: e.Description, Reward: e.Reward,
			StampsNeeded: e.StampsNeeded, exists: true}
	case CardChanged:
		c.Name, c.Description, c.Reward, c.StampsNeeded = e.Name, e.Description, e.Reward, e.StampsNeeded
	case CardRetired:
		c.Retired = true
	}
	return c
}

// ErrCardNotFound is the answer about a card that does not exist (or that
// the caller may not see).
var ErrCardNotFound = fault.NotFoundf("stamp card not found")

// checkSpec validates a definition and returns it trimmed.
func (s CardSpec) check() (CardSpec, error) {
	s.Name, s.Reward = strings.TrimSpace(s.Name), strings.TrimSpace(s.Reward)
	s.Description = strings.TrimSpace(s.Description)
	for _, f := range []struct {
		field, v string
		min, max int
	}{
		{"name", s.Name, 1, MaxCardName},
		{"description", s.Description, 0, MaxCardDescription},
		{"reward", s.Reward, 1, MaxCardReward},
	} {
		n := utf8.RuneCountInString(f.v)
		if n < f.min || n > f.max {
			return s, invalid(f.field, "%s must be %d to %d characters", f.field, f.min, f.max)
		}
		if !utf8.ValidString(f.v) || strings.ContainsRune(f.v, 0) {
			return s, invalid(f.field, "%s must be UTF-8 text without NUL characters", f.field)
		}
	}
	if s.StampsNeeded < 1 || s.StampsNeeded > MaxStampsNeeded {
		return s, invalid("stampsNeeded", "stampsNeeded must be from 1 to %d", MaxStampsNeeded)
	}
	return s, nil
}

// DefineCard decides a new stamp card definition of app.
func DefineCard(existing Card, id, app string, s CardSpec) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("stamp card %s already exists", id)
	}
	if app == "" {
		return nil, invalid("app", "the app is required")
	}
	s, err := s.check()
	if err != nil {
		return nil, err
	}
	return []any{CardDefined{Card: id, App: app, Name: s.Name, Description: s.Description,
		StampsNeeded: s.StampsNeeded, Reward: s.Reward}}, nil
}

// Change decides a new version of the definition; nothing when it is the
// same. Cards already started keep what they need and promise.
func (c Card) Change(s CardSpec) ([]any, error) {
	if !c.exists {
		return nil, ErrCardNotFound
	}
	if c.Retired {
		return nil, fault.Conflictf("stamp card %s is retired", c.ID)
	}
	s, err := s.check()
	if err != nil {
		return nil, err
	}
	if s.Name == c.Name && s.Description == c.Description && s.Reward == c.Reward && s.StampsNeeded == c.StampsNeeded {
		return nil, nil
	}
	return []any{CardChanged{Card: c.ID, App: c.App, Name: s.Name, Description: s.Description,
		StampsNeeded: s.StampsNeeded, Reward: s.Reward}}, nil
}

// Retire decides that the definition takes no more stamps; nothing when it
// is retired already.
func (c Card) Retire() ([]any, error) {
	if !c.exists {
		return nil, ErrCardNotFound
	}
	if c.Retired {
		return nil, nil
	}
	return []any{CardRetired{Card: c.ID, App: c.App}}, nil
}
