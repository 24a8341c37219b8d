package content

// memTrigrams are a text column's trigram lists: each trigram of its
// lower-cased ASCII texts, with the rows holding it in row order. A like
// reads the texts of the rows holding the needle's rarest trigram only.
type memTrigrams struct {
	lists map[uint32][]int32
	// wide: some of the column's texts are beyond ASCII. They are in no
	// list, and a like can judge none of them (see judge).
	wide bool
}

// rarest returns the rows holding the rarest trigram of needle (lower-cased
// ASCII, at least three characters): every row of an ASCII text that
// contains needle is among them.
func (t *memTrigrams) rarest(needle string) []int32 {
	var list []int32
	for k := 0; k+3 <= len(needle); k++ {
		if p := t.lists[trigram(needle[k:])]; k == 0 || len(p) < len(list) {
			list = p
		}
	}
	return list
}

// likeTrigrams returns the trigram lists of l's column when l is a like
// and they are built; else nil, asking for them in the background.
func (m *memModule) likeTrigrams(l *memCond) *memTrigrams {
	if l.kind != 'l' {
		return nil
	}
	trg := m.trigrams[l.col].Load()
	if trg == nil && m.trigramsAsked[l.col].CompareAndSwap(false, true) {
		go m.buildTrigrams(l.col)
	}
	return trg
}

// buildTrigrams makes the trigram lists of column col's loaded rows (see
// trigrams).
func (m *memModule) buildTrigrams(col int) {
	trg := memTrigrams{lists: map[uint32][]int32{}}
	var low []byte
	for i := range m.base {
		if m.tNull[i]&(1<<col) != 0 {
			continue
		}
		if m.tWide[i]&(1<<col) != 0 {
			trg.wide = true
			continue
		}
		low = append(low[:0], m.t[col].at(i)...)
		for k, c := range low {
			if 'A' <= c && c <= 'Z' {
				low[k] = c + 'a' - 'A'
			}
		}
		for k := 0; k+3 <= len(low); k++ {
			t := trigram(low[k:])
			if l := trg.lists[t]; len(l) == 0 || l[len(l)-1] != int32(i) {
				trg.lists[t] = append(l, int32(i))
			}
		}
	}
	m.trigrams[col].Store(&trg)
}

func trigram[T string | []byte](b T) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }
