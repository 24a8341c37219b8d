package content

import (
	"slices"
	"strings"
)

// page returns the rows offset..offset+limit of matches in sort order,
// keeping only the best offset+limit while it reads them.
func (m *memModule) page(matches []int32, sorts []memSort, offset, limit int) []int32 {
	keep := offset + limit
	if keep >= len(matches) {
		all := slices.Clone(matches)
		slices.SortFunc(all, func(a, b int32) int { return m.compare(sorts, a, b) })
		return all[min(offset, len(all)):]
	}
	best := make([]int32, 0, keep+1)
	for _, i := range matches {
		if len(best) == keep && m.compare(sorts, i, best[keep-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(best, i, func(a, b int32) int { return m.compare(sorts, a, b) })
		best = slices.Insert(best, at, i)
		if len(best) > keep {
			best = best[:keep]
		}
	}
	return best[offset:]
}

// compare orders rows a and b as the statement's ORDER BY does: each key
// with missing values first when ascending, last when descending (see
// nullsOrder), then the item ids, in the last key's direction.
func (m *memModule) compare(sorts []memSort, a, b int32) int {
	for _, k := range sorts {
		na, nb := m.nNull[a]&(1<<k.col) != 0, m.nNull[b]&(1<<k.col) != 0
		va, vb := m.n[k.col][a], m.n[k.col][b]
		c := 0
		switch {
		case na && nb:
		case na:
			c = -1
		case nb:
			c = 1
		case va < vb:
			c = -1
		case va > vb:
			c = 1
		}
		if k.desc {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	c := 0
	switch {
	case a >= m.base || b >= m.base: // rows past the loaded ones (see memModule)
		c = strings.Compare(m.ids.at(a), m.ids.at(b))
	case a < b:
		c = -1
	case a > b:
		c = 1
	}
	if sorts[len(sorts)-1].desc {
		c = -c
	}
	return c
}
