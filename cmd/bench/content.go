package main

// The content phase: the content API over HTTP against the real server
// binary (see the package comment).

import (
	"bufio"
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Targets of the content phase.
const (
	targetContentImport = 5_000 // items/s through the batch endpoint
	targetContentP99    = 20    // ms, search p99
)

const (
	contentBatchSize    = 1000 // items per batch request
	contentWarmup       = 2 * time.Second
	contentSeed         = 0x5EED_C0DE
	contentPageLimit    = 20
	contentCategories   = 20
	contentBrands       = 50
	contentPublishedPct = 90
	contentReadyTimeout = 60 * time.Second
	contentLoginRetry   = 10 * time.Second
	contentStopTimeout  = 10 * time.Second
	contentVisibleWait  = 5 * time.Minute
	// contentRequestTimeout fails a measurement whose searches hang.
	contentRequestTimeout = 30 * time.Second

	searchPath = "/api/generalcontent/instance/search"
	batchPath  = "/api/generalcontent/instance/batch"
)

// The module's fields: name and field type id.
var contentFields = []struct{ name, typ string }{
	{"title", "000000000000000000000001"},
	{"category", "000000000000000000000001"},
	{"price", "000000000000000000000002"},
	{"releaseDate", "000000000000000000000006"},
	{"active", "000000000000000000000008"},
	{"body", "000000000000000000000012"},
	{"stock", "000000000000000000000002"},
	{"color", "000000000000000000000009"},
	{"url", "000000000000000000000003"},
	{"brand", "000000000000000000000001"},
}

// contentWords make the titles: two of them per title, so that a like on
// one matches about 4% of the items. None is a part of another or of
// "Product".
var contentWords = []string{
	"amber", "aspen", "basalt", "birch", "cedar", "cobalt", "coral", "delta", "dune", "ember",
	"falcon", "fjord", "garnet", "glacier", "harbor", "heron", "indigo", "iris", "jasper", "juniper",
	"kelp", "kestrel", "lagoon", "lotus", "meadow", "mistral", "nectar", "nimbus", "onyx", "orchid",
	"pebble", "pine", "quartz", "quill", "raven", "reef", "saffron", "sierra", "thistle", "tundra",
	"umber", "velvet", "vortex", "willow", "wren", "xenon", "yarrow", "yucca", "zephyr", "zinnia",
}

var loremWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
	incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris
	nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat
	nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum`)

var (
	releaseFrom   = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	releaseUntil  = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) // exclusive: release dates are in 2020..2026
	publishedFrom = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	publishedSpan = 2 * 365 * 24 * time.Hour // published in 2023..2024: always in the past
	windowMonths  = 6 * 12                   // (b)'s one-year windows start in 2020-01..2025-12
)

// ---- configuration ----

// contentSizeList parses -content-sizes, each size capped at
// -content-items: the item counts the queries are measured at.
func (c *config) contentSizeList() ([]int, error) {
	var out []int
	for _, s := range strings.Split(c.contentSizes, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-content-sizes %q: %q is not a positive number", c.contentSizes, s)
		}
		n = min(n, c.contentItems)
		if len(out) > 0 && n <= out[len(out)-1] {
			if n == out[len(out)-1] {
				continue
			}
			return nil, fmt.Errorf("-content-sizes %q: want increasing sizes", c.contentSizes)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("-content-sizes %q: want at least one size", c.contentSizes)
	}
	return out, nil
}

func (c *config) validateContent() error {
	if c.contentItems < 1 {
		return fmt.Errorf("-content-items %d: want at least 1", c.contentItems)
	}
	if c.contentClients < 1 || c.contentClients > 256 {
		return fmt.Errorf("-content-clients %d: want 1..256", c.contentClients)
	}
	if c.contentImporters < 1 || c.contentImporters > 64 {
		return fmt.Errorf("-content-importers %d: want 1..64", c.contentImporters)
	}
	if c.contentDuration <= 0 {
		return errors.New("-content-duration must be positive")
	}
	if _, err := regexp.Compile(c.contentSearches); err != nil {
		return fmt.Errorf("-content-searches: %w", err)
	}
	_, err := c.contentSizeList()
	return err
}

// sizeLabel is "10k" for 10000, "1.5M" for 1500000.
func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%100_000 == 0:
		return strconv.FormatFloat(float64(n)/1e6, 'f', -1, 64) + "M"
	case n >= 1000 && n%100 == 0:
		return strconv.FormatFloat(float64(n)/1e3, 'f', -1, 64) + "k"
	}
	return strconv.Itoa(n)
}

// ---- the phase ----

func contentPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	sizes, err := cfg.contentSizeList()
	if err != nil {
		return err
	}
	db, err := createDatabase(ctx, serverURL)
	if err != nil {
		return err
	}
	defer func() {
		if cfg.keep {
			progressf("kept database %s", db.name)
			return
		}
		if err := db.drop(); err != nil {
			progressf("could not drop database %s: %v", db.name, err)
		}
	}()
	pool, err := db.connect(ctx, 2)
	if err != nil {
		return err
	}
	defer pool.Close()
	var autovacuum string
	if err := pool.QueryRow(ctx, `SHOW autovacuum`).Scan(&autovacuum); err != nil {
		return err
	}
	res.header = append(res.header, fmt.Sprintf("content phase: database %s, autovacuum=%s (the content tables are VACUUMed and ANALYZEd after each import step)",
		db.name, autovacuum))

	tmp, err := os.MkdirTemp("", "cms-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	srv, password, err := launchServer(ctx, "content", tmp, databaseURL(serverURL, db.name))
	if err != nil {
		return err
	}
	defer srv.stop()
	defer func() {
		if err != nil {
			if tail := srv.logTail(40); tail != "" {
				err = fmt.Errorf("%w\nserver log (last lines):\n%s", err, tail)
			}
		}
	}()

	a := newCMSAPI(srv.base, cfg.contentClients)
	defer a.hc.CloseIdleConnections()
	admin, app, err := a.adminApp(ctx, password, "bench")
	if err != nil {
		return err
	}
	appToken, err := a.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {app.ClientID}, "client_secret": {app.ClientSecret}})
	if err != nil {
		return fmt.Errorf("app token: %w", err)
	}
	fields := make([]map[string]any, len(contentFields))
	for i, f := range contentFields {
		fields[i] = map[string]any{"name": f.name, "type": f.typ}
	}
	var module struct {
		ID string `json:"id"`
	}
	if err := a.call(ctx, http.MethodPost, "/api/generalcontent/module", admin,
		map[string]any{"app": app.ID, "name": "Products", "fields": fields}, 0, &module); err != nil {
		return fmt.Errorf("create module: %w", err)
	}
	if module.ID == "" {
		return errors.New("create module: answer without id")
	}
	progressf("content: signed in; app %s, module Products %s (%d fields)", app.ID, module.ID, len(contentFields))

	facts := make([]product, sizes[len(sizes)-1])
	have := 0
	for _, size := range sizes {
		label := sizeLabel(size)
		progressf("content: importing items %d..%d (batches of %d, %d concurrent); %d other active sessions on the server",
			have+1, size, contentBatchSize, cfg.contentImporters, otherSessions(ctx, pool))
		st, err := importItems(ctx, a, admin, module.ID, have, size, facts, cfg.contentImporters)
		if err != nil {
			return fmt.Errorf("import to %d items: %w", size, err)
		}
		t0 := time.Now()
		last, err := a.waitVisible(ctx, admin, module.ID, size)
		if err != nil {
			return err
		}
		visible := time.Since(t0)
		res.add(figure{name: "content import @" + label + ", items/s", value: st.rate(), unit: "items/s", target: targetContentImport,
			detail: st.String() + fmt.Sprintf("; a search (as admin, before VACUUM ANALYZE) counted all %d %s after the last answer, its own latency %s",
				size, visible.Round(time.Millisecond), last.Round(time.Millisecond))})
		have = size
		if err := analyzeContent(ctx, pool); err != nil {
			return err
		}
		if total, err := a.total(ctx, appToken, module.ID); err != nil {
			return fmt.Errorf("count the published items: %w", err)
		} else if want := countPublished(facts[:size]); total != want {
			return fmt.Errorf("the app token counts %d published items, %d of the %d imported are published", total, want, size)
		}

		if err := measureSearches(ctx, cfg, a, appToken, module.ID, facts[:size], label, srv, res); err != nil {
			return err
		}
		if sz, err := dbSize(ctx, pool); err == nil {
			progressf("content: database size at %d items: %s", size, sz)
		}
	}
	return nil
}

// analyzeContent VACUUMs and ANALYZEs the content projection's tables:
// fresh statistics and visibility maps (for index-only scans) after a bulk
// import, as autovacuum gives them sooner or later (if it is on), so that
// the figures do not depend on when it comes by. Without it the searches
// are several to a thousand times slower.
func analyzeContent(ctx context.Context, pool *pgxpool.Pool) error {
	rows, err := pool.Query(ctx, `SELECT format('%I.%I', n.nspname, c.relname) FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.relkind IN ('r', 'p') AND c.relname IN ('content_items', 'content_keys', 'content_fields', 'content_modules') ORDER BY 1`)
	if err != nil {
		return err
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return errors.New("no content tables found to VACUUM")
	}
	t0 := time.Now()
	if _, err := pool.Exec(ctx, "VACUUM (ANALYZE) "+strings.Join(tables, ", ")); err != nil {
		return fmt.Errorf("VACUUM (ANALYZE) %s: %w", strings.Join(tables, ", "), err)
	}
	progressf("content: VACUUM (ANALYZE) %s: %s", strings.Join(tables, ", "), time.Since(t0).Round(time.Millisecond))
	return nil
}

func countPublished(facts []product) int {
	n := 0
	for _, p := range facts {
		if p.published {
			n++
		}
	}
	return n
}

// ---- the server ----

// launchServer builds cms and serves the database at dbURL with it, its
// first admin "admin" with the returned password; env adds settings. Its
// progress lines start with phase.
func launchServer(ctx context.Context, phase, dir, dbURL string, env ...string) (*cmsServer, string, error) {
	bin, err := buildServer(ctx, phase, dir)
	if err != nil {
		return nil, "", err
	}
	password, err := randomHex(10)
	if err != nil {
		return nil, "", err
	}
	srv, err := startServer(ctx, phase, bin, dir, append([]string{
		"DATABASE_URL=" + dbURL,
		"CMS_ADMIN_USERNAME=admin",
		"CMS_ADMIN_PASSWORD=" + password,
		"CMS_BCRYPT_COST=4",
		"CMS_LOG_LEVEL=warn",
	}, env...))
	return srv, password, err
}

// buildServer builds ./cmd/cms of the module the bench runs in.
func buildServer(ctx context.Context, phase, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside a Go module: run the bench from the repository")
	}
	root := filepath.Dir(gomod)
	if _, err := os.Stat(filepath.Join(root, "cmd", "cms")); err != nil {
		return "", fmt.Errorf("no cmd/cms in %s: %w", root, err)
	}
	bin := filepath.Join(dir, "cms")
	progressf("%s: go build -o %s ./cmd/cms (in %s)", phase, bin, root)
	t0 := time.Now()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/cms")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/cms: %w\n%s", err, out)
	}
	progressf("%s: built in %s", phase, time.Since(t0).Round(100*time.Millisecond))
	return bin, nil
}

// databaseURL is serverURL with its database replaced by name.
func databaseURL(serverURL, name string) string {
	if strings.HasPrefix(serverURL, "postgres://") || strings.HasPrefix(serverURL, "postgresql://") {
		if u, err := url.Parse(serverURL); err == nil {
			u.Path, u.RawPath = "/"+name, ""
			return u.String()
		}
	}
	return serverURL + " dbname=" + name // keyword/value form: the last setting wins
}

type cmsServer struct {
	phase   string // of the bench, for progress lines
	cmd     *exec.Cmd
	base    string
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error
	once    sync.Once
}

// startServer starts `bin serve` on a free local port and waits until it
// is ready.
func startServer(ctx context.Context, phase, bin, dir string, env []string) (*cmsServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logPath := filepath.Join(dir, "cms.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CMS_HTTP_ADDR="+addr, "CMS_DATA_DIR="+filepath.Join(dir, "data"))
	cmd.Env = append(cmd.Env, env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", bin, err)
	}
	s := &cmsServer{phase: phase, cmd: cmd, base: "http://" + addr, logPath: logPath, done: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.done)
	}()
	progressf("%s: started the server (pid %d) on %s; waiting for /readyz", phase, cmd.Process.Pid, addr)
	t0 := time.Now()
	hc := &http.Client{Timeout: 2 * time.Second}
	deadline := time.NewTimer(contentReadyTimeout)
	defer deadline.Stop()
	for {
		resp, err := hc.Get(s.base + "/readyz")
		if err == nil {
			io.Copy(io.Discard, resp.Body) //nolint:errcheck
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				progressf("%s: server ready after %s", phase, time.Since(t0).Round(10*time.Millisecond))
				return s, nil
			}
		}
		select {
		case <-ctx.Done():
			s.stop()
			return nil, ctx.Err()
		case <-s.done:
			err := fmt.Errorf("the server exited before it was ready: %v\nserver log (last lines):\n%s", s.waitErr, s.logTail(40))
			return nil, err
		case <-deadline.C:
			s.stop()
			return nil, fmt.Errorf("the server was not ready after %s\nserver log (last lines):\n%s", contentReadyTimeout, s.logTail(40))
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop sends SIGTERM, then SIGKILL after contentStopTimeout, and waits for
// the process to end.
func (s *cmsServer) stop() {
	s.once.Do(func() {
		select {
		case <-s.done:
			return
		default:
		}
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(contentStopTimeout)
		defer t.Stop()
		select {
		case <-s.done:
			progressf("%s: server stopped", s.phase)
		case <-t.C:
			progressf("%s: server still running %s after SIGTERM: SIGKILL", s.phase, contentStopTimeout)
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}

// logTail returns the last n lines of the server's output.
func (s *cmsServer) logTail(n int) string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// cpuSeconds is the user+system CPU time the server process has used
// (Linux /proc; 0 elsewhere).
func (s *cmsServer) cpuSeconds() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// cpuTimes are the jiffies of all CPUs since boot (Linux /proc/stat):
// busy (user, nice, system, irq, softirq), stolen by the hypervisor, and
// all of them with idle and iowait.
type cpuTimes struct{ busy, steal, total float64 }

// machineCPU reads the machine's cpuTimes; zero when /proc/stat is not
// there.
func machineCPU() cpuTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTimes{}
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTimes{}
	}
	var t cpuTimes
	for i, v := range f[1:] {
		x, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already in user
			break
		}
		t.total += x
		switch i {
		case 3, 4: // idle, iowait
		case 7:
			t.steal += x
		default:
			t.busy += x
		}
	}
	return t
}

// since describes the machine's CPU between before and t: how busy it
// was, and how much the hypervisor took (steal: time a CPU of this
// machine was ready to run and another guest ran), which explains a
// slower run better than any figure of this program.
func (t cpuTimes) since(before cpuTimes) string {
	d := t.total - before.total
	if d <= 0 {
		return ""
	}
	return fmt.Sprintf(", machine %.0f%% busy of %d CPUs, %.0f%% stolen by the hypervisor",
		100*(t.busy-before.busy)/d, runtime.NumCPU(), 100*(t.steal-before.steal)/d)
}

func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := crand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// dbSize is the size of the bench database and of the content tables.
func dbSize(ctx context.Context, pool *pgxpool.Pool) (string, error) {
	var db, items, keys, fields string
	err := pool.QueryRow(ctx, `SELECT pg_size_pretty(pg_database_size(current_database())),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_items' AND c.relkind = 'r'), '?'),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_keys' AND c.relkind = 'r'), '?'),
		coalesce((SELECT pg_size_pretty(sum(pg_total_relation_size(c.oid))) FROM pg_class c WHERE c.relname = 'content_fields' AND c.relkind = 'r'), '?')`).
		Scan(&db, &items, &keys, &fields)
	return fmt.Sprintf("%s (content_items with indexes %s, content_keys with indexes %s, content_fields with indexes %s)", db, items, keys, fields), err
}

// ---- the HTTP client ----

type cmsAPI struct {
	base string
	hc   *http.Client
}

func newCMSAPI(base string, clients int) *cmsAPI {
	tr := &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        2*clients + 16,
		MaxIdleConnsPerHost: clients + 16,
		IdleConnTimeout:     90 * time.Second,
	}
	return &cmsAPI{base: base, hc: &http.Client{Transport: tr, Timeout: 5 * time.Minute}}
}

type statusError struct {
	method, path string
	status       int
	body         string
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s %s: status %d: %s", e.method, e.path, e.status, e.body)
}

// call sends body (nil, url.Values as a form, []byte as JSON, or a value
// to encode as JSON) and decodes the answer into out (nil: drop it;
// *[]byte: the raw body). want is the status expected; 0 takes any 2xx.
func (a *cmsAPI) call(ctx context.Context, method, path, token string, body any, want int, out any) error {
	var rd io.Reader
	ctype := ""
	switch b := body.(type) {
	case nil:
	case url.Values:
		rd, ctype = strings.NewReader(b.Encode()), "application/x-www-form-urlencoded"
	case []byte:
		rd, ctype = bytes.NewReader(b), "application/json"
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return err
		}
		rd, ctype = bytes.NewReader(j), "application/json"
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return err
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if (want == 0 && (resp.StatusCode < 200 || resp.StatusCode > 299)) || (want != 0 && resp.StatusCode != want) {
		return &statusError{method: method, path: path, status: resp.StatusCode, body: snippet(data, 500)}
	}
	switch o := out.(type) {
	case nil:
	case *[]byte:
		*o = data
	default:
		if err := json.Unmarshal(data, out); err != nil {
			return fmt.Errorf("%s %s: decode the answer: %w (%s)", method, path, err, snippet(data, 300))
		}
	}
	return nil
}

func snippet(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// token signs in, retrying for contentLoginRetry: users and apps reach
// the read model asynchronously. The retries back off: the server's login
// throttle locks an account for 15 minutes after 10 failures.
func (a *cmsAPI) token(ctx context.Context, form url.Values) (string, error) {
	start := time.Now()
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		err := a.call(ctx, http.MethodPost, "/api/oauth/token", "", form, http.StatusOK, &tok)
		if err == nil && tok.AccessToken == "" {
			err = errors.New("token answer without access_token")
		}
		if err == nil {
			if attempt > 1 {
				progressf("content: %s token after %d attempts, %s", form.Get("grant_type"), attempt, time.Since(start).Round(time.Millisecond))
			}
			return tok.AccessToken, nil
		}
		var se *statusError
		if errors.As(err, &se) && se.status == http.StatusTooManyRequests {
			return "", fmt.Errorf("locked out by the login throttle after %d attempts: %w", attempt, err)
		}
		if ctx.Err() != nil || time.Since(start)+wait > contentLoginRetry {
			return "", fmt.Errorf("after %d attempts in %s: %w", attempt, time.Since(start).Round(time.Millisecond), err)
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// benchApp is an app as POST /core-api/app answers it.
type benchApp struct {
	ID           string `json:"id"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// adminApp signs in as the bench's admin and creates an app named name;
