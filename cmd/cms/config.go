package main

import (
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/identity"
)

// Config is read from the environment; every variable has a documented
// default (README, "Configuration").
type Config struct {
	DatabaseURL     string         // DATABASE_URL; empty: local server or private cluster
	HTTPAddr        string         // CMS_HTTP_ADDR, default ":8080"
	AdminUsername   string         // CMS_ADMIN_USERNAME, default "admin"
	AdminPassword   string         // CMS_ADMIN_PASSWORD, default: generated and printed once
	DataDir         string         // CMS_DATA_DIR, default "./.data"
	TrustedProxies  []netip.Prefix // CMS_TRUSTED_PROXIES, comma-separated CIDRs, default none
	AccessTokenTTL  time.Duration  // CMS_ACCESS_TOKEN_TTL, default 24h
	RefreshTokenTTL time.Duration  // CMS_REFRESH_TOKEN_TTL, default 720h
	BcryptCost      int            // CMS_BCRYPT_COST, default 12
	ReadYourWrites  time.Duration  // CMS_READ_YOUR_WRITES_TIMEOUT, default 2s
	TokenCacheTTL   time.Duration  // CMS_TOKEN_CACHE_TTL, default 10s; 0 reads every token from the table
	LogLevel        string         // CMS_LOG_LEVEL: debug, info, warn, error (default info)
	ShutdownTimeout time.Duration  // CMS_SHUTDOWN_TIMEOUT, default 15s
	SearchCache     int            // CMS_SEARCH_CACHE_ENTRIES, default 1024; 0 there turns the search answer cache off, which is -1 here
	ReadConcurrency int            // CMS_READ_CONCURRENCY, default 2 × GOMAXPROCS; 0: no bound
	SearchIndex     int            // CMS_SEARCH_INDEX_ITEMS, default 250000: items of searched modules kept in memory; 0: none
	SearchTimeout   time.Duration  // CMS_SEARCH_TIMEOUT, default 10s: a content search that takes longer is stopped (503)
	Push            PushConfig     // CMS_PUSH_*, CMS_FCM_*, CMS_APNS_*
	Loyalty         LoyaltyConfig  // CMS_LOYALTY_*
	Live            LiveConfig     // CMS_LIVE_*
	Media           MediaConfig    // CMS_MEDIA_*, CMS_PUBLIC_URL
}

// LiveConfig bounds the live streams of content changes
// (GET /api/generalcontent/events). Zero values take the defaults.
type LiveConfig struct {
	// MaxStreams bounds the streams open on the process
	// (CMS_LIVE_MAX_STREAMS, default 1000; over it: 503).
	MaxStreams int
	// MaxPerUser bounds the streams open by one user
	// (CMS_LIVE_MAX_STREAMS_PER_USER, default 10; over it: 429).
	MaxPerUser int
	// Recheck is how often a stream checks its caller's token and rights
	// again (default 30s; not read from the environment).
	Recheck time.Duration
}

// LoyaltyConfig tunes the loyalty context. Zero values take the defaults.
type LoyaltyConfig struct {
	// ExpiryPoll is how often the expirer of `cms serve` looks for lots
	// whose expiry date passed (CMS_LOYALTY_EXPIRY_POLL, default 1s).
	ExpiryPoll time.Duration
	// CacheEntries bounds the accounts whose state the command side keeps
	// folded in memory (CMS_LOYALTY_CACHE_ENTRIES, default 4096; 0 in the
	// environment turns the cache off, which is -1 here: 0 here is the
	// default).
	CacheEntries int
	// CacheMiB bounds the memory of those states in MiB, by their
	// estimated footprints (CMS_LOYALTY_CACHE_MB, default 128): an
	// account's state grows with its history.
	CacheMiB int
	// SnapshotEvery is how many events an account folds between two
	// snapshots of its state (CMS_LOYALTY_SNAPSHOT_EVERY, default 50; 0
	// turns snapshots off).
	SnapshotEvery int
	// ViewCacheEntries bounds the account views (`self`, `{id}`) that
	// `cms serve` keeps in memory until a change of the account is
	// announced (CMS_LOYALTY_VIEW_CACHE_ENTRIES, default 10000; 0 in the
	// environment turns the cache off, which is -1 here).
	ViewCacheEntries int
	// ViewCacheTTL is the longest a view is kept
	// (CMS_LOYALTY_VIEW_CACHE_TTL, default 10s).
	ViewCacheTTL time.Duration
}

// Defaults of the loyalty view cache.
const (
	defaultViewCacheEntries = 10000
	defaultViewCacheTTL     = 10 * time.Second
)

