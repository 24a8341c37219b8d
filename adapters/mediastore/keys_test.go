package mediastore_test

import (
	"strings"
	"testing"

	"github.com/halocms/halocms/adapters/mediastore"
	"github.com/halocms/halocms/adapters/mediastore/storetest"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func TestCheckKey(t *testing.T) {
	sha := strings.Repeat("ab", 32)
	good := []string{
		"a", "blobs/ab/x", media.BlobKey(sha), media.DerivedKey(sha, "w200-h100-q80.webp"),
		"a..b", ".hidden", "x/...", strings.Repeat("a", 255), strings.Repeat("a", 255) + "/" + strings.Repeat("b", 255),
	}
	for _, k := range good {
		if err := mediastore.CheckKey(k); err != nil {
			t.Errorf("CheckKey(%q): %v", k, err)
		}
	}
	for _, k := range storetest.BadKeys {
		if err := mediastore.CheckKey(k); !fault.Is(err, fault.Invalid) {
			t.Errorf("CheckKey(%q): %v, want fault.Invalid", k, err)
		}
	}
}
