package postgres

// The local PostgreSQL used by `make run`, `make test` and `go run ./cmd/devdb`
// when DATABASE_URL is not set.
//
// EnsureServer first looks for a server that already answers on this machine
// (127.0.0.1:5432 and the Debian socket directory /var/run/postgresql, as the
// `postgres` role and as a role named like the OS user, without a password).
// If none does, it runs a private cluster with the machine's own PostgreSQL
// binaries, laid out like this:
//
//	<dataDir>/pg.lock        flock(2) lock: one process at a time sets up or stops the cluster
//	<dataDir>/pg/            cluster directory (owned by the user the server runs as)
//	<dataDir>/pg/data/       PGDATA (initdb: UTF8, superuser "postgres", trust auth on
//	                         local socket and loopback only; listens on 127.0.0.1 only)
//	<dataDir>/pg/port        the TCP port, reused on later starts while it stays free
//	<dataDir>/pg/server.log  the server's log
//	<dataDir>/pg/.s.PGSQL.N  the unix socket (left out if the path would be too long)
//
// PostgreSQL refuses to run as root. When this process is root, initdb and
// pg_ctl run as the `postgres` OS user if there is one, else as a system user
// `cmsdb` created with useradd, through runuser (or su). If that user cannot
// reach <dataDir> (for example a checkout under /root, which is mode 0700), the
// cluster directory goes to /var/lib/halocms-devdb/<hash of dataDir> instead,
// and <dataDir>/pg.location names it.
//
// Environment:
//
//	CMS_FORCE_PRIVATE_PG=1  skip the probe for a local server and always use the
//	                        private cluster (tests of this file, CI checks).
//	CMS_PG_BINDIR=DIR       use the PostgreSQL binaries in DIR (initdb, pg_ctl, postgres).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	forcePrivateEnv = "CMS_FORCE_PRIVATE_PG"
	binDirEnv       = "CMS_PG_BINDIR"
	// fallbackRoot holds clusters whose dataDir the server's OS user cannot
	// reach (root only).
	fallbackRoot = "/var/lib/halocms-devdb"
	// dbUserName is the OS user created to run the cluster when this process
	// is root and there is no `postgres` user.
	dbUserName = "cmsdb"
	superuser  = "postgres"
)

// EnsureServer returns the URL of a PostgreSQL server that answers: a local
// one if there is, otherwise a private cluster under dataDir, which it
// creates and starts if needed. log may be nil.
func EnsureServer(ctx context.Context, dataDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if !envTrue(os.Getenv(forcePrivateEnv)) {
		if url, ok := probeLocal(ctx, log); ok {
			return url, nil
		}
	}
	return startPrivate(ctx, dataDir, log)
}

// StopLocalCluster stops the private cluster under dataDir (pg_ctl stop -m
// fast), if there is one and it runs. It leaves the data in place.
func StopLocalCluster(dataDir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return nil // nothing there
	}
	unlock, err := lockDir(ctx, abs)
	if err != nil {
		return err
	}
	defer unlock()
	root := existingClusterDir(abs)
	if root == "" {
		return nil
	}
	c := &cluster{root: root, data: filepath.Join(root, "data")}
	if _, err := os.Stat(filepath.Join(c.data, "postmaster.pid")); err != nil {
		return nil
	}
	if err := c.setOwner(false); err != nil {
		return err
	}
	if err := c.findBinaries(); err != nil {
		return err
	}
	out, err := c.run(ctx, "pg_ctl", "stop", "-D", c.data, "-m", "fast", "-w", "-t", "60")
	if err != nil {
		if running, _ := c.running(ctx); !running {
			return nil // stale postmaster.pid
		}
		return fmt.Errorf("pg_ctl stop: %w: %s", err, out)
	}
	return nil
}