// PushConfig chooses the push providers and tunes the dispatcher. The zero
// value logs pushes instead of sending them (the development default).
type PushConfig struct {
	// Provider sends to Android devices, and to iOS devices unless
	// IOSProvider says otherwise: "log" (default) or "fcm"
	// (CMS_PUSH_PROVIDER). The SDKs register FCM tokens on iOS too, so
	// with "fcm" FCM serves both platforms by default.
	Provider string
	// IOSProvider sends to iOS devices: "log", "fcm" or "apns"
	// (CMS_PUSH_IOS_PROVIDER, default Provider).
	IOSProvider    string
	FCMCredentials string // CMS_FCM_CREDENTIALS: path to the Firebase service account key (JSON)
	FCMEndpoint    string // CMS_FCM_ENDPOINT, default https://fcm.googleapis.com
	APNSKey        string // CMS_APNS_KEY: path to the .p8 signing key
	APNSKeyID      string // CMS_APNS_KEY_ID
	APNSTeamID     string // CMS_APNS_TEAM_ID
	APNSTopic      string // CMS_APNS_TOPIC: the app's bundle id
	APNSEndpoint   string // CMS_APNS_ENDPOINT, default https://api.push.apple.com
	// Poll is how often the dispatcher looks for due pushes
	// (CMS_PUSH_POLL, default 1s).
	Poll time.Duration
	// Workers bounds the concurrent sends of one push (CMS_PUSH_WORKERS,
	// default 64); ChunkSize is the number of devices sent and then
	// recorded at a time (CMS_PUSH_CHUNK, default 1000).
	Workers, ChunkSize int
}

func loadPushConfig() (PushConfig, error) {
	c := PushConfig{
		Provider:       env("CMS_PUSH_PROVIDER", "log"),
		IOSProvider:    os.Getenv("CMS_PUSH_IOS_PROVIDER"),
		FCMCredentials: os.Getenv("CMS_FCM_CREDENTIALS"),
		FCMEndpoint:    os.Getenv("CMS_FCM_ENDPOINT"),
		APNSKey:        os.Getenv("CMS_APNS_KEY"),
		APNSKeyID:      os.Getenv("CMS_APNS_KEY_ID"),
		APNSTeamID:     os.Getenv("CMS_APNS_TEAM_ID"),
		APNSTopic:      os.Getenv("CMS_APNS_TOPIC"),
		APNSEndpoint:   os.Getenv("CMS_APNS_ENDPOINT"),
	}
	var err error
	if c.Poll, err = duration("CMS_PUSH_POLL", time.Second); err != nil {
		return c, err
	}
	if c.Workers, err = integer("CMS_PUSH_WORKERS", 64); err != nil {
		return c, err
	}
	if c.ChunkSize, err = integer("CMS_PUSH_CHUNK", 1000); err != nil {
		return c, err
	}
	switch c.Provider {
	case "log", "fcm":
	default:
		return c, fmt.Errorf("CMS_PUSH_PROVIDER: %q, want log or fcm", c.Provider)
	}
	switch c.IOSProvider {
	case "", "log", "fcm", "apns":
	default:
		return c, fmt.Errorf("CMS_PUSH_IOS_PROVIDER: %q, want log, fcm or apns", c.IOSProvider)
	}
	return c, nil
}

func loadLiveConfig() (LiveConfig, error) {
	var c LiveConfig
	var err error
	if c.MaxStreams, err = integer("CMS_LIVE_MAX_STREAMS", 1000); err != nil {
		return c, err
	}
	if c.MaxPerUser, err = integer("CMS_LIVE_MAX_STREAMS_PER_USER", 10); err != nil {
		return c, err
	}
	if c.MaxStreams < 1 || c.MaxPerUser < 1 {
		return c, fmt.Errorf("CMS_LIVE_MAX_STREAMS and CMS_LIVE_MAX_STREAMS_PER_USER: %d and %d, want 1 or more", c.MaxStreams, c.MaxPerUser)
	}
	return c, nil
}

