package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Module types: reusable field configurations. The download document is
// what import takes back.

type moduleTypeJSON struct {
	ID       string      `json:"id"`
	Name     string      `json:"name"`
	IsSingle bool        `json:"isSingle"`
	Fields   []fieldJSON `json:"fields"`
}

type moduleTypeBody struct {
	ID       string      `json:"id"`
	Name     *string     `json:"name"`
	IsSingle bool        `json:"isSingle"`
	Fields   []fieldBody `json:"fields"`
}

// moduleTypesDocument is the download/import format.
type moduleTypesDocument struct {
	Version     int              `json:"version"`
	ModuleTypes []moduleTypeBody `json:"moduleTypes"`
}

// ModuleTypesFormat is the version of the download document.
const ModuleTypesFormat = 1

func moduleTypeJSONOf(t rmcontent.ModuleType) moduleTypeJSON {
	j := moduleTypeJSON{ID: t.ID, Name: t.Name, IsSingle: t.Single, Fields: make([]fieldJSON, len(t.Fields))}
	for i, f := range t.Fields {
		j.Fields[i] = fieldJSONOf("", f, t.UpdatedAt, t.UpdatedAt)
	}
	return j
}

func (s *API) moduleTypes(r *http.Request) ([]rmcontent.ModuleType, error) {
	return s.Queries.ModuleTypes(r.Context())
}

