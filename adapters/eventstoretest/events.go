package eventstoretest

import (
	"errors"

	"github.com/halocms/halocms/adapters/eventcodec"
)

// Test event types. The "renamed" type is at schema version 2; version 1
// called the new name Title. A blob carries any value (Harness.Rejected).

type testCreated struct {
	Name string
	N    int
}

func (testCreated) EventType() string { return "eventstoretest.created" }

type testRenamed struct {
	Name     string
	Previous string
}

func (testRenamed) EventType() string { return "eventstoretest.renamed" }

type testRenamedV1 struct {
	Title    string
	Previous string
}

func (testRenamedV1) EventType() string { return "eventstoretest.renamed" }

type testBlob struct{ V any }

func (testBlob) EventType() string { return "eventstoretest.blob" }

func upcastRenamedV1(m map[string]any) (map[string]any, error) {
	title, ok := m["Title"]
	if !ok {
		return nil, errors.New("renamed v1 without Title")
	}
	delete(m, "Title")
	m["Name"] = title
	return m, nil
}

// NewRegistry returns a registry of the suite's event types at their
// current versions. Factories build the store under test with it.
func NewRegistry() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(testCreated{}, 1)
	r.Register(testRenamed{}, 2, upcastRenamedV1)
	r.Register(testBlob{}, 1)
	return r
}

// registryV1 is the registry of an older program that knew "renamed" at
// schema version 1 only.
func registryV1() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(testCreated{}, 1)
	r.Register(testRenamedV1{}, 1)
	return r
}
