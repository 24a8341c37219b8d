package web

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/halocms/halocms/domain/content"
)

// The CMS's field-type catalog (src/lib/fieldTypes.ts) and the server's
// (domain/content.FieldTypes) list the same types, names and editor
// widgets in the same order, and the OpenAPI document's widget enum (from
// which the API client's type is generated) every widget: a widget the
// CMS offers is one the server accepts, and the reverse.
func TestFieldTypeCatalogsAgree(t *testing.T) {
	src, err := os.ReadFile("src/lib/fieldTypes.ts")
	if err != nil {
		t.Fatal(err)
	}
	ts := string(src)
	entry := regexp.MustCompile(`\{ id: id\((\d+)\), name: "([^"]+)",[^\n]*?widgets: \[([^\]]*)\]`)
	found := entry.FindAllStringSubmatch(ts, -1)
	if len(found) != len(content.FieldTypes) {
		t.Fatalf("fieldTypes.ts lists %d field types (as { id: id(n), name, …, widgets: […] }), the server %d",
			len(found), len(content.FieldTypes))
	}
	all := map[string]bool{}
	for i, m := range found {
		n, _ := strconv.Atoi(m[1])
		want := content.FieldTypes[i]
		if strconv.Itoa(n) != strings.TrimLeft(want.ID, "0") || m[2] != want.Name {
			t.Errorf("fieldTypes.ts entry %d is id(%d) %q, the server's %s %q", i, n, m[2], want.ID, want.Name)
		}
		widgets := quoted(m[3])
		if !slices.Equal(widgets, want.Widgets) {
			t.Errorf("%s: fieldTypes.ts offers widgets %v, the server takes %v", want.Name, widgets, want.Widgets)
		}
		for _, w := range want.Widgets {
			all[w] = true
		}
	}

	union := regexp.MustCompile(`export type Widget =([^;]*);`).FindStringSubmatch(ts)
	if union == nil {
		t.Fatal("fieldTypes.ts has no `export type Widget = …;`")
	}
	if got, want := sortedSet(quoted(union[1])), sortedKeys(all); !slices.Equal(got, want) {
		t.Errorf("fieldTypes.ts's Widget type is %v, the widgets of the types %v", got, want)
	}

	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `yaml:"enum"`
				} `yaml:"properties"`
			} `yaml:"schemas"`
		} `yaml:"components"`
	}
	y, err := os.ReadFile("../http/content/openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(y, &doc); err != nil {
		t.Fatal(err)
	}
	enum := doc.Components.Schemas["FieldRules"].Properties["widget"].Enum
	if got, want := sortedSet(enum), sortedKeys(all); !slices.Equal(got, want) {
		t.Errorf("the OpenAPI FieldRules.widget enum is %v, the widgets of the types %v", got, want)
	}
}

// quoted returns the double-quoted strings of s, in order.
func quoted(s string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

func sortedSet(ss []string) []string {
	c := slices.Clone(ss)
	slices.Sort(c)
	return slices.Compact(c)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
