package postgres

// Finding the machine's PostgreSQL binaries (initdb, pg_ctl, postgres)
// for the private cluster.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

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
