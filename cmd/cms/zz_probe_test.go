package main

import (
	"context"
	"testing"

	"github.com/halocms/halocms/projections"
)

func TestZZProbeContentVerify(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Probe")
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Posts", fld("title", ftText)))
	ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "x"}, "publishedAt", nowMS()-1000))
	res, err := ts.app.runtime.RebuildWith(context.Background(), "content", projections.RebuildOptions{BatchSize: 2, Verify: true})
	t.Logf("res %+v err %v", res, err)
}
