package postgres

// The server's OS user: who runs the private cluster, and running its
// binaries as that user.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// setOwner decides which OS user runs the server. Not root: this process's
// user. Root: the owner of an existing PGDATA, else `postgres`, else cmsdb
// (created if create is set).
func (c *cluster) setOwner(create bool) error {
	if os.Geteuid() != 0 {
		return nil
	}
	var u *user.User
	if c.data != "" {
		if st, err := os.Stat(c.data); err == nil {
			if sys, ok := st.Sys().(*syscall.Stat_t); ok && sys.Uid != 0 {
				u, _ = user.LookupId(strconv.Itoa(int(sys.Uid)))
			}
		}
	}
	if u == nil {
		u, _ = user.Lookup(superuser)
	}
	if u == nil {
		u, _ = user.Lookup(dbUserName)
	}
	if u == nil {
		if !create {
			return errors.New("private PostgreSQL: running as root and no postgres or " + dbUserName + " OS user to run pg_ctl as")
		}
		useradd, err := exec.LookPath("useradd")
		if err != nil {
			return errors.New("private PostgreSQL: PostgreSQL will not run as root, there is no postgres OS user, and useradd is missing to create " + dbUserName)
		}
		out, err := exec.Command(useradd, "--system", "--user-group", "--no-create-home",
			"--home-dir", "/nonexistent", "--shell", "/usr/sbin/nologin", dbUserName).CombinedOutput()
		u, _ = user.Lookup(dbUserName) // another process may have created it meanwhile
		if u == nil {
			return fmt.Errorf("private PostgreSQL: useradd %s: %v: %s", dbUserName, err, out)
		}
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return fmt.Errorf("private PostgreSQL: OS user %s has a non-numeric uid/gid", u.Username)
	}
	if uid == 0 {
		return fmt.Errorf("private PostgreSQL: OS user %s is root; PostgreSQL will not run as root", u.Username)
	}
	c.owner, c.uid, c.gid = u, uid, gid
	return nil
}

// run runs a PostgreSQL binary from bindir (or, for "test", /usr/bin/test)
// as the server's OS user and returns its combined output.
func (c *cluster) run(ctx context.Context, name string, args ...string) ([]byte, error) {
	bin := name
	if name != "test" {
		bin = filepath.Join(c.bindir, name)
	} else if p, err := exec.LookPath("test"); err == nil {
		bin = p
	}
	var cmd *exec.Cmd
	switch {
	case c.owner == nil:
		cmd = exec.CommandContext(ctx, bin, args...)
	default:
		if ru, err := exec.LookPath("runuser"); err == nil {
			cmd = exec.CommandContext(ctx, ru, append([]string{"-u", c.owner.Username, "--", bin}, args...)...)
		} else if su, err := exec.LookPath("su"); err == nil {
			// su -s /bin/sh USER -- -c 'exec "$0" "$@"' BIN ARGS... (util-linux
			// su hands what follows USER to the shell).
			cmd = exec.CommandContext(ctx, su, append([]string{"-s", "/bin/sh", c.owner.Username, "--", "-c", `exec "$0" "$@"`, bin}, args...)...)
		} else {
			return nil, errors.New("private PostgreSQL: running as root, and neither runuser nor su is there to run PostgreSQL as " + c.owner.Username)
		}
	}
	// A directory the server's user can enter (initdb and pg_ctl complain
	// otherwise), when there is one yet.
	if c.root != "" {
		if _, err := os.Stat(c.root); err == nil {
			cmd.Dir = c.root
		}
	}
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	// PG* variables (PGDATA, PGPORT, ...) of the caller must not steer the
	// tools; use a neutral locale for their messages.
	env := []string{"LC_ALL=C"}
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		env = append(env, kv)
	}
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 5 * time.Second // the postmaster must not hold our pipes open
	return cmd.CombinedOutput()
}

// running reports whether the cluster's postmaster runs (pg_ctl status).
func (c *cluster) running(ctx context.Context) (bool, error) {
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err != nil {
		return false, nil
	}
	_, err := c.run(ctx, "pg_ctl", "status", "-D", c.data)
	if err == nil {
		return true, nil
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 3 {
		return false, nil
	}
	return false, err
}
