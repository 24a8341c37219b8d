package urlfetch

import (
	"net/netip"
	"testing"
)

func TestPublic(t *testing.T) {
	refused := []string{
		"127.0.0.1", "127.1.2.3", "10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1",
		"169.254.169.254", "169.254.0.1", "100.64.0.1", "100.100.100.200", "100.127.255.255",
		"0.0.0.0", "0.1.2.3", "224.0.0.1", "239.255.255.250", "255.255.255.255", "240.0.0.1",
		"192.0.0.8", "192.0.2.1", "198.18.0.1", "198.51.100.7", "203.0.113.9",
		"::", "::1", "fe80::1", "fc00::1", "fd00:ec2::254", "ff02::1", "fec0::1",
		"::ffff:127.0.0.1", "::ffff:10.1.2.3", "::ffff:169.254.169.254", "::127.0.0.1",
		"64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2001:0:4136:e378::1", "2001:db8::1", "100::1",
	}
	for _, s := range refused {
		if Public(netip.MustParseAddr(s)) {
			t.Errorf("%s is public, want refused", s)
		}
	}
	if Public(netip.MustParseAddr("fe80::1%eth0")) {
		t.Error("an address with a zone is public")
	}
	if Public(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
	for _, s := range []string{"1.1.1.1", "8.8.8.8", "93.184.215.14", "100.63.255.255", "100.128.0.1",
		"172.32.0.1", "192.169.0.1", "2606:4700:4700::1111", "2a00:1450:4001:830::200e", "::ffff:8.8.8.8"} {
		if !Public(netip.MustParseAddr(s)) {
			t.Errorf("%s is refused, want public", s)
		}
	}
}
