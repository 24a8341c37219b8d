package media_test

import (
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/media"
)

const (
	idA = "aaaaaaaaaaaaaaaaaaaaaaa1"
	idB = "aaaaaaaaaaaaaaaaaaaaaaa2"
)

func TestIDsNamedIn(t *testing.T) {
	got := media.IDsNamedIn("see https://x.example/media/" + idA + "/cat.jpg and /media/" + idB + "?w=4, /media/" + idA +
		"#top, not /media/" + idA + "x nor /media/short")
	if strings.Join(got, ",") != idA+","+idB {
		t.Fatalf("got %v", got)
	}
}

func TestIDOfPath(t *testing.T) {
	for p, want := range map[string]string{
		"/media/" + idA:                            idA,
		"/media/" + idA + "/cat.jpg":               idA,
		"/media/" + idA + "?expires=1&signature=x": idA,
		"/media/" + idA + "x":                      "",
		"/x/media/" + idA:                          "",
		"media/" + idA:                             "",
	} {
		if got, ok := media.IDOfPath(p); got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", p, got, ok, want)
		}
	}
}