func envTrue(v string) bool {
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// ---- probing for a server that already runs ----

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

// ---- the private cluster ----

type cluster struct {
	root   string     // cluster directory: data/, port, server.log, socket
	data   string     // PGDATA
	owner  *user.User // OS user the server runs as; nil: this process's user
	uid    int
	gid    int
	bindir string
	major  string // major version of the binaries in bindir
}

func privateURL(port int) string {
	return fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres?sslmode=disable", superuser, port)
}

// startPrivate returns the URL of the private cluster under dataDir, setting
// it up and starting it if needed (never probing for another server).
func startPrivate(ctx context.Context, dataDir string, log *slog.Logger) (string, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(dataDir)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return "", fmt.Errorf("private PostgreSQL: %w", err)
	}
	unlock, err := lockDir(ctx, abs)
	if err != nil {
		return "", err
	}
	defer unlock()

	c := &cluster{}
	if root := existingClusterDir(abs); root != "" {
		c.root = root
		c.data = filepath.Join(root, "data")
		if err := c.setOwner(true); err != nil {
			return "", err
		}
	} else {
		if err := c.setOwner(true); err != nil {
			return "", err
		}
		if err := c.chooseDir(ctx, abs, log); err != nil {
			return "", err
		}
	}
	if err := c.findBinaries(); err != nil {
		return "", err
	}

	if _, err := os.Stat(filepath.Join(c.data, "PG_VERSION")); err != nil {
		if err := c.initdb(ctx, log); err != nil {
			return "", err
		}
	}

	// Already running (another process started it, or an earlier run)?
	if running, _ := c.running(ctx); running {
		port := c.pidFilePort()
		if port == 0 {
			port = c.readPort()
		}
		if port != 0 {
			if err := waitReady(ctx, privateURL(port), 30*time.Second); err == nil {
				log.Debug("postgres: private cluster already running", "dir", c.root, "port", port)
				return privateURL(port), nil
			}
		}
		// Running but not answering where we expect: restart it.
		log.Warn("postgres: private cluster runs but does not answer; restarting", "dir", c.root)
		if out, err := c.run(ctx, "pg_ctl", "stop", "-D", c.data, "-m", "fast", "-w", "-t", "60"); err != nil {
			return "", fmt.Errorf("private PostgreSQL in %s runs but does not answer, and stopping it failed: %w: %s", c.root, err, out)
		}
	}

	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := c.readPort()
		if port == 0 || !portFree(port) {
			if port, err = freePort(); err != nil {
				return "", err
			}
		}
		if err := c.writeConfig(port); err != nil {
			return "", err
		}
		log.Info("postgres: starting private cluster", "dir", c.root, "port", port, "bindir", c.bindir)
		out, err := c.run(ctx, "pg_ctl", "start", "-D", c.data, "-l", filepath.Join(c.root, "server.log"), "-w", "-t", "60")
		if err != nil {
			lastErr = fmt.Errorf("pg_ctl start: %w: %s\n%s", err, bytes.TrimSpace(out), c.logTail())
			if ctx.Err() != nil {
				break
			}
			if portFree(port) {
				break // not a port clash: retrying will not help
			}
			continue // someone took the port meanwhile: try another
		}
		url := privateURL(port)
		if err := waitReady(ctx, url, 30*time.Second); err != nil {
			return "", fmt.Errorf("private PostgreSQL started in %s but does not accept connections: %w\n%s", c.root, err, c.logTail())
		}
		return url, nil
	}
	return "", fmt.Errorf("private PostgreSQL in %s: %w", c.root, lastErr)
}

