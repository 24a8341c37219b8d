package content

import (
	"context"
	"errors"
	"fmt"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

// SaveModuleType creates (empty id) or replaces a module type; admins only.
func (s *Service) SaveModuleType(ctx context.Context, id, name string, single bool, fields []content.Field) (content.ModuleType, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return content.ModuleType{}, err
	}
	if id == "" {
		id = s.ids.NewID()
	}
	t, res, err := commands.Update(ctx, s.store, content.ModuleTypeStream(id), "", content.ModuleType{}, applyType,
		func(t content.ModuleType) ([]any, error) {
			return t.Save(id, name, single, s.assignFieldIDs(t.Fields, fields))
		})
	if err == nil {
		s.settle(ctx, res.Last)
	}
	return t, err
}

// ModuleTypeInput is one module type of an import.
type ModuleTypeInput struct {
	ID     string
	Name   string
	Single bool
	Fields []content.Field
}

// ImportModuleTypes creates or replaces each type under its id, all or
// nothing (admins only): each type is decided as SaveModuleType decides
// it, and every changed stream is appended in one transaction, retried as
// a whole when any of them moved on. It returns the types as saved.
func (s *Service) ImportModuleTypes(ctx context.Context, in []ModuleTypeInput) ([]content.ModuleType, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return nil, err
	}
	var (
		out []content.ModuleType
		res event.AppendResult
	)
	err := commands.Retry{}.Run(ctx, func(int) error {
		out, res = make([]content.ModuleType, len(in)), event.AppendResult{}
		var appends []event.StreamAppend
		for i, p := range in {
			stream := content.ModuleTypeStream(p.ID)
			t, version, err := commands.Load(ctx, s.store, stream, content.ModuleType{}, applyType)
			if err != nil {
				return err
			}
			evs, err := t.Save(p.ID, p.Name, p.Single, s.assignFieldIDs(t.Fields, p.Fields))
			if err != nil {
				return err
			}
			for _, e := range evs {
				t = t.Apply(e)
			}
			out[i] = t
			if len(evs) > 0 {
				appends = append(appends, event.StreamAppend{Stream: stream, ExpectedVersion: version, Events: commands.Wrap(ctx, evs...)})
			}
		}
		if len(appends) == 0 {
			return nil
		}
		var err error
		if res, err = s.store.AppendMulti(ctx, appends...); err != nil {
			return fmt.Errorf("import module types: %w", err)
		}
		return nil
	})
	if errors.Is(err, event.ErrVersionConflict) {
		return nil, fault.Conflictf("the module types changed concurrently; try again")
	}
	if err != nil {
		return nil, err
	}
	s.settle(ctx, res.Last)
	return out, nil
}

// DeleteModuleType deletes a module type; admins only.
func (s *Service) DeleteModuleType(ctx context.Context, id string) error {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return err
	}
	_, res, err := commands.Update(ctx, s.store, content.ModuleTypeStream(id), "", content.ModuleType{}, applyType,
		func(t content.ModuleType) ([]any, error) { return t.Delete() })
	if err == nil {
		s.settle(ctx, res.Last)
	}
	return err
}
