package content

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestExactFloat(t *testing.T) {
	for d, exact := range map[string]bool{
		"0": true, "-0": true, "10": true, "1e3": true, "1.50": true, "-5.5": true, "0.001": true, ".5": true, "+7": true,
		"123456789012345": true, "1234567890123450000": true, "0.000123456789012345": true, "1700000000000": true,
		"9007199254740993": false, "1234567890123456": false, "12345678901234567890": false, "0.1234567890123456": false,
		"NaN": false, "Infinity": false, "1e400": false, "1e-320": false, "abc": false,
	} {
		if _, got := exactFloat(d); got != exact {
			t.Errorf("exactFloat(%q): exact %v, want %v", d, got, exact)
		}
	}
	if f, _ := exactFloat("1.50"); f != 1.5 {
		t.Errorf("exactFloat(1.50) = %v", f)
	}
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, needle string
		want      bool
	}{
		{"Amber Lamp", "amber", true}, {"AMBER", "mbe", true}, {"lamp amber", "amber", true}, {"ambe", "amber", false},
		{"", "abc", false}, {"abc", "", true}, {"a_b%c", "_b%", true}, {"AbC", "abd", false},
	} {
		if got := containsFold(c.s, c.needle); got != c.want {
			t.Errorf("containsFold(%q, %q) = %v", c.s, c.needle, got)
		}
	}
}

func TestTexts(t *testing.T) {
	var c texts
	in := []string{"", "amber", "", "Straße", "x", ""}
	for _, s := range in {
		c.add(s)
	}
	if c.len() != len(in) {
		t.Fatalf("%d texts, want %d", c.len(), len(in))
	}
	for i, want := range in {
		if got := c.at(int32(i)); got != want {
			t.Errorf("text %d: %q, want %q", i, got, want)
		}
	}
}

// intersect finds the rows in every list, whatever their lengths: lists
// of like lengths, one far shorter than another, empty ones, one list.
func TestIntersect(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	list := func(n, span int) []int32 {
		seen := map[int32]bool{}
		var out []int32
		for range n {
			if v := int32(r.IntN(span)); !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
		slices.Sort(out)
		return out
	}
	for trial := range 500 {
		lists := make([][]int32, 1+trial%4)
		for k := range lists {
			lists[k] = list([]int{0, 1, 5, 50, 500, 3000}[r.IntN(6)], []int{10, 100, 5000}[trial%3])
		}
		var want []int32
		for _, v := range lists[0] {
			in := true
			for _, l := range lists[1:] {
				_, found := slices.BinarySearch(l, v)
				in = in && found
			}
			if in {
				want = append(want, v)
			}
		}
		before := make([][]int32, len(lists))
		for k, l := range lists {
			before[k] = slices.Clone(l)
		}
		got := intersect(lists, []int{10, 100, 5000}[trial%3])
		if !slices.Equal(got, want) {
			t.Fatalf("intersect of lists of %d, ...: %v, want %v", len(lists[0]), got, want)
		}
		for k := range lists {
			if !slices.Equal(lists[k], before[k]) {
				t.Fatalf("intersect changed its list %d", k)
			}
		}
	}
}

// Past memScanMax rows a search needs a list to start from: a like's
// (the rows holding its needle's rarest trigram, when they are at most
// memScanMax) serves, and the answer is what judging every row gives. A
// like whose list is longer is left to PostgreSQL.
func TestMatchFromLikeLists(t *testing.T) {
	const year, now = int64(365 * 24 * 3600 * 1000), 2
	m := productsCopy(3 * memScanMax)
	m.buildTrigrams(1)
	like := func(col int, s string) memCond { return memCond{kind: 'l', col: col, text: s} }
	and := func(kids ...memCond) memCond { return memCond{kind: '&', kids: kids} }
	for name, c := range map[string]struct {
		cond   memCond
		judged bool
	}{
		"a like":                                {like(0, "amber"), true},
		"a like and a year":                     {and(memCond{kind: 'n', col: 1, op: 'G', value: float64(2 * year)}, like(0, "cedar")), true},
		"two likes":                             {and(like(0, "amber"), like(0, "birch")), true},
		"a like within an or":                   {and(like(0, "reef"), memCond{kind: '|', kids: []memCond{like(0, "onyx"), like(0, "iris")}}), true},
		"a needle no row holds":                 {like(0, "amberz"), true},
		"rows with its trigram, not the needle": {like(0, "amber z"), true}, // "harbor zephyr"
		"a trigram in every row":                {like(1, "cat-0"), false},
		"an or of likes, no list":               {memCond{kind: '|', kids: []memCond{like(0, "onyx"), like(0, "iris")}}, false},
	} {
		got, ok := m.match(&c.cond, now)
		if ok != c.judged {
			t.Errorf("%s: judged %v, want %v", name, ok, c.judged)
			continue
		}
		if !ok {
			continue
		}
		var want []int32
		for i := range int32(len(m.pub)) {
			if p := m.pub[i]; p.from <= now && p.until > now && c.cond.judge(m, i) == judgedTrue {
				want = append(want, i)
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d rows, want %d", name, len(got), len(want))
		}
		if name != "a needle no row holds" && len(want) == 0 {
			t.Errorf("%s: no row matches; the case tests nothing", name)
		}
	}
}

// keep holds to its bounds: no item larger than memItemBytes, no more
// than memItemsBytes in the index (an item then takes the place of one
// kept before, when there is one), none once the copy is dropped; and
// the index counts what its copies keep.
func TestKeepBounds(t *testing.T) {
	x := &memIndex{mods: map[string]*memEntry{}}
	m := productsCopy(1000) // keeps up to 100 items
	x.mods["m1"] = &memEntry{mod: m}
	item := func(id string, size int) Item { return Item{ID: id, RawValues: make([]byte, size)} }
	add := func(row int32, it Item) { x.keep(m, []int32{row}, []Item{it}, []int{0}) }

	add(1, item("a", 1000))
	add(2, item("big", memItemBytes+1))
	if _, ok := m.items[1]; !ok || len(m.items) != 1 || x.kept.Load() != keptSize(m.items[1]) {
		t.Fatalf("kept %d items, %d bytes counted; want item a only", len(m.items), x.kept.Load())
	}
	x.kept.Add(memItemsBytes - x.kept.Load() - 500) // other copies keep nearly all the index may
	add(3, item("b", 1000))
	if _, ok := m.items[3]; !ok || len(m.items) != 1 {
		t.Fatalf("kept %v; want b in a's place", m.items)
	}
	if x.kept.Load() > memItemsBytes {
		t.Fatalf("the index counts %d bytes kept, more than %d", x.kept.Load(), memItemsBytes)
	}
	before := x.kept.Load()
	x.drop(x.mods["m1"])
	if x.kept.Load() != before-keptSize(item("b", 1000)) {
		t.Fatalf("dropping the copy left %d bytes counted, want %d", x.kept.Load(), before-keptSize(item("b", 1000)))
	}
	add(4, item("c", 10))
	if len(m.items) != 1 {
		t.Fatal("a dropped copy kept another item")
	}
}