func loadConfig() (Config, error) {
	c := Config{
		DatabaseURL:   os.Getenv("DATABASE_URL"),
		HTTPAddr:      env("CMS_HTTP_ADDR", ":8080"),
		AdminUsername: env("CMS_ADMIN_USERNAME", "admin"),
		AdminPassword: os.Getenv("CMS_ADMIN_PASSWORD"),
		DataDir:       env("CMS_DATA_DIR", "./.data"),
		LogLevel:      env("CMS_LOG_LEVEL", "info"),
	}
	var err error
	if c.AccessTokenTTL, err = duration("CMS_ACCESS_TOKEN_TTL", 24*time.Hour); err != nil {
		return c, err
	}
	if c.RefreshTokenTTL, err = duration("CMS_REFRESH_TOKEN_TTL", 30*24*time.Hour); err != nil {
		return c, err
	}
	if c.ReadYourWrites, err = duration("CMS_READ_YOUR_WRITES_TIMEOUT", 2*time.Second); err != nil {
		return c, err
	}
	if v := os.Getenv("CMS_TOKEN_CACHE_TTL"); v != "0" {
		if c.TokenCacheTTL, err = duration("CMS_TOKEN_CACHE_TTL", 10*time.Second); err != nil {
			return c, err
		}
	}
	if c.ShutdownTimeout, err = duration("CMS_SHUTDOWN_TIMEOUT", 15*time.Second); err != nil {
		return c, err
	}
	if c.BcryptCost, err = integer("CMS_BCRYPT_COST", 12); err != nil {
		return c, err
	}
	if c.SearchCache, err = entriesOrOff("CMS_SEARCH_CACHE_ENTRIES", 1024); err != nil {
		return c, err
	}
	if c.SearchTimeout, err = duration("CMS_SEARCH_TIMEOUT", 10*time.Second); err != nil {
		return c, err
	}
	if c.SearchIndex, err = integer("CMS_SEARCH_INDEX_ITEMS", 250_000); err != nil {
		return c, err
	}
	if c.SearchIndex < 0 {
		return c, fmt.Errorf("CMS_SEARCH_INDEX_ITEMS: %d is negative (0 keeps no module in memory)", c.SearchIndex)
	}
	if c.ReadConcurrency, err = integer("CMS_READ_CONCURRENCY", 2*runtime.GOMAXPROCS(0)); err != nil {
		return c, err
	}
	if c.ReadConcurrency < 0 {
		return c, fmt.Errorf("CMS_READ_CONCURRENCY: %d is negative", c.ReadConcurrency)
	}
	if c.Live, err = loadLiveConfig(); err != nil {
		return c, err
	}
	if c.Push, err = loadPushConfig(); err != nil {
		return c, err
	}
	if c.Media, err = loadMediaConfig(c.HTTPAddr); err != nil {
		return c, err
	}
	if c.Loyalty.ExpiryPoll, err = duration("CMS_LOYALTY_EXPIRY_POLL", time.Second); err != nil {
		return c, err
	}
	if c.Loyalty.CacheEntries, err = entriesOrOff("CMS_LOYALTY_CACHE_ENTRIES", 4096); err != nil {
		return c, err
	}
	if c.Loyalty.CacheMiB, err = integer("CMS_LOYALTY_CACHE_MB", cmdloyalty.DefaultCacheBytes>>20); err != nil {
		return c, err
	}
	if c.Loyalty.CacheMiB < 1 {
		return c, fmt.Errorf("CMS_LOYALTY_CACHE_MB: %d, want 1 or more (CMS_LOYALTY_CACHE_ENTRIES=0 turns the cache off)", c.Loyalty.CacheMiB)
	}
	if c.Loyalty.SnapshotEvery, err = integer("CMS_LOYALTY_SNAPSHOT_EVERY", cmdloyalty.DefaultSnapshotEvery); err != nil {
		return c, err
	}
	if c.Loyalty.SnapshotEvery < 0 {
		return c, fmt.Errorf("CMS_LOYALTY_SNAPSHOT_EVERY: %d, want 0 (no snapshots) or more", c.Loyalty.SnapshotEvery)
	}
	if c.Loyalty.ViewCacheEntries, err = entriesOrOff("CMS_LOYALTY_VIEW_CACHE_ENTRIES", defaultViewCacheEntries); err != nil {
		return c, err
	}
	if c.Loyalty.ViewCacheTTL, err = duration("CMS_LOYALTY_VIEW_CACHE_TTL", defaultViewCacheTTL); err != nil {
		return c, err
	}
	if c.Loyalty.ViewCacheTTL <= 0 {
		return c, fmt.Errorf("CMS_LOYALTY_VIEW_CACHE_TTL: %s, want more than 0 (CMS_LOYALTY_VIEW_CACHE_ENTRIES=0 turns the cache off)", c.Loyalty.ViewCacheTTL)
	}
	for _, s := range strings.Split(os.Getenv("CMS_TRUSTED_PROXIES"), ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		p, err := netip.ParsePrefix(s)
		if err != nil {
			a, aerr := netip.ParseAddr(s)
			if aerr != nil {
				return c, fmt.Errorf("CMS_TRUSTED_PROXIES: %q is not a CIDR prefix or address", s)
			}
			p = netip.PrefixFrom(a, a.BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, identity.UnmapPrefix(p).Masked())
	}
	return c, nil
}

func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func duration(name string, def time.Duration) (time.Duration, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s: %q is not a positive duration (e.g. 30s, 24h)", name, v)
	}
	return d, nil
}

// entriesOrOff reads a cache's size from the environment variable name
// (def if unset): 0 there turns the cache off, which is -1 in Config
// (where 0 is the default).
func entriesOrOff(name string, def int) (int, error) {
	n, err := integer(name, def)
	switch {
	case err != nil:
		return 0, err
	case n < 0:
		return 0, fmt.Errorf("%s: %d, want 0 (no cache) or more", name, n)
	case n == 0:
		return -1, nil
	}
	return n, nil
}

func integer(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", name, v)
	}
	return n, nil
}
