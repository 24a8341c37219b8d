package media_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func uploaded(t *testing.T) media.File {
	t.Helper()
	evs, err := media.Upload(media.File{}, "f1", "app1", media.New{Name: " cat.jpg ", Folder: "/pets/cats/", Tags: []string{"a", " a", "b"},
		Bytes: media.Bytes{SHA256: strings.Repeat("ab", 32), Size: 10, MIME: "image/jpeg", Kind: media.Image}})
	if err != nil {
		t.Fatal(err)
	}
	var f media.File
	for _, e := range evs {
		f = f.Apply(e)
	}
	return f
}

func TestUploadNormalises(t *testing.T) {
	f := uploaded(t)
	if f.Name != "cat.jpg" || f.Folder != "pets/cats" || strings.Join(f.Tags, ",") != "a,b" || f.Version != 1 || !f.Exists() {
		t.Fatalf("got %+v", f)
	}
}

func TestNamesAndFoldersThatAreRefused(t *testing.T) {
	for _, name := range []string{"", "  ", ".", "..", "../../etc/passwd", `a\b`, "a\x00b", "a\nb", strings.Repeat("x", 256)} {
		if _, err := media.CheckName(name); !fault.Is(err, fault.Invalid) {
			t.Errorf("name %q: got %v, want invalid", name, err)
		}
	}
	for _, folder := range []string{"a//b", "a/../b", "./a", "a/\x01", strings.Repeat("a/", 9) + "a", strings.Repeat("x", 256)} {
		if _, err := media.CheckFolder(folder); !fault.Is(err, fault.Invalid) {
			t.Errorf("folder %q: got %v, want invalid", folder, err)
		}
	}
}

func TestChangesThatChangeNothingRecordNothing(t *testing.T) {
	f := uploaded(t)
	for name, decide := range map[string]func() ([]any, error){
		"rename":   func() ([]any, error) { return f.Rename("cat.jpg") },
		"move":     func() ([]any, error) { return f.Move("pets/cats/") },
		"tag":      func() ([]any, error) { return f.Tag([]string{"a", "b"}) },
		"describe": func() ([]any, error) { return f.Describe(map[string]string{"en": " "}, nil) },
		"replace":  func() ([]any, error) { return f.Replace(f.Bytes) },
	} {
		if evs, err := decide(); err != nil || len(evs) != 0 {
			t.Errorf("%s: got %v, %v; want no events", name, evs, err)
		}
	}
}

func TestReplaceKeepsTheKind(t *testing.T) {
	f := uploaded(t)
	_, err := f.Replace(media.Bytes{SHA256: strings.Repeat("cd", 32), MIME: "video/mp4", Kind: media.Video})
	if !fault.Is(err, fault.Unsupported) {
		t.Fatalf("got %v, want unsupported", err)
	}
	evs, err := f.Replace(media.Bytes{SHA256: strings.Repeat("cd", 32), MIME: "image/png", Kind: media.Image})
	if err != nil || f.Apply(evs[0]).Version != 2 {
		t.Fatalf("got %v, %v", evs, err)
	}
}

func TestDeleteWhileUsedNeedsForce(t *testing.T) {
	f := uploaded(t)
	_, err := f.Delete(false, []string{"item:i1"})
	var fe *fault.Error
	if !fault.Is(err, fault.Conflict) || !errors.As(err, &fe) || fe.Extra["usedBy"] == nil {
		t.Fatalf("got %v, want a conflict naming the items", err)
	}
	evs, err := f.Delete(true, []string{"item:i1"})
	if err != nil || !evs[0].(media.Deleted).Forced {
		t.Fatalf("got %v, %v", evs, err)
	}
	if f.Apply(evs[0]).Exists() {
		t.Fatal("deleted file still exists")
	}
	if _, err := f.Apply(evs[0]).Rename("x"); !fault.Is(err, fault.NotFound) {
		t.Fatalf("rename of a deleted file: %v", err)
	}
}

func TestDescribeChecksLocales(t *testing.T) {
	f := uploaded(t)
	if _, err := f.Describe(map[string]string{"not a locale": "x"}, nil); !fault.Is(err, fault.Invalid) {
		t.Fatalf("got %v", err)
	}
	evs, err := f.Describe(map[string]string{"en": "A cat", "nl-NL": "Een kat"}, map[string]string{"en": "Our cat"})
	if err != nil || len(evs) != 1 || f.Apply(evs[0]).Alt["nl-NL"] != "Een kat" {
		t.Fatalf("got %v, %v", evs, err)
	}
}

func TestReferencesNeedAnHTTPURL(t *testing.T) {
	for _, u := range []string{"ftp://x/y", "/relative", "http://user:pw@host/x", "javascript:alert(1)"} {
		if _, err := media.Upload(media.File{}, "f", "a", media.New{Name: "x", URL: u}); !fault.Is(err, fault.Invalid) {
			t.Errorf("%s: got %v", u, err)
		}
	}
}