func (s *API) listModuleTypes(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.moduleTypes(r)
	if err != nil {
		return err
	}
	out := make([]moduleTypeJSON, len(ts))
	for i, t := range ts {
		out[i] = moduleTypeJSONOf(t)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) downloadModuleTypes(w http.ResponseWriter, r *http.Request) error {
	ts, err := s.moduleTypes(r)
	if err != nil {
		return err
	}
	id := chi.URLParam(r, "id")
	var list []rmcontent.ModuleType
	for _, t := range ts {
		if id == "" || t.ID == id {
			list = append(list, t)
		}
	}
	if id != "" && len(list) == 0 {
		return fault.NotFoundf("module type %s not found", id)
	}
	name := "moduletypes.json"
	if id != "" {
		name = "moduletype-" + id + ".json"
	}
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	httpapi.WriteJSON(w, http.StatusOK, ExportModuleTypes(list))
	return nil
}

func (s *API) saveModuleType(w http.ResponseWriter, r *http.Request, id string, b moduleTypeBody, status int) error {
	if b.Name == nil {
		return fault.Invalidf("name is required").With("field", "name")
	}
	fields, err := fieldsFromBody(b.Fields)
	if err != nil {
		return err
	}
	t, err := s.Commands.SaveModuleType(r.Context(), id, *b.Name, b.IsSingle, fields)
	s.kit.Metrics.Command("content.save_module_type", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, status, s.savedTypes(r.Context(), t)[0])
	return nil
}

// savedTypes is what a command saved, with the date the read model gives
// each type (now, for a type it does not show yet).
func (s *API) savedTypes(ctx context.Context, saved ...content.ModuleType) []moduleTypeJSON {
	at := map[string]int64{}
	if list, err := s.Queries.ModuleTypes(ctx); err == nil {
		for _, t := range list {
			at[t.ID] = t.UpdatedAt
		}
	}
	out := make([]moduleTypeJSON, len(saved))
	for i, t := range saved {
		updated, ok := at[t.ID]
		if !ok {
			updated = time.Now().UnixMilli()
		}
		out[i] = moduleTypeJSONOf(rmcontent.ModuleType{ID: t.ID, Name: t.Name, Single: t.Single, Fields: t.Fields, UpdatedAt: updated})
	}
	return out
}

func (s *API) createModuleType(w http.ResponseWriter, r *http.Request) error {
	if err := access.RequireAdmin(access.From(r.Context())); err != nil { // before the body's faults
		return err
	}
	var b moduleTypeBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	return s.saveModuleType(w, r, "", b, http.StatusCreated)
}

func (s *API) updateModuleType(w http.ResponseWriter, r *http.Request) error {
	if err := access.RequireAdmin(access.From(r.Context())); err != nil { // before the body's faults
		return err
	}
	var b moduleTypeBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	return s.saveModuleType(w, r, chi.URLParam(r, "id"), b, http.StatusOK)
}

func (s *API) deleteModuleType(w http.ResponseWriter, r *http.Request) error {
	err := s.Commands.DeleteModuleType(r.Context(), chi.URLParam(r, "id"))
	s.kit.Metrics.Command("content.delete_module_type", err)
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// ExportModuleTypes is the download document of the given types.
func ExportModuleTypes(ts []rmcontent.ModuleType) any {
	list := make([]moduleTypeJSON, len(ts))
	for i, t := range ts {
		list[i] = moduleTypeJSONOf(t)
	}
	return map[string]any{"version": ModuleTypesFormat, "moduleTypes": list}
}

// ParseModuleTypes reads and checks a download document: every type must
// be valid before any is saved, so a bad document changes nothing (and
// ImportModuleTypes saves the types all or nothing). Each
// type must carry its id (a download always does), and no id may appear
// twice: an import saves every type under its id, so importing the same
// document again changes nothing.
func ParseModuleTypes(r io.Reader) ([]cmdcontent.ModuleTypeInput, error) {
	var doc moduleTypesDocument
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, httpapi.BadJSON(err)
	}
	if doc.Version != ModuleTypesFormat {
		return nil, fault.Invalidf("unsupported document version %d (want %d)", doc.Version, ModuleTypesFormat).With("field", "version")
	}
	out := make([]cmdcontent.ModuleTypeInput, 0, len(doc.ModuleTypes))
	seen := make(map[string]int, len(doc.ModuleTypes))
	for i, b := range doc.ModuleTypes {
		if b.ID == "" {
			return nil, fault.Invalidf("moduleTypes[%d].id is required: an import saves each type under its id", i).With("field", "id").With("moduleType", i)
		}
		if j, ok := seen[b.ID]; ok {
			return nil, fault.Invalidf("moduleTypes[%d].id %q is the id of moduleTypes[%d] too", i, b.ID, j).With("field", "id").With("moduleType", i)
		}
		seen[b.ID] = i
		if b.Name == nil {
			return nil, fault.Invalidf("moduleTypes[%d].name is required", i).With("field", "name").With("moduleType", i)
		}
		fields, err := fieldsFromBody(b.Fields)
		if err == nil {
			_, err = content.ModuleType{}.Save(b.ID, *b.Name, b.IsSingle, fields)
		}
		if err != nil {
			return nil, inModuleType(i, err)
		}
		out = append(out, cmdcontent.ModuleTypeInput{ID: b.ID, Name: *b.Name, Single: b.IsSingle, Fields: fields})
	}
	return out, nil
}

// inModuleType says which type of an import document err is about.
func inModuleType(i int, err error) error {
	var fe *fault.Error
	if !errors.As(err, &fe) {
		return err
	}
	c := fe.With("moduleType", i)
	c.Message = fmt.Sprintf("moduleTypes[%d]: %s", i, fe.Message)
	return c
}

// importModuleTypes takes a download document and saves each type under
// its id (creating or replacing it), all or nothing.
func (s *API) importModuleTypes(w http.ResponseWriter, r *http.Request) error {
	if err := access.RequireAdmin(access.From(r.Context())); err != nil {
		return err
	}
	specs, err := ParseModuleTypes(r.Body)
	if err != nil {
		return err
	}
	ts, err := s.Commands.ImportModuleTypes(r.Context(), specs)
	s.kit.Metrics.Command("content.import_module_types", err)
	if err != nil {
		return err
	}
	out := s.savedTypes(r.Context(), ts...)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"imported": len(out), "moduleTypes": out})
	return nil
}
