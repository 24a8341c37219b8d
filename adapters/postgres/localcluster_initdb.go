package postgres

// Creating the private cluster (initdb) and writing the settings it starts
// with.

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

func (c *cluster) initdb(ctx context.Context, log *slog.Logger) error {
	log.Info("postgres: creating private cluster (initdb)", "dir", c.data, "bindir", c.bindir)
	var lastErr error
	for _, locale := range []string{"C.UTF-8", "C"} {
		// A half-made PGDATA from an interrupted initdb must go first.
		if err := os.RemoveAll(c.data); err != nil {
			return fmt.Errorf("private PostgreSQL: %w", err)
		}
		out, err := c.run(ctx, "initdb", "-D", c.data, "-U", superuser, "--encoding=UTF8", "--locale="+locale,
			"--auth-local=trust", "--auth-host=trust")
		if err == nil {
			conf := filepath.Join(c.data, "postgresql.conf")
			f, err := os.OpenFile(conf, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return fmt.Errorf("private PostgreSQL: %w", err)
			}
			_, err = f.WriteString("\n# halocms: port, addresses and socket, rewritten at each start\ninclude_if_exists = 'halocms.conf'\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("private PostgreSQL: %w", err)
			}
			return nil
		}
		lastErr = fmt.Errorf("initdb: %w: %s", err, bytes.TrimSpace(out))
		if ctx.Err() != nil {
			break
		}
	}
	_ = os.RemoveAll(c.data)
	return fmt.Errorf("private PostgreSQL in %s: %w", c.root, lastErr)
}

// writeConfig records the port and writes the settings the server starts
// with.
func (c *cluster) writeConfig(port int) error {
	if err := c.writeOwned(filepath.Join(c.root, "port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	sockets := c.root
	// The socket path must fit in sun_path (108 bytes with its NUL).
	if len(sockets)+len("/.s.PGSQL.65535") >= 107 {
		sockets = ""
	}
	conf := fmt.Sprintf(`# Written by halocms (adapters/postgres/localcluster.go) at each start.
port = %d
listen_addresses = '127.0.0.1'
unix_socket_directories = %s
max_connections = 200
`, port, confString(sockets))
	if err := c.writeOwned(filepath.Join(c.data, "halocms.conf"), []byte(conf), 0o600); err != nil {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	return nil
}

func confString(s string) string {
	s = strings.ReplaceAll(s, `\`, `\\`)
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}
