package eventcodec_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/content"
)

type itemAdded struct {
	SKU   string `json:"sku"`
	Qty   int    `json:"qty"`
	Notes []string
}

func (itemAdded) EventType() string { return "cart.item_added" }

type otherItemAdded struct{ SKU string }

func (otherItemAdded) EventType() string { return "cart.item_added" }

// priceSet is at schema version 3: v1 had "amount" in whole units, v2 had
// "cents", v3 added the currency.
type priceSet struct {
	Cents    int    `json:"cents"`
	Currency string `json:"currency"`
}

func (priceSet) EventType() string { return "catalog.price_set" }

func TestRoundTrip(t *testing.T) {
	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	in := itemAdded{SKU: "A-1", Qty: 3, Notes: []string{"gift"}}
	name, version, data, err := r.Encode(in)
	if err != nil {
		t.Fatal(err)
	}
	if name != "cart.item_added" || version != 1 {
		t.Fatalf("Encode = %q v%d, want cart.item_added v1", name, version)
	}
	var obj map[string]any
	if err := json.Unmarshal(data, &obj); err != nil || obj["sku"] != "A-1" || obj["qty"] != 3.0 {
		t.Fatalf("encoded JSON %s (%v)", data, err)
	}
	out, err := r.Decode(name, version, data)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := out.(itemAdded); !ok {
		t.Fatalf("Decode returned %T, want itemAdded", out)
	}
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("round trip: %#v, want %#v", out, in)
	}
	if !r.Known("cart.item_added") || r.Known("cart.item_removed") {
		t.Fatal("Known disagrees with what was registered")
	}
}

func TestEncodeUnregistered(t *testing.T) {
	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	for _, v := range []any{priceSet{}, &itemAdded{}, nil, 42} {
		if _, _, _, err := r.Encode(v); err == nil {
			t.Errorf("Encode(%#v): no error", v)
		}
	}
}

func TestDecodeUnknownType(t *testing.T) {
	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	_, err := r.Decode("cart.item_removed", 1, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "cart.item_removed") {
		t.Fatalf("Decode of an unknown type: %v", err)
	}
}

func TestDecodeBadVersionOrData(t *testing.T) {
	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	for _, v := range []int{2, 0, -1} {
		if out, err := r.Decode("cart.item_added", v, []byte(`{"sku":"A"}`)); err == nil {
			t.Errorf("Decode at stored version %d (known: 1) = %#v, want an error", v, out)
		}
	}
	if _, err := r.Decode("cart.item_added", 1, []byte(`{"sku": 7}`)); err == nil {
		t.Error("Decode of mistyped data: no error")
	}
	if _, err := r.Decode("cart.item_added", 1, []byte(`not json`)); err == nil {
		t.Error("Decode of invalid JSON: no error")
	}
}

func priceRegistry(calls *[]string) *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(priceSet{}, 3,
		func(m map[string]any) (map[string]any, error) { // v1 -> v2
			*calls = append(*calls, "1to2")
			amount, ok := m["amount"].(float64)
			if !ok {
				return nil, fmt.Errorf("v1 without amount: %v", m)
			}
			return map[string]any{"cents": amount * 100}, nil
		},
		func(m map[string]any) (map[string]any, error) { // v2 -> v3
			*calls = append(*calls, "2to3")
			if _, ok := m["cents"]; !ok {
				return nil, fmt.Errorf("v2 without cents: %v", m)
			}
			m["currency"] = "EUR"
			return m, nil
		})
	return r
}

func TestUpcasting(t *testing.T) {
	cases := []struct {
		version int
		data    string
		want    priceSet
		calls   []string
	}{
		{1, `{"amount": 12}`, priceSet{Cents: 1200, Currency: "EUR"}, []string{"1to2", "2to3"}},
		{2, `{"cents": 450}`, priceSet{Cents: 450, Currency: "EUR"}, []string{"2to3"}},
		{3, `{"cents": 99, "currency": "CHF"}`, priceSet{Cents: 99, Currency: "CHF"}, nil},
	}
	for _, c := range cases {
		var calls []string
		r := priceRegistry(&calls)
		out, err := r.Decode("catalog.price_set", c.version, []byte(c.data))
		if err != nil {
			t.Errorf("v%d: %v", c.version, err)
			continue
		}
		if out != c.want {
			t.Errorf("v%d: %#v, want %#v", c.version, out, c.want)
		}
		if !reflect.DeepEqual(calls, c.calls) {
			t.Errorf("v%d: upcasters run %v, want %v", c.version, calls, c.calls)
		}
	}
	// Encoding always writes the current version.
	var calls []string
	r := priceRegistry(&calls)
	if _, v, _, err := r.Encode(priceSet{Cents: 1}); err != nil || v != 3 {
		t.Fatalf("Encode: version %d, %v; want 3", v, err)
	}
}

