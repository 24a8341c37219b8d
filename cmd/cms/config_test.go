package main

import "testing"

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
