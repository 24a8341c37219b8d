package content

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMatch measures match on a copy shaped as the content benchmark's
// module at 100k items (cmd/bench): search (b), "category = X and title
// like W and releaseDate in a year", from the rows of the category and of
// the word's rarest trigram; and the same without the category, from the
// word's.
//
//	go test ./readmodels/content -run XXX -bench Match
func BenchmarkMatch(b *testing.B) {
	const year = int64(365 * 24 * 3600 * 1000)
	m := productsCopy(100_000)
	// The same copy brought forward by its most rows (see forwardLimit),
	// as under a steady stream of creates: the last 6,250 rows appended.
	fwd := *m
	fwd.memShared = &memShared{byteOrder: true, base: 100_000 - 6_250}
	fwd.buildTrigrams(0)
	b.Run("(b), rows appended", func(b *testing.B) {
		cond := memCond{kind: '&', kids: []memCond{
			{kind: 'n', col: 1, op: 'G', value: float64(2 * year)},
			{kind: 'n', col: 1, op: 'L', value: float64(3 * year)},
			{kind: 'e', col: 1, text: "cat-07"},
			{kind: 'l', col: 0, text: "amber"},
		}}
		for b.Loop() {
			if _, ok := fwd.match(&cond, 2); !ok {
				b.Fatal("not judged")
			}
		}
	})
	for name, cond := range map[string]memCond{
		"(b)": {kind: '&', kids: []memCond{
			{kind: 'n', col: 1, op: 'G', value: float64(2 * year)},
			{kind: 'n', col: 1, op: 'L', value: float64(3 * year)},
			{kind: 'e', col: 1, text: "cat-07"},
			{kind: 'l', col: 0, text: "amber"},
		}},
		// Above memScanMax rows, a search with no list to start from is
		// left to PostgreSQL: this one starts from the like's.
		"like and a year": {kind: '&', kids: []memCond{
			{kind: 'n', col: 1, op: 'G', value: float64(2 * year)},
			{kind: 'n', col: 1, op: 'L', value: float64(3 * year)},
			{kind: 'l', col: 0, text: "amber"},
		}},
	} {
		b.Run(name, func(b *testing.B) {
			var rows []int32
			for b.Loop() {
				var ok bool
				if rows, ok = m.match(&cond, 2); !ok {
					b.Fatal("not judged")
				}
			}
			b.ReportMetric(float64(len(rows)), "matches")
		})
	}
}

// productsCopy is a copy of n items shaped as the content benchmark's:
// t1 a title of two of 50 words, t2 one of 20 categories, n1 a price,
// n2 a release date within seven years; a tenth of the items are not
// published. Its title's trigram lists are built.
func productsCopy(n int) *memModule {
	words := []string{"amber", "aspen", "basalt", "birch", "cedar", "cobalt", "coral", "delta", "dune", "ember",
		"falcon", "fjord", "garnet", "glacier", "harbor", "heron", "indigo", "iris", "jasper", "juniper",
		"kelp", "kestrel", "lagoon", "lotus", "meadow", "mistral", "nectar", "nimbus", "onyx", "orchid",
		"pebble", "pine", "quartz", "quill", "raven", "reef", "saffron", "sierra", "thistle", "tundra",
		"umber", "velvet", "vortex", "willow", "wren", "xenon", "yarrow", "yucca", "zephyr", "zinnia"}
	const year = int64(365 * 24 * 3600 * 1000)
	r := rand.New(rand.NewPCG(1, 2))
	m := &memModule{memShared: &memShared{byteOrder: true}, exact: [len(numberColumns)]bool{true, true, true, true}}
	for i := range n {
		m.ids.add(fmt.Sprintf("%024x", i))
		p := memPub{from: memNever, until: 1<<63 - 1}
		if r.IntN(10) > 0 {
			p.from = 1
		}
		m.pub = append(m.pub, p)
		m.t[0].add(words[r.IntN(len(words))] + " " + words[r.IntN(len(words))])
		m.t[1].add(fmt.Sprintf("cat-%02d", r.IntN(20)))
		for c := 2; c < len(textColumns); c++ {
			m.t[c].add("")
		}
		m.tNull, m.tWide, m.nNull = append(m.tNull, 0xfc), append(m.tWide, 0), append(m.nNull, 0xc)
		m.n[0] = append(m.n[0], float64(r.IntN(100_000)))
		m.n[1] = append(m.n[1], float64(r.Int64N(7*year)))
	}
	m.base = int32(n)
	m.buildTrigrams(0)
	return m
}
