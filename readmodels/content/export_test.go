package content

import "context"

// LoadInMemory loads module into the store's in-memory index now (see
// KeepInMemory), as a search of it would in the background; with likes,
// it also builds the trigram lists of every text column (see
// memModule.trigrams), as the first like on a column would.
func (s *Store) LoadInMemory(ctx context.Context, module string, likes bool) error {
	if err := s.mem.load(ctx, module); err != nil {
		return err
	}
	m := s.loaded(module)
	if likes && m != nil {
		for i := range m.trigramsAsked {
			m.trigramsAsked[i].Store(true)
			m.buildTrigrams(i)
		}
	}
	return nil
}

// KeptItems returns the ids of the items module's copy keeps (see
// memModule.items), in no particular order.
func (s *Store) KeptItems(module string) []string {
	m := s.loaded(module)
	m.itemsMu.Lock()
	defer m.itemsMu.Unlock()
	var out []string
	for _, it := range m.items {
		out = append(out, it.ID)
	}
	return out
}

// loaded is module's in-memory copy (nil while none is loaded).
func (s *Store) loaded(module string) *memModule {
	s.mem.mu.Lock()
	defer s.mem.mu.Unlock()
	return s.mem.mods[module].mod
}
