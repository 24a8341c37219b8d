package eventcodec

import (
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/operations"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/domain/rights"
)

// Default returns a registry with every event type of the program. When an
// event's shape changes, bump its version here and add the upcaster.
func Default() *Registry {
	r := NewRegistry()
	for _, group := range [][]interface{ EventType() string }{identity.Events(), rights.Events(), content.Events(), push.Events(), appuser.Events(), loyalty.Events(), operations.Events(),
		analytics.Events(), media.Events()} {
		for _, e := range group {
			r.Register(e, 1)
		}
	}
	return r
}
