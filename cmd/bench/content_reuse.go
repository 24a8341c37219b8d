package main

// -content-reuse: the content phase on a database a kept run (-keep) left,
// without importing again the items it holds.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"

	"github.com/jackc/pgx/v5"
)

// keptContent is what a kept content phase leaves in its database's
// comment, for -content-reuse: the admin's password, the app, the module
// and how many items it imported (genProduct makes them again).
type keptContent struct {
	Password string   `json:"password"`
	App      benchApp `json:"app"`
	Module   string   `json:"module"`
	Items    int      `json:"items"`
}

// noteKept records b's state in its database's comment (see keptContent).
func (b *contentBench) noteKept(ctx context.Context) error {
	raw, err := json.Marshal(keptContent{Password: b.p.password, App: b.p.app, Module: b.module, Items: b.have})
	if err != nil {
		return err
	}
	// COMMENT takes no parameters: the JSON goes as a literal quoted by
	// PostgreSQL.
	var quoted string
	if err := b.p.pool.QueryRow(ctx, `SELECT quote_literal($1::text)`, string(raw)).Scan(&quoted); err != nil {
		return err
	}
	_, err = b.p.pool.Exec(ctx, `COMMENT ON DATABASE `+pgx.Identifier{b.p.db.name}.Sanitize()+` IS `+quoted)
	return err
}

// reuseServerPhase opens the kept database name (never dropped) and
// reads what its content phase left (see noteKept).
func reuseServerPhase(ctx context.Context, cfg config, serverURL, name string) (*serverPhase, keptContent, error) {
	var kept keptContent
	admin, err := pgx.ParseConfig(serverURL)
	if err != nil {
		return nil, kept, fmt.Errorf("database url: %w", err)
	}
	db := &benchDB{name: name, admin: admin}
	p := &serverPhase{keep: true, db: db, dbURL: databaseURL(serverURL, name)}
	if p.pool, err = db.connect(ctx, 2); err != nil {
		return nil, kept, err
	}
	var raw string
	if err := p.pool.QueryRow(ctx, `SELECT coalesce(shobj_description(oid, 'pg_database'), '') FROM pg_database WHERE datname = current_database()`).
		Scan(&raw); err != nil {
		p.pool.Close()
		return nil, kept, err
	}
	if err := json.Unmarshal([]byte(raw), &kept); err != nil || kept.Module == "" || kept.Items < 1 {
		p.pool.Close()
		return nil, kept, fmt.Errorf("-content-reuse %s: not a database a kept content phase left (%q): %v", name, raw, err)
	}
	progressf("content: reusing database %s: module %s with %d items", name, kept.Module, kept.Items)
	return p, kept, nil
}

// signInKept signs in to the kept database's server as its admin, with
// its app.
func (p *serverPhase) signInKept(ctx context.Context, clients int, kept keptContent) (err error) {
	p.api = newCMSAPI(p.srv.base, clients)
	p.password, p.app = kept.Password, kept.App
	p.admin, err = p.api.token(ctx, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {kept.Password}})
	if err != nil {
		return fmt.Errorf("admin sign-in to the kept database: %w", err)
	}
	return nil
}

// keptContentBench is newContentBench for a kept module: its items are
// made again by genProduct, not imported.
func keptContentBench(ctx context.Context, cfg config, p *serverPhase, kept keptContent, most int) (*contentBench, error) {
	appToken, err := p.api.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {p.app.ClientID}, "client_secret": {p.app.ClientSecret}})
	if err != nil {
		return nil, fmt.Errorf("app token: %w", err)
	}
	if kept.Items > most {
		return nil, errors.New("-content-reuse: the kept module holds more items than the largest -content-sizes")
	}
	b := &contentBench{cfg: cfg, p: p, appToken: appToken, module: kept.Module, facts: make([]product, most), have: kept.Items}
	for n := 1; n <= kept.Items; n++ {
		_, b.facts[n-1] = genProduct(kept.Module, n)
	}
	return b, nil
}
