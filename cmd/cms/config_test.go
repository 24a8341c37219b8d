package main

import (
	"testing"
	"time"
)

// CMS_SEARCH_CACHE_ENTRIES: 0 turns the cache off (-1 in Config, which the
// router reads as no cache), a negative number is refused. It sets the
// environment, so it cannot run in parallel.
func TestSearchCacheEntriesFromEnv(t *testing.T) {
	for env, want := range map[string]int{"": 1024, "0": -1, "50": 50} {
		t.Setenv("CMS_SEARCH_CACHE_ENTRIES", env)
		c, err := loadConfig()
		if err != nil || c.SearchCache != want {
			t.Errorf("CMS_SEARCH_CACHE_ENTRIES=%q: %d, %v; want %d", env, c.SearchCache, err, want)
		}
	}
	t.Setenv("CMS_SEARCH_CACHE_ENTRIES", "-3")
	if _, err := loadConfig(); err == nil {
		t.Errorf("CMS_SEARCH_CACHE_ENTRIES=-3 was accepted")
	}
}

// CMS_SEARCH_INDEX_ITEMS: 0 keeps no module in memory, a negative number
// is refused.
func TestSearchIndexItemsFromEnv(t *testing.T) {
	for env, want := range map[string]int{"": 250_000, "0": 0, "2000": 2000} {
		t.Setenv("CMS_SEARCH_INDEX_ITEMS", env)
		c, err := loadConfig()
		if err != nil || c.SearchIndex != want {
			t.Errorf("CMS_SEARCH_INDEX_ITEMS=%q: %d, %v; want %d", env, c.SearchIndex, err, want)
		}
	}
	t.Setenv("CMS_SEARCH_INDEX_ITEMS", "-1")
	if _, err := loadConfig(); err == nil {
		t.Errorf("CMS_SEARCH_INDEX_ITEMS=-1 was accepted")
	}
}

// CMS_SEARCH_TIMEOUT: a positive duration, 10s by default.
func TestSearchTimeoutFromEnv(t *testing.T) {
	for env, want := range map[string]time.Duration{"": 10 * time.Second, "250ms": 250 * time.Millisecond} {
		t.Setenv("CMS_SEARCH_TIMEOUT", env)
		c, err := loadConfig()
		if err != nil || c.SearchTimeout != want {
			t.Errorf("CMS_SEARCH_TIMEOUT=%q: %s, %v; want %s", env, c.SearchTimeout, err, want)
		}
	}
	for _, bad := range []string{"0", "-1s", "soon"} {
		t.Setenv("CMS_SEARCH_TIMEOUT", bad)
		if _, err := loadConfig(); err == nil {
			t.Errorf("CMS_SEARCH_TIMEOUT=%q was accepted", bad)
		}
	}
}
