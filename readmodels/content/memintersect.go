package content

import "slices"

// intersect returns the rows (of n) in every one of lists (each in row
// order), in row order, in a new slice. It starts from the shortest list
// and keeps, list by list from the next shortest, its rows that the list
// holds: against a list up to gallopRatio times as long as what is kept
// so far, by marking the list's rows in a bitmap of the n rows and
// testing each kept row's bit; against a longer one, or one shorter than
// the bitmap's n/64 words, by looking each kept row up in it from where
// the last look-up ended (see seek). The bitmap's loops do not branch on
// the data: a walk of two lists of like lengths that compares their rows
// one by one mispredicts a branch at almost every row, which made that
// walk most of what search (b) cost (BenchmarkMatch).
func intersect(lists [][]int32, n int) []int32 {
	lists = slices.Clone(lists)
	slices.SortFunc(lists, func(a, b []int32) int { return len(a) - len(b) })
	out := slices.Clone(lists[0])
	var bits []uint64
	for _, l := range lists[1:] {
		if len(out) == 0 {
			break
		}
		if len(l) > gallopRatio*len(out) || len(l) < n/64 {
			// Much longer than what is kept, or too short to pay for a
			// bitmap of n rows.
			out = gallop(out, l)
			continue
		}
		if bits == nil {
			bits = make([]uint64, (n+63)/64)
		} else {
			clear(bits)
		}
		for _, i := range l {
			bits[i>>6] |= 1 << (uint32(i) & 63)
		}
		k := 0
		for _, i := range out {
			out[k] = i
			k += int(bits[i>>6] >> (uint32(i) & 63) & 1)
		}
		out = out[:k]
	}
	return out
}

// gallopRatio: a list more than this many times as long as the rows kept
// so far is searched (gallop) rather than marked in a bitmap.
const gallopRatio = 32

// gallop keeps, in place, the rows of out that list holds.
func gallop(out, list []int32) []int32 {
	k := 0
	for _, i := range out {
		list = seek(list, i)
		if len(list) == 0 {
			break
		}
		if list[0] == i {
			out[k] = i
			k++
		}
	}
	return out[:k]
}

// seek returns the end of list (in row order) from its first row not
// before i. It looks at the next few rows first, then gallops (it looks
// 16, 32, 64, ... rows ahead and searches the last step): a walk through
// lists of like lengths costs a comparison or two per row, and one
// through a much longer list a few per step of the shorter.
func seek(list []int32, i int32) []int32 {
	for k := range min(8, len(list)) {
		if list[k] >= i {
			return list[k:]
		}
	}
	step := 16
	for step < len(list) && list[step] < i {
		list = list[step:]
		step *= 2
	}
	at, _ := slices.BinarySearch(list[:min(step, len(list))], i)
	return list[at:]
}
