package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runCLI runs one cms subcommand against the database at dbURL and
// returns what it printed.
func runCLI(t *testing.T, dbURL string, args ...string) string {
	t.Helper()
	t.Setenv("DATABASE_URL", dbURL)
	var out bytes.Buffer
	cmd := moduleTypesCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("cms moduletypes %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

// `cms moduletypes export` prints the document the download endpoint
// serves, and `cms moduletypes import` brings it into another
// installation, where the API then lists the same types.
func TestModuleTypesCLIExportImport(t *testing.T) { // not parallel: it sets DATABASE_URL
	src := startServer(t)
	src.mustJSON(src.post(moduleTypePath, src.admin, map[string]any{"name": "Article", "fields": []map[string]any{
		fld("title", ftText, "required", true, "rules", rules{"maxLength": 80}),
		fld("kind", ftChoice, "rules", rules{"values": []string{"news", "blog"}}),
	}}), 201, &moduleTypeView{})

	exported := runCLI(t, src.dbURL, "export")
	var doc struct {
		Version     int              `json:"version"`
		ModuleTypes []moduleTypeView `json:"moduleTypes"`
	}
	if err := json.Unmarshal([]byte(exported), &doc); err != nil || doc.Version != 1 || len(doc.ModuleTypes) != 1 ||
		doc.ModuleTypes[0].Name != "Article" || len(doc.ModuleTypes[0].Fields) != 2 {
		t.Fatalf("export printed %s (%v)", exported, err)
	}
	var download map[string]any
	src.mustJSON(src.get(moduleTypePath+"/download", src.admin), 200, &download)
	var fromCLI map[string]any
	_ = json.Unmarshal([]byte(exported), &fromCLI)
	if a, b := mustMarshal(t, download), mustMarshal(t, fromCLI); a != b {
		t.Errorf("the CLI export differs from the download:\n%s\n%s", b, a)
	}

	file := filepath.Join(t.TempDir(), "types.json")
	if err := os.WriteFile(file, []byte(exported), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := startServer(t)
	if out := runCLI(t, dst.dbURL, "import", file); !strings.Contains(out, "saved module type Article") {
		t.Errorf("import printed %q", out)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		var list []moduleTypeView
		dst.mustJSON(dst.get(moduleTypePath, dst.admin), 200, &list)
		if len(list) == 1 && list[0].ID == doc.ModuleTypes[0].ID && list[0].Name == "Article" && len(list[0].Fields) == 2 &&
			list[0].Fields[0].Required && list[0].Fields[1].Name == "kind" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the import the other installation lists %+v", list)
		}
		time.Sleep(50 * time.Millisecond)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`{"version": 1, "moduleTypes": [{"id": "x", "name": "X", "fields": [{"name": "f", "type": "nope"}]}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := moduleTypesCmd()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs([]string{"import", bad})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "unknown field type") {
		t.Errorf("importing a bad document: %v, want an unknown field type error", err)
	}

	// A document is checked whole first: a type without an id, or with a
	// bad one, after a good one refuses the import, and nothing is saved.
	for name, second := range map[string]string{
		"no id":  `{"name": "No id", "fields": []}`,
		"bad id": `{"id": "bad id!", "name": "Bad id", "fields": []}`,
	} {
		doc := `{"version": 1, "moduleTypes": [{"id": "cli-new", "name": "New", "fields": []}, ` + second + `]}`
		if err := os.WriteFile(bad, []byte(doc), 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := moduleTypesCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs([]string{"import", bad})
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "moduleTypes[1]") {
			t.Errorf("%s: importing %s: %v, want an error about moduleTypes[1]", name, doc, err)
		}
	}
	// A document the event store refuses only at append time (a NUL
	// character, which jsonb cannot hold, in its last type) saves none of
	// its types either.
	if err := os.WriteFile(bad, []byte(`{"version": 1, "moduleTypes": [{"id": "cli-new", "name": "New", "fields": []}, `+
		`{"id": "cli-nul", "name": "Nul\u0000name", "fields": []}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd = moduleTypesCmd()
	cmd.SetOut(&bytes.Buffer{})
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetArgs([]string{"import", bad})
	if err := cmd.Execute(); err == nil {
		t.Errorf("importing a document with a NUL character succeeded")
	}
	// A good import after them: once the API shows it, it would show
	// anything the refused ones saved before it.
	if err := os.WriteFile(bad, []byte(`{"version": 1, "moduleTypes": [{"id": "cli-after", "name": "After", "fields": []}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	runCLI(t, dst.dbURL, "import", bad)
	deadline = time.Now().Add(10 * time.Second)
	for {
		var list []moduleTypeView
		dst.mustJSON(dst.get(moduleTypePath, dst.admin), 200, &list)
		var names []string
		for _, mt := range list {
			names = append(names, mt.Name)
		}
		if slices.Contains(names, "After") {
			if !sameSet(names, []string{"Article", "After"}) {
				t.Errorf("after refused imports the installation lists %v, want Article and After", names)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the good import never showed: %v", names)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
