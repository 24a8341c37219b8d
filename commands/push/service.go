// Package push holds the push commands (schedule, edit, cancel, delete a
// push; record a device's activity) and the dispatcher that sends each
// due push exactly once, whatever the number of processes running it.
package push

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/domain/rights"
)

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
}

// Audience is who a push reaches: the devices of an app's app users, and
// which aliases and identified users an app knows.
type Audience interface {
	Devices(ctx context.Context, app string, t push.Target, after push.DeviceKey, fn func(push.Device) error) error // push.DeviceKey order, strictly after `after`, streamed
	UnknownAliases(ctx context.Context, app string, aliases []string) ([]string, error)
	UnknownIdentified(ctx context.Context, app string, ids []string) ([]string, error)
}

// Tokens removes push tokens the provider reports invalid.
type Tokens interface {
	RemoveToken(ctx context.Context, app, appUserID, token string) error // idempotent
}

// Schedules finds a live schedule's app in the read model (activity
// reports do not load the schedule's stream, which holds every delivery).
type Schedules interface {
	ScheduleApp(ctx context.Context, id string) (string, error)
}

// IDs generates identifiers.
type IDs interface{ NewID() string }

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{"push"}

// Service runs the push commands.
type Service struct {
	store     commands.EventStore
	authz     Authorizer
	audience  Audience
	schedules Schedules
	ids       IDs
	wait      commands.Waiter
	now       func() time.Time
	nudge     func()
}

// NewService wires the service; every dependency is required.
func NewService(store commands.EventStore, authz Authorizer, audience Audience, schedules Schedules, ids IDs, wait commands.Waiter) *Service {
	if store == nil || authz == nil || audience == nil || schedules == nil || ids == nil || wait == nil {
		panic("push.NewService: nil dependency")
	}
	return &Service{store: store, authz: authz, audience: audience, schedules: schedules, ids: ids, wait: wait,
		now: time.Now, nudge: func() {}}
}

// OnDue sets a function called when a push becomes due now (scheduled or
// edited for now): the local dispatcher's Nudge, so that it does not wait
// for its next poll.
func (s *Service) OnDue(f func()) {
	if f != nil {
		s.nudge = f
	}
}

func apply(s push.Schedule, ev any) push.Schedule { return s.Apply(ev) }

// ActorApp returns the app an app token (or a token of one of the app's
// identified users) acts for; ok is false for other actors.
func ActorApp(a access.Actor) (string, bool) {
	app := a.ClientApp()
	return app, app != ""
}

// caller refuses anonymous callers (401) and app tokens (403): an app
// token ships inside every copy of the app, and whoever unpacks it must not
// be able to push to every user.
func caller(ctx context.Context) (access.Actor, error) {
	return access.CMSUser(ctx, fault.Forbiddenf("app tokens (and app users' tokens) may not schedule, change or read pushes; use a CMS user's token"))
}

// authorize needs permission p on app from a CMS user (see caller).
func (s *Service) authorize(ctx context.Context, p rights.Permission, app string) error {
	a, err := caller(ctx)
	if err != nil {
		return err
	}
	return s.authz.Authorize(ctx, a, p, rights.Resource{App: app})
}

// appExists refuses an app that does not exist (or was deleted): 404,
// as content does.
func (s *Service) appExists(ctx context.Context, app string) error {
	a, _, err := commands.Load(ctx, s.store, identity.AppStream(app), identity.App{}, identity.App.Apply)
	if err != nil {
		return err
	}
	if !a.Exists() {
		return fault.Invalidf("app %s not found", app).With("field", "appId")
	}
	return nil
}

// checkTarget refuses aliases and identified users the app does not know.
func (s *Service) checkTarget(ctx context.Context, app string, t push.Target) error {
	if len(t.Aliases) > 0 {
		unknown, err := s.audience.UnknownAliases(ctx, app, t.Aliases)
		if err != nil {
			return err
		}
		if len(unknown) > 0 {
			return fault.Invalidf("unknown aliases: %s", list(unknown)).With("field", "aliases").With("unknown", unknown)
		}
	}
	if len(t.Identified) > 0 {
		unknown, err := s.audience.UnknownIdentified(ctx, app, t.Identified)
		if err != nil {
			return err
		}
		if len(unknown) > 0 {
			return fault.Invalidf("unknown identified users: %s", list(unknown)).With("field", "identified").With("unknown", unknown)
		}
	}
	return nil
}

// list names up to ten entries.
func list(s []string) string {
	if len(s) > 10 {
		return strings.Join(s[:10], ", ") + fmt.Sprintf(" and %d more", len(s)-10)
	}
	return strings.Join(s, ", ")
}

func (s *Service) settle(ctx context.Context, pos event.Position) {
	if !pos.IsZero() {
		s.wait.WaitFor(ctx, pos, Projections...)
	}
}

func (s *Service) dueNow(sc push.Schedule) {
	if sc.Status == push.StatusScheduled && !sc.SendOn.After(s.now()) {
		s.nudge()
	}
}

