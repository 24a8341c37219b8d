package content

import (
	"strings"
	"testing"

	pc "github.com/halocms/halocms/projections/content"
)

// TestMirrorsTheProjection: the search compiles conditions against what
// the projection writes, and keeps its own copies of the projection's
// rules (readmodels do not import projections). A copy that drifts finds
// nothing where the projection wrote something.
func TestMirrorsTheProjection(t *testing.T) {
	if maxKeyText != pc.MaxKeyText {
		t.Errorf("maxKeyText %d, projection's MaxKeyText %d", maxKeyText, pc.MaxKeyText)
	}
	if maxKeyBytes != pc.MaxKeyBytes {
		t.Errorf("maxKeyBytes %d, projection's MaxKeyBytes %d", maxKeyBytes, pc.MaxKeyBytes)
	}
	for _, v := range []string{"", "short", strings.Repeat("a", pc.MaxKeyText+1), strings.Repeat("é", pc.MaxKeyText),
		strings.Repeat("狐", 300), strings.Repeat("😀", 250), strings.Repeat("a", 798) + "😀", "x\xff" + strings.Repeat("y", 900)} {
		if got, want := cut(v), pc.KeyCut(v); got != want {
			t.Errorf("cut(%.20q…) keeps %d bytes, projection's KeyCut %d", v, len(got), len(want))
		}
	}
	if eqTokenMax != pc.EqTokenMax {
		t.Errorf("eqTokenMax %d, projection's EqTokenMax %d", eqTokenMax, pc.EqTokenMax)
	}
	for i := range pc.TextSlots {
		if got, want := wholeOf("f."+pc.SlotColumns[i]), "f."+pc.WholeColumns[i]; got != want {
			t.Errorf("wholeOf(f.%s) = %s, projection's whole column %s", pc.SlotColumns[i], got, want)
		}
	}
	for _, v := range []string{"", "cat-04", "Brand 32", strings.Repeat("é", pc.EqTokenMax), strings.Repeat("é", pc.EqTokenMax) + "x",
		strings.Repeat("x", pc.EqTokenMax+1), "with\x1fseparator"} {
		if got, want := eqToken("m1", "t2", v), pc.EqToken("m1", "t2", v); got != want {
			t.Errorf("eqToken(%q) = %q, projection's EqToken %q", v, got, want)
		}
		if got, want := hasEqToken(v), pc.HasEqToken(v); got != want {
			t.Errorf("hasEqToken(%q) = %v, projection's HasEqToken %v", v, got, want)
		}
	}
}
