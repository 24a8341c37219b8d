package content

import "testing"

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