// it returns the admin's token and the app.
func (a *cmsAPI) adminApp(ctx context.Context, password, name string) (string, benchApp, error) {
	var app benchApp
	admin, err := a.token(ctx, url.Values{"grant_type": {"password"}, "username": {"admin"}, "password": {password}})
	if err != nil {
		return "", app, fmt.Errorf("admin sign-in: %w", err)
	}
	if err := a.call(ctx, http.MethodPost, "/core-api/app", admin, map[string]any{"name": name}, 0, &app); err != nil {
		return "", app, fmt.Errorf("create app: %w", err)
	}
	if app.ID == "" || app.ClientID == "" || app.ClientSecret == "" {
		return "", app, fmt.Errorf("create app: answer without id, clientId or clientSecret: %+v", app)
	}
	return admin, app, nil
}

// total asks for the number of the module's items the token sees.
func (a *cmsAPI) total(ctx context.Context, token, module string) (int, error) {
	var page searchPage
	err := a.call(ctx, http.MethodPost, searchPath, token,
		map[string]any{"moduleIds": []string{module}, "pagination": map[string]any{"page": 1, "limit": 1, "skip": false}}, http.StatusOK, &page)
	return page.Pagination.TotalItems, err
}

// waitVisible waits until a search (as admin) counts n items in the module;
// last is how long that search took.
func (a *cmsAPI) waitVisible(ctx context.Context, admin, module string, n int) (last time.Duration, err error) {
	deadline := time.Now().Add(contentVisibleWait)
	for {
		t0 := time.Now()
		got, err := a.total(ctx, admin, module)
		last = time.Since(t0)
		if err != nil {
			return last, fmt.Errorf("count the items: %w", err)
		}
		if got == n {
			return last, nil
		}
		if got > n {
			return last, fmt.Errorf("search counts %d items, %d were imported", got, n)
		}
		if time.Now().After(deadline) {
			return last, fmt.Errorf("search counts %d items %s after the import of %d", got, contentVisibleWait, n)
		}
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// ---- the data ----

// product is what the checks need to know of an item.
type product struct {
	title     string
	category  int
	cents     int64 // price in hundredths
	release   int64 // ms
	published bool
}

type productValues struct {
	Title       string  `json:"title"`
	Category    string  `json:"category"`
	Price       float64 `json:"price"`
	ReleaseDate int64   `json:"releaseDate"`
	Active      bool    `json:"active"`
	Body        string  `json:"body"`
	Stock       int     `json:"stock"`
	Color       string  `json:"color"`
	URL         string  `json:"url"`
	Brand       string  `json:"brand"`
}

type productBody struct {
	Module      string        `json:"module"`
	Name        string        `json:"name"`
	Values      productValues `json:"values"`
	PublishedAt *int64        `json:"publishedAt,omitempty"`
}

func category(c int) string { return fmt.Sprintf("cat-%02d", c) }

// genProduct makes item n (1-based), the same on every run.
func genProduct(module string, n int) (productBody, product) {
	r := rand.New(rand.NewPCG(contentSeed, uint64(n)))
	p := product{
		title:    fmt.Sprintf("Product %d %s %s", n, contentWords[r.IntN(len(contentWords))], contentWords[r.IntN(len(contentWords))]),
		category: r.IntN(contentCategories),
		cents:    r.Int64N(10_000_001),
		release:  releaseFrom.UnixMilli() + r.Int64N(releaseUntil.UnixMilli()-releaseFrom.UnixMilli()),
	}
	var body strings.Builder
	for body.Len() < 300 {
		if body.Len() > 0 {
			body.WriteByte(' ')
		}
		body.WriteString(loremWords[r.IntN(len(loremWords))])
	}
	b := productBody{Module: module, Name: fmt.Sprintf("Product %d", n), Values: productValues{
		Title: p.title, Category: category(p.category), Price: float64(p.cents) / 100, ReleaseDate: p.release,
		Active: r.IntN(2) == 1, Body: body.String(), Stock: r.IntN(10_000),
		Color: fmt.Sprintf("#%06x", r.IntN(1<<24)), URL: fmt.Sprintf("https://example.com/p/%d", n),
		Brand: fmt.Sprintf("Brand %02d", r.IntN(contentBrands)),
	}}
	if r.IntN(100) < contentPublishedPct {
		at := publishedFrom.UnixMilli() + r.Int64N(publishedSpan.Milliseconds())
		b.PublishedAt = &at
		p.published = true
	}
	return b, p
}

// ---- the import ----

type importStats struct {
	items, batches int
	concurrent     int // batch requests at once
	elapsed        time.Duration
	latencies      []time.Duration // of the batch requests, sorted
	published      int
}

func (s importStats) rate() float64 { return rate(int64(s.items), s.elapsed) }

func (s importStats) String() string {
	pct := func(p float64) time.Duration {
		if len(s.latencies) == 0 {
			return 0
		}
		return s.latencies[int(p*float64(len(s.latencies)-1))]
	}
	return fmt.Sprintf("%d items (%d published) in %.2fs, %d batch requests of up to %d items, %d concurrent; batch latency p50 %s, max %s",
		s.items, s.published, s.elapsed.Seconds(), s.batches, contentBatchSize, s.concurrent,
		pct(0.5).Round(time.Millisecond), pct(1).Round(time.Millisecond))
}

type batchAnswer struct {
	Results struct {
		Total struct {
			Total, Success, Failure int
		} `json:"total"`
		Create struct {
			Success, Failure int
		} `json:"create"`
	} `json:"results"`
}

// importItems creates items from+1..to through the batch endpoint and
// records what they are in facts.
func importItems(ctx context.Context, a *cmsAPI, token, module string, from, to int, facts []product, importers int) (importStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type span struct{ from, to int }
	work := make(chan span)
	go func() {
		defer close(work)
		for s := from; s < to; s += contentBatchSize {
			select {
			case work <- span{s, min(s+contentBatchSize, to)}:
			case <-ctx.Done():
				return
			}
		}
	}()
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		firstErr  error
		lats      []time.Duration
		published int
		done      atomic.Int64
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	start := time.Now()
	go func() {
		defer close(progressDone)
		t := time.NewTicker(5 * time.Second)
		defer t.Stop()
		for {
			select {
			case <-stopProgress:
				return
			case <-t.C:
				d := done.Load()
				progressf("content import: %d/%d items, %s items/s", from+int(d), to, thousands(rate(d, time.Since(start))))
			}
		}
	}()
	for range importers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s := range work {
				items := make([]productBody, 0, s.to-s.from)
				pub := 0
				for n := s.from + 1; n <= s.to; n++ {
					b, p := genProduct(module, n)
					facts[n-1] = p
					if p.published {
						pub++
					}
					items = append(items, b)
				}
				body, err := json.Marshal(map[string]any{"created": items})
				if err != nil {
					fail(err)
					return
				}
				t0 := time.Now()
				var raw []byte
				if err := a.call(ctx, http.MethodPost, batchPath, token, body, http.StatusOK, &raw); err != nil {
					fail(fmt.Errorf("batch of items %d..%d: %w", s.from+1, s.to, err))
					return
				}
				lat := time.Since(t0)
				if err := checkBatch(raw, s.to-s.from); err != nil {
					fail(fmt.Errorf("batch of items %d..%d: %w", s.from+1, s.to, err))
					return
				}
				done.Add(int64(s.to - s.from))
				mu.Lock()
				lats = append(lats, lat)
				published += pub
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	close(stopProgress)
	<-progressDone
	if firstErr != nil {
		return importStats{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return importStats{}, err
	}
	slices.Sort(lats)
	return importStats{items: to - from, batches: len(lats), concurrent: importers, elapsed: elapsed, latencies: lats, published: published}, nil
}

// checkBatch checks that the batch answer says every create succeeded.
func checkBatch(raw []byte, n int) error {
	var ans batchAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return fmt.Errorf("decode the answer: %w (%s)", err, snippet(raw, 300))
	}
	r := ans.Results
	if r.Create.Success == n && r.Create.Failure == 0 && r.Total.Total == n && r.Total.Success == n && r.Total.Failure == 0 {
		return nil
	}
	msg := fmt.Sprintf("the answer counts %d/%d creates succeeded, %d failed (total %d/%d/%d)",
		r.Create.Success, n, r.Create.Failure, r.Total.Total, r.Total.Success, r.Total.Failure)
	var ops struct {
		Operations []struct {
			Position int             `json:"position"`
			Success  bool            `json:"success"`
			Data     json.RawMessage `json:"data"`
		} `json:"operations"`
	}
	if json.Unmarshal(raw, &ops) == nil {
		for _, op := range ops.Operations {
			if !op.Success {
				msg += fmt.Sprintf("; first failure at position %d: %s", op.Position, snippet(op.Data, 400))
				break
			}
		}
	}
	return errors.New(msg)
}

// ---- the queries ----

// contentQuery is one search: (a) category only, (b) also a like on the
// title and a one-year window of releaseDate; sorted by price desc.
type contentQuery struct {
	category int
	word     int   // (b): index into contentWords; -1 for (a)
	from, to int64 // (b): releaseDate window, both inclusive
	skip     bool  // pagination.skip
}

type searchOp struct {
	Condition string     `json:"condition,omitempty"`
	Operands  []searchOp `json:"operands,omitempty"`
	Operation string     `json:"operation,omitempty"`
	Property  string     `json:"property,omitempty"`
	Value     any        `json:"value,omitempty"`
	Type      string     `json:"type,omitempty"`
}

func (q contentQuery) body(module string) []byte {
	sv := searchOp{Operation: "=", Property: "category", Value: category(q.category), Type: "string"}
	if q.word >= 0 {
		sv = searchOp{Condition: "and", Operands: []searchOp{sv,
			{Operation: "like", Property: "title", Value: contentWords[q.word], Type: "string"},
			{Operation: ">=", Property: "releaseDate", Value: q.from, Type: "date"},
			{Operation: "<=", Property: "releaseDate", Value: q.to, Type: "date"},
		}}
	}
	b, err := json.Marshal(map[string]any{
		"moduleIds":    []string{module},
		"searchValues": sv,
		"sort":         "values.price desc",
		"pagination":   map[string]any{"page": 1, "limit": contentPageLimit, "skip": q.skip},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// matches: would an app token find p?
func (q contentQuery) matches(p product) bool {
	if !p.published || p.category != q.category {
		return false
	}
	if q.word < 0 {
		return true
	}
	return strings.Contains(strings.ToLower(p.title), contentWords[q.word]) && p.release >= q.from && p.release <= q.to
}

func (q contentQuery) String() string {
	s := category(q.category)
	if q.word >= 0 {
		s += fmt.Sprintf(", title like %q, releaseDate %s..%s", contentWords[q.word],
			time.UnixMilli(q.from).UTC().Format("2006-01-02"), time.UnixMilli(q.to).UTC().Format("2006-01-02"))
	}
	return s
}

// queriesA: the 20 categories in turn.
func queriesA(skip bool) []contentQuery {
	qs := make([]contentQuery, contentCategories)
	for c := range qs {
		qs[c] = contentQuery{category: c, word: -1, skip: skip}
	}
	return qs
}

// queriesB: category, word and window vary per request; the list starts
// with a query that finds items in facts (the checked one).
func queriesB(facts []product) []contentQuery {
	const n = 1800 // lcm of 20 categories, 50 words, 72 windows
	qs := make([]contentQuery, n)
	for i := range qs {
		start := releaseFrom.AddDate(0, (i*11)%windowMonths, 0)
		qs[i] = contentQuery{category: i % contentCategories, word: (i * 7) % len(contentWords),
			from: start.UnixMilli(), to: start.AddDate(1, 0, 0).UnixMilli() - 1}
	}
	for i, q := range qs {
		if slices.ContainsFunc(facts, q.matches) {
			return append(qs[i:], qs[:i]...)
		}
	}
	return qs
}

type searchItem struct {
	ID          string `json:"id"`
	PublishedAt *int64 `json:"publishedAt"`
	Values      struct {
		Title       string  `json:"title"`
		Category    string  `json:"category"`
		Price       float64 `json:"price"`
		ReleaseDate float64 `json:"releaseDate"`
	} `json:"values"`
}

type searchPage struct {
	Pagination struct {
		TotalItems int `json:"totalItems"`
	} `json:"pagination"`
	Items []searchItem `json:"items"`
}

// checkQuery runs q once and compares the answer with what facts say it
// must be: 200, the total, the top items by price desc, each a match.
func checkQuery(ctx context.Context, a *cmsAPI, token, module string, q contentQuery, facts []product) (string, error) {
	var want []int64
	for _, p := range facts {
		if q.matches(p) {
			want = append(want, p.cents)
		}
	}
	slices.Sort(want)
	slices.Reverse(want)
	total := len(want)
	if total == 0 {
		return "", fmt.Errorf("query %s: no imported item matches it (a bench bug)", q)
	}
	var raw []byte
	if err := a.call(ctx, http.MethodPost, searchPath, token, q.body(module), http.StatusOK, &raw); err != nil {
		return "", err
	}
	var items []searchItem
	if q.skip {
		if err := json.Unmarshal(raw, &items); err != nil {
			return "", fmt.Errorf("query %s with skip: want an array of items: %w (%s)", q, err, snippet(raw, 300))
		}
	} else {
		var page searchPage
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", fmt.Errorf("query %s: %w (%s)", q, err, snippet(raw, 300))
		}
		if page.Pagination.TotalItems != total {
			return "", fmt.Errorf("query %s: totalItems %d, want %d", q, page.Pagination.TotalItems, total)
		}
		items = page.Items
		want = want[:min(len(want), contentPageLimit)]
	}
	if len(items) == 0 {
		return "", fmt.Errorf("query %s: no items (%d match)", q, total)
	}
	if q.skip && len(items) < len(want) {
		want = want[:len(items)] // the server caps an unpaginated answer
	}
	if len(items) != len(want) {
		return "", fmt.Errorf("query %s: %d items, want %d", q, len(items), len(want))
	}
	now := time.Now().UnixMilli()
	for i, it := range items {
		switch {
		case it.Values.Price != float64(want[i])/100:
			return "", fmt.Errorf("query %s: item %d (%s) has price %v, want %v (sorted by price desc)", q, i, it.ID, it.Values.Price, float64(want[i])/100)
		case it.Values.Category != category(q.category):
			return "", fmt.Errorf("query %s: item %s has category %q", q, it.ID, it.Values.Category)
		case it.PublishedAt == nil || *it.PublishedAt > now:
			return "", fmt.Errorf("query %s: item %s is not published, an app token sees it", q, it.ID)
		case q.word >= 0 && !strings.Contains(strings.ToLower(it.Values.Title), contentWords[q.word]):
			return "", fmt.Errorf("query %s: item %s has title %q", q, it.ID, it.Values.Title)
		case q.word >= 0 && (int64(it.Values.ReleaseDate) < q.from || int64(it.Values.ReleaseDate) > q.to):
			return "", fmt.Errorf("query %s: item %s has releaseDate %v", q, it.ID, it.Values.ReleaseDate)
		}
	}
	return fmt.Sprintf("checked %s: %d of %d matches, %d bytes", q, len(items), total, len(raw)), nil
}

// searchWriter posts the bodies in turn (shared by all clients) and
// wants 200 each time.
func searchWriter(a *cmsAPI, token string, bodies [][]byte, noCache bool, next *atomic.Uint64, received *atomic.Int64) writer {
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, contentRequestTimeout)
		defer cancel()
		body := bodies[(next.Add(1)-1)%uint64(len(bodies))]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.base+searchPath, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+token)
		if noCache {
			req.Header.Set("Cache-Control", "no-cache")
		}
		resp, err := a.hc.Do(req)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fmt.Errorf("a search took longer than %s (%s)", contentRequestTimeout, body)
		}
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
			return &statusError{method: http.MethodPost, path: searchPath, status: resp.StatusCode, body: snippet(b, 500)}
		}
		n, err := io.Copy(io.Discard, resp.Body)
		received.Add(n)
		return err
	}
}

