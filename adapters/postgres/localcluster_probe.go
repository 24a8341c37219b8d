package postgres

// Finding a PostgreSQL server that already answers on this machine (see
// localcluster.go).

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"time"

	"github.com/jackc/pgx/v5"
)

func probeLocal(ctx context.Context, minFreeConns int, log *slog.Logger) (string, bool) {
	users := []string{superuser}
	if u, err := user.Current(); err == nil && u.Username != superuser {
		users = append(users, u.Username)
	}
	var candidates []string
	for _, u := range users {
		candidates = append(candidates, fmt.Sprintf("postgres://%s@127.0.0.1:5432/postgres?sslmode=disable", u))
	}
	if st, err := os.Stat("/var/run/postgresql"); err == nil && st.IsDir() {
		for _, u := range users {
			candidates = append(candidates, fmt.Sprintf("postgres://%s@/postgres?host=/var/run/postgresql&sslmode=disable", u))
		}
	}
	for _, url := range candidates {
		err := tryServer(ctx, url, minFreeConns)
		if err == nil {
			log.Info("postgres: using the local server", "url", url)
			return url, true
		}
		log.Debug("postgres: local server not usable", "url", url, "err", err)
	}
	return "", false
}

// tryServer connects without a password and checks that the role may create
// databases (tests clone theirs from a template) and tables in `postgres`,
// and that the server has minFreeConns connections to spare: a suite run
// beside other work must not meet "too many clients already".
func tryServer(ctx context.Context, url string, minFreeConns int) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return err
	}
	cfg.ConnectTimeout = 2 * time.Second
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var ok bool
	err = conn.QueryRow(ctx, `SELECT rolsuper OR (rolcreatedb AND EXISTS (
		SELECT 1 FROM pg_namespace WHERE nspname = 'public' AND has_schema_privilege(oid, 'CREATE')))
		FROM pg_roles WHERE rolname = current_user`).Scan(&ok)
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("role may not create databases")
	}
	if minFreeConns <= 0 {
		return nil
	}
	free, err := freeConnections(ctx, conn)
	if err != nil {
		return err
	}
	if free < minFreeConns {
		return fmt.Errorf("only %d connections to spare, %d needed", free, minFreeConns)
	}
	return nil
}

// freeConnections is how many more connections the server accepts from
// this role: max_connections, less those reserved for superusers when the
// role is not one, less the client connections open (this one included).
func freeConnections(ctx context.Context, conn *pgx.Conn) (int, error) {
	var free int
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections')::int
		- CASE WHEN (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN 0
		       ELSE current_setting('superuser_reserved_connections')::int END
		- (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend')::int`).Scan(&free)
	return free, err
}
