package main

// What the content, push and loyalty phases work in: a database of their
// own, the server binary serving it from a scratch directory, and its API
// signed in as the admin with an app. The three phases set it up in the
// same steps and tear it down in the reverse order.

import (
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
)

// serverPhase is one phase's database, server and API client. Its fields
// are set step by step (openServerPhase, makeDir, launch, signIn); close
// undoes the steps taken.
type serverPhase struct {
	keep     bool // -keep: keep the database
	db       *benchDB
	dbURL    string
	pool     *pgxpool.Pool
	dir      string // the scratch directory the server runs in
	srv      *cmsServer
	password string // of the server's first admin
	api      *cmsAPI
	admin    string // the admin's token
	app      benchApp
}

// openServerPhase creates the phase's database and connects to it with
// at most conns connections.
func openServerPhase(ctx context.Context, cfg config, serverURL string, conns int) (*serverPhase, error) {
	db, err := createDatabase(ctx, serverURL)
	if err != nil {
		return nil, err
	}
	p := &serverPhase{keep: cfg.keep, db: db, dbURL: databaseURL(serverURL, db.name)}
	p.pool, err = db.connect(ctx, conns)
	if err != nil {
		db.release(cfg.keep)
		return nil, err
	}
	return p, nil
}

// start makes the scratch directory and launches the server in it.
func (p *serverPhase) start(ctx context.Context, phase, dirPrefix string, env ...string) error {
	if err := p.makeDir(dirPrefix); err != nil {
		return err
	}
	return p.launch(ctx, phase, env...)
}

// makeDir makes the scratch directory the server will run in.
func (p *serverPhase) makeDir(prefix string) (err error) {
	p.dir, err = os.MkdirTemp("", prefix)
	return err
}

// launch builds the server and starts it on the phase's database; env
// adds settings.
func (p *serverPhase) launch(ctx context.Context, phase string, env ...string) (err error) {
	p.srv, p.password, err = launchServer(ctx, phase, p.dir, p.dbURL, env...)
	return err
}

// signIn makes the API client, sized for clients concurrent clients,
// signs in as the admin and creates an app named app.
func (p *serverPhase) signIn(ctx context.Context, clients int, app string) (err error) {
	p.api = newCMSAPI(p.srv.base, clients)
	p.admin, p.app, err = p.api.adminApp(ctx, p.password, app)
	return err
}

// close undoes the steps taken, the last first. A failure of the phase,
// *err, gets the end of the server's log: the server's side of the story.
func (p *serverPhase) close(err *error) {
	if p.api != nil {
		p.api.hc.CloseIdleConnections()
	}
	if p.srv != nil {
		if *err != nil {
			if tail := p.srv.logTail(40); tail != "" {
				*err = fmt.Errorf("%w\nserver log (last lines):\n%s", *err, tail)
			}
		}
		p.srv.stop()
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
	p.pool.Close()
	p.db.release(p.keep)
}