// lockDir takes an exclusive flock on <dir>/pg.lock, waiting for it as long
// as ctx allows.
func lockDir(ctx context.Context, dir string) (func(), error) {
	path := filepath.Join(dir, "pg.lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("private PostgreSQL: lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("private PostgreSQL: lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("private PostgreSQL: waiting for lock %s: %w", path, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func fallbackDir(abs string) string {
	h := sha256.Sum256([]byte(abs))
	return filepath.Join(fallbackRoot, hex.EncodeToString(h[:])[:16])
}

// existingClusterDir returns the cluster directory for dataDir if a cluster
// was created there (or in its fallback location), else "".
func existingClusterDir(abs string) string {
	for _, root := range []string{filepath.Join(abs, "pg"), fallbackDir(abs)} {
		if _, err := os.Stat(filepath.Join(root, "data", "PG_VERSION")); err == nil {
			return root
		}
	}
	return ""
}

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

// chooseDir picks where a new cluster goes: <abs>/pg, unless the server's OS
// user cannot reach it (root running from a checkout the user cannot
// traverse), then the fallback directory.
func (c *cluster) chooseDir(ctx context.Context, abs string, log *slog.Logger) error {
	primary := filepath.Join(abs, "pg")
	if err := c.mkdirOwned(primary); err != nil {
		return err
	}
	if c.owner == nil {
		c.root, c.data = primary, filepath.Join(primary, "data")
		return nil
	}
	if out, err := c.run(ctx, "test", "-w", primary); err == nil {
		c.root, c.data = primary, filepath.Join(primary, "data")
		return nil
	} else if ctx.Err() != nil {
		return fmt.Errorf("private PostgreSQL: %w: %s", err, out)
	}
	fb := fallbackDir(abs)
	log.Warn("postgres: the server's OS user cannot reach the data directory; putting the cluster elsewhere",
		"user", c.owner.Username, "unreachable", primary, "cluster", fb)
	_ = os.Remove(primary) // only if still empty
	if err := os.MkdirAll(fallbackRoot, 0o755); err != nil {
		return fmt.Errorf("private PostgreSQL: %s (as %s) cannot reach %s, and %w",
			c.owner.Username, c.owner.Username, primary, err)
	}
	_ = os.Chmod(fallbackRoot, 0o755)
	if err := c.mkdirOwned(fb); err != nil {
		return err
	}
	if out, err := c.run(ctx, "test", "-w", fb); err != nil {
		return fmt.Errorf("private PostgreSQL: OS user %s can reach neither %s nor %s (make their parent directories traversable, e.g. chmod o+x, or set DATABASE_URL): %v: %s",
			c.owner.Username, primary, fb, err, out)
	}
	note := fmt.Sprintf("The private PostgreSQL cluster for this directory lives in\n%s\nbecause OS user %s cannot reach %s.\n",
		fb, c.owner.Username, primary)
	_ = os.WriteFile(filepath.Join(abs, "pg.location"), []byte(note), 0o644)
	c.root, c.data = fb, filepath.Join(fb, "data")
	return nil
}

// mkdirOwned creates dir (mode 0700) and gives it to the server's OS user.
func (c *cluster) mkdirOwned(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("private PostgreSQL: %w", err)
	}
	if c.owner != nil {
		if err := os.Chown(dir, c.uid, c.gid); err != nil {
			return fmt.Errorf("private PostgreSQL: %w", err)
		}
	}
	return nil
}

// writeOwned writes a file and gives it to the server's OS user.
func (c *cluster) writeOwned(path string, data []byte, mode os.FileMode) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	if c.owner != nil {
		if err := os.Chown(tmp, c.uid, c.gid); err != nil {
			os.Remove(tmp)
			return err
		}
	}
	return os.Rename(tmp, path)
}

// ---- binaries ----

type pgBin struct {
	dir     string
	version []int
	major   string
}

// findBinaries picks the directory with initdb, pg_ctl and postgres: the one
// whose major version matches an existing cluster, else the newest.
func (c *cluster) findBinaries() error {
	want := ""
	if b, err := os.ReadFile(filepath.Join(c.data, "PG_VERSION")); err == nil {
		want = strings.TrimSpace(string(b))
	}
	bins, looked := candidateBinDirs()
	if len(bins) == 0 {
		return fmt.Errorf("private PostgreSQL: no PostgreSQL server binaries (initdb, pg_ctl, postgres) found in %s; "+
			"install them (Debian/Ubuntu: apt-get install postgresql), set %s, or set DATABASE_URL",
			strings.Join(looked, ", "), binDirEnv)
	}
	if want == "" {
		c.bindir, c.major = bins[0].dir, bins[0].major
		return nil
	}
	var have []string
	for _, b := range bins {
		if b.major == want {
			c.bindir, c.major = b.dir, b.major
			return nil
		}
		have = append(have, b.major+" ("+b.dir+")")
	}
	return fmt.Errorf("private PostgreSQL: the cluster in %s is version %s but only these binaries were found: %s; "+
		"install PostgreSQL %s or remove %s to start afresh", c.root, want, strings.Join(have, ", "), want, c.root)
}

