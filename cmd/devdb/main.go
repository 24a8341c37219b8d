// Command devdb prints the URL of a PostgreSQL server for development and
// tests, starting one if needed (see postgres.EnsureServer): a local server
// that answers on 127.0.0.1:5432 or /var/run/postgresql, otherwise a private
// cluster under the data directory. A local server with fewer than 60
// connections to spare (-min-free-conns) is passed over for the private
// cluster, so that the test suite never meets "too many clients already".
// The Makefile runs it when DATABASE_URL is not set:
//
//	DATABASE_URL=$(go run ./cmd/devdb) go test ./...
//	go run ./cmd/devdb -stop     # stop the private cluster (make clean)
//	go run ./cmd/devdb -fresh halocms_e2e   # the URL of an empty database of that name
//	                                        # (on $DATABASE_URL's server when it is set)
//
// The URL goes to stdout, everything else to stderr.
//
// Environment:
//
//	CMS_DATA_DIR=DIR        data directory (default: .data at the repository root)
//	CMS_FORCE_PRIVATE_PG=1  ignore any local server; always use the private cluster
//	CMS_PG_BINDIR=DIR       where initdb, pg_ctl and postgres are
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/postgres"
)

func main() {
	stop := flag.Bool("stop", false, "stop the private cluster instead of ensuring a server")
	dir := flag.String("data", "", "data directory (default $CMS_DATA_DIR, else .data at the repository root)")
	verbose := flag.Bool("v", false, "log debug details")
	fresh := flag.String("fresh", "", "drop and create this database, and print its URL (browser tests)")
	minFree := flag.Int("min-free-conns", 60, "pass over a local server with fewer connections to spare (the test suite's need, see pgtest.SuiteConnections)")
	flag.Parse()

	level := slog.LevelInfo
	if *verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))

	dataDir := *dir
	if dataDir == "" {
		dataDir = postgres.DefaultDataDir()
	}
	if *stop {
		if err := postgres.StopLocalCluster(dataDir); err != nil {
			fmt.Fprintln(os.Stderr, "devdb:", err)
			os.Exit(1)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	url, err := os.Getenv("DATABASE_URL"), error(nil)
	if url == "" || *fresh == "" { // -fresh makes its database on the server DATABASE_URL names
		url, err = postgres.EnsureServer(ctx, dataDir, *minFree, log)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "devdb:", err)
		os.Exit(1)
	}
	if *fresh != "" {
		if url, err = freshDatabase(ctx, url, *fresh); err != nil {
			fmt.Fprintln(os.Stderr, "devdb:", err)
			os.Exit(1)
		}
	}
	fmt.Println(url)
}

// freshDatabase drops the database name (closing its connections) and
// creates it empty; it answers serverURL pointed at it.
func freshDatabase(ctx context.Context, serverURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	id := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+id+" WITH (FORCE)"); err != nil {
		return "", err
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+id); err != nil {
		return "", err
	}
	u, err := url.Parse(serverURL)
	if err != nil {
		return "", err
	}
	u.Path = "/" + name
	return u.String(), nil
}