func TestUpcasterError(t *testing.T) {
	var calls []string
	r := priceRegistry(&calls)
	// A v1 record without "amount": the first upcaster fails and the
	// error reaches the caller; the second never runs.
	_, err := r.Decode("catalog.price_set", 1, []byte(`{"cents": 5}`))
	if err == nil || !strings.Contains(err.Error(), "v1 without amount") {
		t.Fatalf("Decode: %v, want the upcaster's error", err)
	}
	if !reflect.DeepEqual(calls, []string{"1to2"}) {
		t.Fatalf("upcasters run %v", calls)
	}
	if _, err := r.Decode("catalog.price_set", 1, []byte(`[1]`)); err == nil {
		t.Fatal("Decode of a non-object old version: no error")
	}
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", what)
		}
	}()
	f()
}

func TestRegisterPanics(t *testing.T) {
	up := func(m map[string]any) (map[string]any, error) { return m, nil }
	mustPanic(t, "version 3 with 1 upcaster", func() { eventcodec.NewRegistry().Register(priceSet{}, 3, up) })
	mustPanic(t, "version 2 with 2 upcasters", func() { eventcodec.NewRegistry().Register(priceSet{}, 2, up, up) })
	mustPanic(t, "version 1 with an upcaster", func() { eventcodec.NewRegistry().Register(priceSet{}, 1, up) })
	mustPanic(t, "version 0", func() { eventcodec.NewRegistry().Register(priceSet{}, 0) })

	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	mustPanic(t, "same type twice", func() { r.Register(itemAdded{}, 1) })
	mustPanic(t, "another type with the same name", func() { r.Register(otherItemAdded{}, 1) })
	// The registry still works after the refused registrations, and the
	// original type kept its name.
	name, _, data, err := r.Encode(itemAdded{SKU: "X"})
	if err != nil || name != "cart.item_added" {
		t.Fatalf("Encode after refused registrations: %q, %v", name, err)
	}
	if out, err := r.Decode(name, 1, data); err != nil || out.(itemAdded).SKU != "X" {
		t.Fatalf("Decode after refused registrations: %#v, %v", out, err)
	}
	if _, _, _, err := r.Encode(otherItemAdded{}); err == nil {
		t.Fatal("the refused type can be encoded")
	}
}

func TestConcurrentUse(t *testing.T) {
	r := eventcodec.NewRegistry()
	r.Register(itemAdded{}, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				in := itemAdded{SKU: fmt.Sprint(i), Qty: j}
				name, v, data, err := r.Encode(in)
				if err == nil {
					var out any
					if out, err = r.Decode(name, v, data); err == nil && !reflect.DeepEqual(out, in) {
						err = errors.New("round trip mismatch")
					}
				}
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() { defer wg.Done(); r.Register(priceSet{}, 1) }()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if !r.Known("catalog.price_set") {
		t.Fatal("concurrent Register lost")
	}
}

// A module stored before fields had a widget loads with none (the type's
// default), its other rules as they were.
func TestModuleEventsBeforeWidgets(t *testing.T) {
	r := eventcodec.Default()
	stored := `{"ModuleID":"m1","App":"a1","Name":"News","Single":false,"Tags":[],"Fields":[{"ID":"f1","Name":"body",` +
		`"Description":"","Type":"000000000000000000000012","Required":true,"Localized":false,"Rules":{"MinLength":null,` +
		`"MaxLength":120,"Pattern":"","Min":null,"Max":null,"Values":null,"Default":null,"Module":"","MediaTypes":null}}],` +
		`"ModuleType":"","By":"Admin"}`
	ev, err := r.Decode("content.module_created", 1, []byte(stored))
	if err != nil {
		t.Fatal(err)
	}
	mc, ok := ev.(content.ModuleCreated)
	if !ok || len(mc.Fields) != 1 {
		t.Fatalf("decoded %#v", ev)
	}
	if f := mc.Fields[0]; f.Rules.Widget != "" || f.Rules.MaxLength == nil || *f.Rules.MaxLength != 120 || !f.Required {
		t.Fatalf("field %+v", f)
	}
	if err := content.ValidateFields(mc.Fields); err != nil {
		t.Fatalf("the old field no longer validates: %v", err)
	}
}