// measureSearches checks and then measures (a), (a) with skip and (b)
// with the app token: as served (the answer cache on, as it is by
// default), and (a) and (b) once more with Cache-Control: no-cache, so
// that every search runs in PostgreSQL. (a) cycles through 20 bodies, (b)
// through 1,800.
func measureSearches(ctx context.Context, cfg config, a *cmsAPI, token, module string, facts []product, label string,
	srv *cmsServer, res *results) error {
	kinds := []struct {
		name    string
		queries []contentQuery
		target  bool
		noCache bool
	}{
		{"(a)", queriesA(false), true, false},
		{"(a) no-cache", queriesA(false), false, true},
		{"(a) skip:true", queriesA(true), false, false},
		{"(b)", queriesB(facts), true, false},
		{"(b) no-cache", queriesB(facts), false, true},
	}
	only := regexp.MustCompile(cfg.contentSearches) // checked by validateContent
	for _, k := range kinds {
		if !only.MatchString(k.name) {
			continue
		}
		checked, err := checkQuery(ctx, a, token, module, k.queries[0], facts)
		if err != nil {
			return fmt.Errorf("search %s @%s: %w", k.name, label, err)
		}
		bodies := make([][]byte, len(k.queries))
		for i, q := range k.queries {
			bodies[i] = q.body(module)
		}
		var next atomic.Uint64
		var received atomic.Int64
		writers := make([]writer, cfg.contentClients)
		for i := range writers {
			writers[i] = searchWriter(a, token, bodies, k.noCache, &next, &received)
		}
		progressf("content: search %s @%s: %d clients, %s (+%s warm-up); %s", k.name, label, cfg.contentClients, cfg.contentDuration, contentWarmup, checked)
		srvCPU0, selfCPU0 := srv.cpuSeconds(), selfCPUSeconds()
		mach0 := machineCPU()
		t0 := time.Now()
		st, err := measure(ctx, writers, contentWarmup, cfg.contentDuration)
		if err != nil {
			return fmt.Errorf("search %s @%s: %w", k.name, label, err)
		}
		wall := time.Since(t0).Seconds()
		cpu := fmt.Sprintf("; CPU during the run (incl. warm-up): server %.2f cores, bench client %.2f cores%s",
			(srv.cpuSeconds()-srvCPU0)/wall, (selfCPUSeconds()-selfCPU0)/wall, machineCPU().since(mach0))
		reqs := int64(next.Load())
		detail := fmt.Sprintf("%d requests in %s by %d clients (%s req/s); latency p50 %s, p99 %s, max %s; %s bytes/answer on average; %s%s",
			st.ops, cfg.contentDuration, cfg.contentClients, thousands(st.rate()),
			ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)), thousands(float64(received.Load())/float64(max(reqs, 1))), checked, cpu)
		name := "search " + k.name + " @" + label
		p99 := figure{name: name + " p99 ms", value: float64(st.pct(0.99)) / float64(time.Millisecond), unit: "ms", decimals: 1, detail: detail}
		if k.target {
			p99.target, p99.atMost = targetContentP99, true
		}
		res.add(p99)
		if k.target || k.noCache {
			res.add(figure{name: name + " req/s", value: st.rate(), unit: "req/s",
				detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})
		}
	}
	return nil
}

func ms2(d time.Duration) string {
	return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 2, 64) + "ms"
}
