package like

import "testing"

func TestContaining(t *testing.T) {
	for in, want := range map[string]string{
		"amber":   "%amber%",
		"50%":     `%50\%%`,
		"a_b":     `%a\_b%`,
		`back\sl`: `%back\\sl%`,
		`\%_`:     `%\\\%\_%`,
		"":        "%%",
	} {
		if got := Containing(in); got != want {
			t.Errorf("Containing(%q) = %q, want %q", in, got, want)
		}
	}
}
