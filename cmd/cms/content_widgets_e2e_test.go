package main

import (
	"strings"
	"testing"
)

// A module field's rules.widget names the editor the CMS shows its values
// with: one of its type's, stored, answered back, changed by a module
// update; another type's is a 400 naming the field.
func TestContentFieldWidgets(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Widgets App")
	widgetOf := func(m moduleView, field string) any {
		f, ok := m.field(field)
		if !ok {
			t.Fatalf("module %s has no field %s", m.Name, field)
		}
		return f.Rules["widget"]
	}

	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Pages",
		fld("body", ftLongText, "rules", rules{"widget": "markdown"}),
		fld("when", ftDate, "rules", rules{"widget": "date"}),
		fld("title", ftText)))
	if widgetOf(mod, "body") != "markdown" || widgetOf(mod, "when") != "date" || widgetOf(mod, "title") != nil {
		t.Errorf("create answered widgets %v, %v, %v", widgetOf(mod, "body"), widgetOf(mod, "when"), widgetOf(mod, "title"))
	}
	got := ts.module(mod.ID)
	if widgetOf(got, "body") != "markdown" || widgetOf(got, "when") != "date" {
		t.Errorf("GET answered widgets %v, %v", widgetOf(got, "body"), widgetOf(got, "when"))
	}

	// A module update changes the widget (no item is checked for it).
	ts.createItem(ts.admin, itemBody(mod.ID, "a page", map[string]any{"body": "# Hi", "title": "t"}))
	var up moduleView
	ts.mustJSON(ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, "Pages",
		fld("body", ftLongText, "rules", rules{"widget": "html"}),
		fld("when", ftDate, "rules", rules{"widget": "date"}),
		fld("title", ftText))), 200, &up)
	if widgetOf(up, "body") != "html" || widgetOf(ts.module(mod.ID), "body") != "html" {
		t.Errorf("after the update: widget %v, read back %v", widgetOf(up, "body"), widgetOf(ts.module(mod.ID), "body"))
	}

	// Another type's widget, or none of any: a 400 naming the field.
	for _, f := range []map[string]any{
		fld("title", ftText, "rules", rules{"widget": "richtext"}),
		fld("title", ftText, "rules", rules{"widget": "wysiwyg"}),
		fld("title", ftText, "rules", rules{"widget": 3}),
	} {
		r := ts.post(modulePath, ts.admin, moduleBody(app.ID, "Bad widget", f))
		ex := haloExtra(t, r, 400)
		if f["rules"].(rules)["widget"] != 3 && ex["field"] != "title" {
			t.Errorf("%s: extra.field %v, want title", r, ex["field"])
		}
	}
	r := ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, "Pages", fld("body", ftLongText, "rules", rules{"widget": "date"})))
	if ex := haloExtra(t, r, 400); ex["field"] != "body" || !strings.Contains(string(r.Body), "markdown") {
		t.Errorf("%s: want a 400 naming body and the widgets it takes", r)
	}
	if widgetOf(ts.module(mod.ID), "body") != "html" {
		t.Errorf("a refused update changed the widget")
	}

	// Module types carry it too.
	var mt moduleTypeView
	ts.mustJSON(ts.post(moduleTypePath, ts.admin, map[string]any{"id": "widget-type", "name": "With widgets", "isSingle": false,
		"fields": []any{fld("choice", ftChoice, "rules", rules{"values": []string{"a", "b"}, "widget": "select"})}}), 201, &mt)
	if len(mt.Fields) != 1 || mt.Fields[0].Rules["widget"] != "select" {
		t.Errorf("module type fields %+v", mt.Fields)
	}
}
