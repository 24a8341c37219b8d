package content

import (
	"context"
	"sync"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/content"
)

// maxCachedModules bounds the module cache; past it the cache starts over.
const maxCachedModules = 4096

// moduleCache keeps the modules this process last decided item writes
// against, with their stream versions, so that a create does not read and
// fold its module's stream each time. An entry is trusted only by a write
// that appends with the module's guard at the entry's version: a stale
// entry fails that append with a version conflict, and the write decides
// again from a fresh read (see itemModule), which replaces the entry.
type moduleCache struct {
	mu sync.Mutex
	m  map[string]cachedModule
}

type cachedModule struct {
	module  content.Module
	version int64
}

func (c *moduleCache) get(id string) (cachedModule, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[id]
	return e, ok
}

func (c *moduleCache) put(id string, e cachedModule) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxCachedModules {
		c.m = make(map[string]cachedModule)
	}
	c.m[id] = e
}

func (c *moduleCache) forget(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
}

// itemModule returns the module an item write decides against, with its
// version: from the cache when cached says so and it holds the module
// (hit), else read from its stream (and cached if it is live). A cached
// module is only good for a write that appends with moduleGuard(id,
// version): a stale entry then costs one more attempt. A write that is
// refused, changes nothing or takes no guard against a cached module
// decides again against a fresh read if the module moved since
// (moduleMoved).
func (s *Service) itemModule(ctx context.Context, id string, cached bool) (m content.Module, v int64, hit bool, err error) {
	if cached {
		if e, ok := s.modules.get(id); ok {
			return e.module, e.version, true, nil
		}
	}
	m, v, err = commands.Load(ctx, s.store, content.ModuleStream(id), content.Module{}, applyModule)
	switch {
	case err != nil:
		return m, v, false, err
	case liveModule(m, id) == nil:
		s.modules.put(id, cachedModule{module: m, version: v})
	default:
		s.modules.forget(id)
	}
	return m, v, false, nil
}

// moduleMoved reports whether module id's stream has events past its
// cached entry, or it has none: a decision taken against the entry that
// no guard will check is then taken again against a fresh read. It reads
// the stream's new events only (usually none), not the whole stream.
func (s *Service) moduleMoved(ctx context.Context, id string) bool {
	e, ok := s.modules.get(id)
	if !ok {
		return true
	}
	recs, err := s.store.ReadStream(ctx, content.ModuleStream(id), e.version)
	return err != nil || len(recs) > 0
}
