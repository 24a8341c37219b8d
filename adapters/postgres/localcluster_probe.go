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

func probeLocal(ctx context.Context, log *slog.Logger) (string, bool) {
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
		err := tryServer(ctx, url)
		if err == nil {
			log.Info("postgres: using the local server", "url", url)
			return url, true
		}
		log.Debug("postgres: local server not usable", "url", url, "err", err)
	}
	return "", false
}

// tryServer connects without a password and checks that the role may create
// databases (tests clone theirs from a template) and tables in `postgres`.
func tryServer(ctx context.Context, url string) error {
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
	return nil
}