// Schedule schedules a push of app (write right on the app; CMS users
// only).
func (s *Service) Schedule(ctx context.Context, app string, spec push.Spec) (push.Schedule, error) {
	if _, err := caller(ctx); err != nil {
		return push.Schedule{}, err
	}
	if err := push.ValidateApp(app); err != nil {
		return push.Schedule{}, err
	}
	if err := s.authorize(ctx, rights.Write, app); err != nil {
		return push.Schedule{}, err
	}
	if err := s.appExists(ctx, app); err != nil {
		return push.Schedule{}, err
	}
	id := s.ids.NewID()
	evs, err := push.NewSchedule(push.Schedule{}, id, app, spec, s.now())
	if err != nil {
		return push.Schedule{}, err
	}
	if err := s.checkTarget(ctx, app, evs[0].(push.Scheduled).Target); err != nil {
		return push.Schedule{}, err
	}
	res, err := s.store.Append(ctx, push.Stream(id), event.NoStream, commands.WithApp(commands.Wrap(ctx, evs...), app)...)
	if err != nil {
		return push.Schedule{}, fmt.Errorf("append %s: %w", push.Stream(id), err)
	}
	s.settle(ctx, res.Last)
	sc := push.Schedule{}.Apply(evs[0])
	s.dueNow(sc)
	return sc, nil
}

// change loads a schedule, authorizes p on its app, decides and appends
// with the version read, retrying from a fresh load on a conflict.
func (s *Service) change(ctx context.Context, id string, p rights.Permission,
	decide func(push.Schedule) ([]any, error)) (push.Schedule, error) {
	if _, err := caller(ctx); err != nil {
		return push.Schedule{}, err
	}
	sc, res, err := commands.Change(ctx, s.store, push.Stream(id), push.Schedule{ID: id}, apply,
		func(sc push.Schedule) string { return sc.App },
		func(sc push.Schedule) ([]any, error) {
			if !sc.Exists() {
				return nil, fault.NotFoundf("push schedule %s not found", id).With("id", id)
			}
			if err := s.authorize(ctx, p, sc.App); err != nil {
				return nil, err
			}
			return decide(sc)
		})
	if errors.Is(err, event.ErrVersionConflict) {
		return sc, fault.Conflictf("push schedule %s changed concurrently; try again", id)
	}
	if err != nil {
		return sc, err
	}
	s.settle(ctx, res.Last)
	return sc, nil
}

// Edit changes a push that is still scheduled (update right on its app).
func (s *Service) Edit(ctx context.Context, id string, spec push.Spec) (push.Schedule, error) {
	sc, err := s.change(ctx, id, rights.Update, func(sc push.Schedule) ([]any, error) {
		evs, err := sc.Edit(spec, s.now())
		if err != nil {
			return nil, err
		}
		return evs, s.checkTarget(ctx, sc.App, evs[0].(push.Edited).Target)
	})
	if err == nil {
		s.dueNow(sc)
	}
	return sc, err
}

// Cancel stops a scheduled push from being sent (update right on its app).
func (s *Service) Cancel(ctx context.Context, id string) (push.Schedule, error) {
	return s.change(ctx, id, rights.Update, push.Schedule.Cancel)
}

// Delete deletes a push (delete right on its app); a scheduled one is
// never sent.
func (s *Service) Delete(ctx context.Context, id string) (push.Schedule, error) {
	return s.change(ctx, id, rights.Delete, push.Schedule.Delete)
}

// Activity is a device's report on a push: the app user's alias, the
// schedule id, receipt / open / dismiss and the platform.
type Activity struct {
	Device   string
	Schedule string
	Action   string
	Platform string
}

// RecordActivity records a device's report. Devices call it with their
// app's token (or an identified user's); a push of another app is as
// unknown as one that does not exist. CMS users need the write right on
// the push's app.
func (s *Service) RecordActivity(ctx context.Context, in Activity) error {
	a := access.From(ctx)
	if a.Kind == access.Anonymous {
		return access.ErrUnauthenticated
	}
	if _, err := push.NewActivity(in.Schedule, "", in.Device, in.Action, in.Platform); err != nil {
		return err
	}
	if strings.TrimSpace(in.Schedule) == "" {
		return fault.Invalidf("schedule is required").With("field", "schedule")
	}
	app, err := s.schedules.ScheduleApp(ctx, in.Schedule)
	if err != nil {
		return err
	}
	if own, ok := ActorApp(a); ok {
		if own != app {
			return fault.NotFoundf("push schedule %s not found", in.Schedule).With("id", in.Schedule)
		}
	} else if err := s.authz.Authorize(ctx, a, rights.Write, rights.Resource{App: app}); err != nil {
		return err
	}
	// Only the app's own devices count: the app token is public, and
	// made-up aliases would inflate the statistics.
	unknown, err := s.audience.UnknownAliases(ctx, app, []string{in.Device})
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return fault.NotFoundf("device %s not found", in.Device).With("field", "device")
	}
	evs, err := push.NewActivity(in.Schedule, app, in.Device, in.Action, in.Platform)
	if err != nil {
		return err
	}
	_, err = s.store.Append(ctx, push.ActivityStream(in.Schedule), event.AnyVersion, commands.WithApp(commands.Wrap(ctx, evs...), app)...)
	if err != nil {
		return fmt.Errorf("append %s: %w", push.ActivityStream(in.Schedule), err)
	}
	return nil
}
