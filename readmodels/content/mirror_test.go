package content

import (
	projcontent "github.com/halocms/halocms/projections/content"
	"strings"
	"testing"
)

// TestMirrorsTheProjection: the search compiles conditions against what
// the projection writes, and keeps its own copies of the projection's
// rules (readmodels do not import projections). A copy that drifts finds
// nothing where the projection wrote something.
func TestMirrorsTheProjection(t *testing.T) {
	if maxKeyText != projcontent.MaxKeyText {
		t.Errorf("maxKeyText %d, projection's MaxKeyText %d", maxKeyText, projcontent.MaxKeyText)
	}
	if maxKeyBytes != projcontent.MaxKeyBytes {
		t.Errorf("maxKeyBytes %d, projection's MaxKeyBytes %d", maxKeyBytes, projcontent.MaxKeyBytes)
	}
	for _, v := range []string{"", "short", strings.Repeat("a", projcontent.MaxKeyText+1), strings.Repeat("é", projcontent.MaxKeyText),
		strings.Repeat("狐", 300), strings.Repeat("😀", 250), strings.Repeat("a", 798) + "😀", "x\xff" + strings.Repeat("y", 900)} {
		if got, want := cut(v), projcontent.KeyCut(v); got != want {
			t.Errorf("cut(%.20q…) keeps %d bytes, projection's KeyCut %d", v, len(got), len(want))
		}
	}
	if eqTokenMax != projcontent.EqTokenMax {
		t.Errorf("eqTokenMax %d, projection's EqTokenMax %d", eqTokenMax, projcontent.EqTokenMax)
	}
	for i := range projcontent.TextSlots {
		if got, want := wholeOf("f."+projcontent.SlotColumns[i]), "f."+projcontent.WholeColumns[i]; got != want {
			t.Errorf("wholeOf(f.%s) = %s, projection's whole column %s", projcontent.SlotColumns[i], got, want)
		}
	}
	for _, v := range []string{"", "cat-04", "Brand 32", strings.Repeat("é", projcontent.EqTokenMax), strings.Repeat("é", projcontent.EqTokenMax) + "x",
		strings.Repeat("x", projcontent.EqTokenMax+1), "with\x1fseparator"} {
		if got, want := eqToken("m1", "t2", v), projcontent.EqToken("m1", "t2", v); got != want {
			t.Errorf("eqToken(%q) = %q, projection's EqToken %q", v, got, want)
		}
		if got, want := hasEqToken(v), projcontent.HasEqToken(v); got != want {
			t.Errorf("hasEqToken(%q) = %v, projection's HasEqToken %v", v, got, want)
		}
	}
}
