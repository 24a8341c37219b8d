package content

import "context"

// LoadInMemory loads module into the store's in-memory index now (see
// KeepInMemory), as a search of it would in the background.
func (s *Store) LoadInMemory(ctx context.Context, module string) error {
	return s.mem.load(ctx, module)
}
