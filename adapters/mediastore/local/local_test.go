package local_test

import (
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/local"
	"github.com/halocms/halocms/adapters/mediastore/storetest"
)

var _ storetest.Storage = (*local.Store)(nil)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Storage {
		s, err := local.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
