package s3_test

import (
	"testing"

	"github.com/halocms/halocms/adapters/mediastore/s3"
	"github.com/halocms/halocms/adapters/mediastore/s3/s3test"
	"github.com/halocms/halocms/adapters/mediastore/storetest"
)

var _ storetest.Storage = (*s3.Store)(nil)

// TestContract runs the port's contract against a real S3 server
// (versitygw), one bucket per case.
func TestContract(t *testing.T) {
	srv := s3test.StartServer(t)
	storetest.Run(t, func(t *testing.T) storetest.Storage {
		s, err := s3.New(t.Context(), srv.Config(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