func candidateBinDirs() ([]pgBin, []string) {
	var dirs []string
	if d := os.Getenv(binDirEnv); d != "" {
		dirs = append(dirs, d)
	}
	if pgc, err := exec.LookPath("pg_config"); err == nil {
		if out, err := exec.Command(pgc, "--bindir").Output(); err == nil {
			dirs = append(dirs, strings.TrimSpace(string(out)))
		}
	}
	for _, name := range []string{"initdb", "pg_ctl"} {
		if p, err := exec.LookPath(name); err == nil {
			if r, err := filepath.EvalSymlinks(p); err == nil {
				p = r
			}
			dirs = append(dirs, filepath.Dir(p))
		}
	}
	for _, pat := range []string{
		"/usr/lib/postgresql/*/bin", // Debian, Ubuntu
		"/usr/pgsql-*/bin",          // PGDG RPMs
		"/usr/local/pgsql/bin",      // source builds
		"/opt/homebrew/opt/postgresql*/bin",
		"/usr/local/opt/postgresql*/bin",
	} {
		m, _ := filepath.Glob(pat)
		dirs = append(dirs, m...)
	}
	seen := map[string]bool{}
	var bins []pgBin
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if seen[d] {
			continue
		}
		seen[d] = true
		if !isExec(filepath.Join(d, "initdb")) || !isExec(filepath.Join(d, "pg_ctl")) || !isExec(filepath.Join(d, "postgres")) {
			continue
		}
		out, err := exec.Command(filepath.Join(d, "pg_ctl"), "--version").Output()
		if err != nil {
			continue
		}
		v, major := parseVersion(string(out))
		if v == nil {
			continue
		}
		bins = append(bins, pgBin{dir: d, version: v, major: major})
	}
	sort.SliceStable(bins, func(i, j int) bool {
		a, b := bins[i].version, bins[j].version
		for k := 0; k < len(a) && k < len(b); k++ {
			if a[k] != b[k] {
				return a[k] > b[k]
			}
		}
		return len(a) > len(b)
	})
	return bins, dirs
}

func isExec(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// parseVersion reads "pg_ctl (PostgreSQL) 15.13 (Debian 15.13-0+deb12u1)"
// and returns [15 13] and the major version as PG_VERSION spells it ("15",
// or "9.6" before version 10).
func parseVersion(s string) ([]int, string) {
	i := strings.Index(s, "(PostgreSQL)")
	if i < 0 {
		return nil, ""
	}
	fields := strings.Fields(s[i+len("(PostgreSQL)"):])
	if len(fields) == 0 {
		return nil, ""
	}
	var v []int
	for _, part := range strings.Split(fields[0], ".") {
		n := 0
		digits := 0
		for _, r := range part {
			if r < '0' || r > '9' {
				break
			}
			n = n*10 + int(r-'0')
			digits++
		}
		if digits == 0 {
			break
		}
		v = append(v, n)
		if digits != len(part) { // "16beta1"
			break
		}
	}
	if len(v) == 0 {
		return nil, ""
	}
	major := strconv.Itoa(v[0])
	if v[0] < 10 && len(v) > 1 {
		major += "." + strconv.Itoa(v[1])
	}
	return v, major
}

// ---- running commands as the server's OS user ----

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

// ---- initdb, configuration, ports ----

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

func (c *cluster) readPort() int {
	b, err := os.ReadFile(filepath.Join(c.root, "port"))
	if err != nil {
		return 0
	}
	p, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || p <= 0 || p > 65535 {
		return 0
	}
	return p
}

// pidFilePort reads the port from postmaster.pid (its fourth line).
func (c *cluster) pidFilePort() int {
	f, err := os.Open(filepath.Join(c.data, "postmaster.pid"))
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for i := 1; s.Scan(); i++ {
		if i == 4 {
			p, _ := strconv.Atoi(strings.TrimSpace(s.Text()))
			return p
		}
	}
	return 0
}

func (c *cluster) logTail() string {
	b, err := os.ReadFile(filepath.Join(c.root, "server.log"))
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return "server.log:\n" + strings.Join(lines, "\n")
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("private PostgreSQL: no free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until url accepts connections and answers a query.
func waitReady(ctx context.Context, url string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var err error
	for {
		var conn *pgx.Conn
		cctx, ccancel := context.WithTimeout(ctx, 3*time.Second)
		conn, err = pgx.Connect(cctx, url)
		if err == nil {
			_, err = conn.Exec(cctx, "SELECT 1")
			conn.Close(context.WithoutCancel(cctx))
		}
		ccancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// DefaultDataDir is $CMS_DATA_DIR, else .data in the nearest directory
// upwards that holds go.mod (the repository root), else ./.data: the
// Makefile, cmd/devdb, the tests and the benchmarks agree on one cluster.
func DefaultDataDir() string {
	if d := os.Getenv("CMS_DATA_DIR"); d != "" {
		return d
	}
	wd, err := os.Getwd()
	if err != nil {
		return ".data"
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, ".data")
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, ".data")
		}
	}
}
