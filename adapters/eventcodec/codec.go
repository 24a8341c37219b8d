// Package eventcodec maps domain events to stored records and back. Event
// type names are stable strings declared by the domain (EventType methods),
// never derived from Go type names. Older schema versions are upcast here,
// on read, so that the domain only ever sees the current shape.
package eventcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/halocms/halocms/domain/event"
)

// Typed is implemented by every domain event: its stable, namespaced,
// past-tense type name, for example "rights.granted".
type Typed interface{ EventType() string }

// Upcaster turns the JSON object of schema version v into version v+1.
type Upcaster func(map[string]any) (map[string]any, error)

type entry struct {
	name      string
	version   int
	typ       reflect.Type
	upcasters []Upcaster // upcasters[i] lifts version i+1 to i+2
}

// Registry knows every event type the program can read or write.
type Registry struct {
	mu     sync.RWMutex
	byName map[string]*entry
	byType map[reflect.Type]*entry
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{byName: map[string]*entry{}, byType: map[reflect.Type]*entry{}}
}

// Register declares an event type at its current schema version. upcasters,
// if any, lift stored versions 1..version-1 one step each, in order; there
// must be exactly version-1 of them.
func (r *Registry) Register(prototype Typed, version int, upcasters ...Upcaster) {
	if version < 1 || len(upcasters) != version-1 {
		panic(fmt.Sprintf("eventcodec: %s: version %d needs %d upcasters, got %d", prototype.EventType(), version, version-1, len(upcasters)))
	}
	t := reflect.TypeOf(prototype)
	e := &entry{name: prototype.EventType(), version: version, typ: t, upcasters: upcasters}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.byName[e.name]; dup {
		panic("eventcodec: event type registered twice: " + e.name)
	}
	r.byName[e.name] = e
	r.byType[t] = e
}

// Encode returns the stable type name, the current schema version and the
// JSON form of a domain event.
func (r *Registry) Encode(ev any) (name string, version int, data []byte, err error) {
	r.mu.RLock()
	e, ok := r.byType[reflect.TypeOf(ev)]
	r.mu.RUnlock()
	if !ok {
		return "", 0, nil, fmt.Errorf("eventcodec: unregistered event type %T", ev)
	}
	data, err = json.Marshal(ev)
	if err != nil {
		return "", 0, nil, fmt.Errorf("eventcodec: encode %s: %w", e.name, err)
	}
	return e.name, e.version, data, nil
}

// Decode turns a stored record into its domain event, upcasting it from the
// stored schema version to the current one first.
func (r *Registry) Decode(name string, version int, data []byte) (any, error) {
	r.mu.RLock()
	e, ok := r.byName[name]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("eventcodec: unknown event type %q", name)
	}
	if version > e.version || version < 1 {
		return nil, fmt.Errorf("eventcodec: %s: stored schema version %d, this program knows up to %d", name, version, e.version)
	}
	if version < e.version {
		var obj map[string]any
		if err := json.Unmarshal(data, &obj); err != nil {
			return nil, fmt.Errorf("eventcodec: %s v%d: %w", name, version, err)
		}
		for v := version; v < e.version; v++ {
			var err error
			if obj, err = e.upcasters[v-1](obj); err != nil {
				return nil, fmt.Errorf("eventcodec: upcast %s v%d: %w", name, v, err)
			}
		}
		var err error
		if data, err = json.Marshal(obj); err != nil {
			return nil, err
		}
	}
	ptr := reflect.New(e.typ)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // numbers held in untyped values (content values) keep their precision
	if err := dec.Decode(ptr.Interface()); err != nil {
		return nil, fmt.Errorf("eventcodec: decode %s: %w", name, err)
	}
	return ptr.Elem().Interface(), nil
}

// Names lists the registered type names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.byName))
	for name := range r.byName {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// Known reports whether the registry can decode the named type.
func (r *Registry) Known(name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	_, ok := r.byName[name]
	return ok
}

// Stored is an event in the form both event stores keep: its event id,
// registered type name, schema version and JSON data.
type Stored struct {
	ID      uuid.UUID
	Type    string
	Version int
	Data    []byte
}

// EncodeEvent encodes an event about to be appended: the event id it
// carries (a new UUIDv7 if it has none), and its data as Encode does. It
// refuses an event id that is not a UUID, and a type name that is not
// the registered one.
func (r *Registry) EncodeEvent(ev event.Event) (Stored, error) {
	var u uuid.UUID
	var err error
	if ev.Meta.EventID == "" {
		u, err = uuid.NewV7()
	} else if u, err = uuid.Parse(ev.Meta.EventID); err != nil {
		err = fmt.Errorf("append: event id %q: %w", ev.Meta.EventID, err)
	}
	if err != nil {
		return Stored{}, err
	}
	name, version, data, err := r.Encode(ev.Data)
	if err != nil {
		return Stored{}, err
	}
	if ev.Type != "" && ev.Type != name {
		return Stored{}, fmt.Errorf("append: event type %q does not match registered %q", ev.Type, name)
	}
	return Stored{ID: u, Type: name, Version: version, Data: data}, nil
}
