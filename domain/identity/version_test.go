package identity

import (
	"strings"
	"testing"
)

func TestSetServerVersion(t *testing.T) {
	ok := ServerVersionSet{Server: " 2.7.1 ", MinAndroid: "2.3.0", MinIOS: "2.4.0-beta", IOSChangeLog: "https://example.com/ios"}
	got, err := SetServerVersion(ok)
	if err != nil || got.Server != "2.7.1" {
		t.Fatalf("%+v %v", got, err)
	}
	for name, v := range map[string]ServerVersionSet{
		"no server":        {MinAndroid: "1", MinIOS: "1"},
		"a space":          {Server: "2 7", MinAndroid: "1", MinIOS: "1"},
		"too long":         {Server: strings.Repeat("9", 65), MinAndroid: "1", MinIOS: "1"},
		"a control":        {Server: "2\x00", MinAndroid: "1", MinIOS: "1"},
		"not http":         {Server: "2", MinAndroid: "1", MinIOS: "1", AndroidChangeLog: "javascript:alert(1)"},
		"relative":         {Server: "2", MinAndroid: "1", MinIOS: "1", ServerChangeLog: "/changelog"},
		"too long address": {Server: "2", MinAndroid: "1", MinIOS: "1", IOSChangeLog: "https://x.com/" + strings.Repeat("a", 2000)},
	} {
		if _, err := SetServerVersion(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := SetServerVersion(DefaultServerVersion); err != nil {
		t.Errorf("the default is refused: %v", err)
	}
}
