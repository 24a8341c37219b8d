package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"
)

// openapiRoot is the root of the OpenAPI document: info, security, the
// root's own paths (probes, token, legacy paths) and the components the
// contexts share. Each context's fragment adds its paths and components.
//
//go:embed openapi.yaml
var openapiRoot []byte

//go:embed docs.html
var docsHTML []byte

// openapiDoc is the whole OpenAPI document, as YAML and as JSON, merged
// when first asked for: merging and converting it takes tens of
// milliseconds and megabytes, which a server that is never asked for it
// (every test server) need not spend.
type openapiDoc struct {
	contexts   []Context
	once       sync.Once
	yaml, json []byte
}

// get merges the root document with the contexts' fragments, once. It
// panics on a fragment that does not parse or defines a path or a
// component twice: a build mistake, which the tests catch.
func (d *openapiDoc) get() *openapiDoc {
	d.once.Do(func() {
		fragments := make([][]byte, len(d.contexts))
		for i, c := range d.contexts {
			fragments[i] = c.OpenAPI()
		}
		var err error
		if d.yaml, d.json, err = OpenAPIDocument(fragments...); err != nil {
			panic("httpapi: OpenAPI document: " + err.Error())
		}
	})
	return d
}

// OpenAPIDocument is the whole OpenAPI document, in YAML and in JSON: the
// root's, with the contexts' fragments merged in.
func OpenAPIDocument(fragments ...[]byte) (yamlDoc, jsonDoc []byte, err error) {
	if yamlDoc, err = mergeOpenAPI(openapiRoot, fragments...); err != nil {
		return nil, nil, err
	}
	jsonDoc, err = yamlToJSON(yamlDoc)
	return yamlDoc, jsonDoc, err
}

// mergeOpenAPI adds the paths and components of fragments to root, in
// order: a path or a component defined twice is an error.
func mergeOpenAPI(root []byte, fragments ...[]byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(root, &doc); err != nil {
		return nil, fmt.Errorf("root: %w", err)
	}
	for i, f := range fragments {
		var frag yaml.Node
		if err := yaml.Unmarshal(f, &frag); err != nil {
			return nil, fmt.Errorf("fragment %d: %w", i, err)
		}
		if len(frag.Content) == 0 {
			continue
		}
		if err := mergeMapping(doc.Content[0], frag.Content[0], 0, ""); err != nil {
			return nil, fmt.Errorf("fragment %d: %w", i, err)
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// mergeMapping adds the entries of from to into: at the top level only
// paths and components, one level further (components' kinds) any.
func mergeMapping(into, from *yaml.Node, depth int, at string) error {
	if into.Kind != yaml.MappingNode || from.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: not a mapping", at)
	}
	for i := 0; i+1 < len(from.Content); i += 2 {
		k, v := from.Content[i], from.Content[i+1]
		path := at + "/" + k.Value
		if depth == 0 && k.Value != "paths" && k.Value != "components" {
			return fmt.Errorf("%s: a fragment holds only paths and components", path)
		}
		existing := valueOf(into, k.Value)
		switch {
		case existing == nil:
			into.Content = append(into.Content, k, v)
		case depth == 0 || (depth == 1 && at == "/components"):
			if err := mergeMapping(existing, v, depth+1, path); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%s is defined twice", path)
		}
	}
	return nil
}

func valueOf(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// openapiSpec serves GET /openapi.yaml.
func (s *server) openapiSpec(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(s.openapi.get().yaml)
}

// openapiJSONHandler serves GET /openapi.json.
func (s *server) openapiJSONHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(s.openapi.get().json)
}

// openapiPage serves GET /docs, a browsable page of the document.
func (s *server) openapiPage(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write(docsHTML)
}

// yamlToJSON converts a YAML document to JSON, keeping mapping order.
func yamlToJSON(in []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(in, &doc); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := writeNodeJSON(&buf, &doc, 0); err != nil {
		return nil, err
	}
	// Validate and indent in one go.
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// writeNodeJSON writes n as JSON, mapping keys in order.
func writeNodeJSON(buf *bytes.Buffer, n *yaml.Node, depth int) error {
	if depth > 100 {
		return fmt.Errorf("nesting too deep at line %d", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			buf.WriteString("null")
			return nil
		}
		return writeNodeJSON(buf, n.Content[0], depth+1)
	case yaml.AliasNode:
		return writeNodeJSON(buf, n.Alias, depth+1)
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := map[string]bool{}
		first := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys are not supported", k.Line)
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: mapping keys must be scalars", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if !first {
				buf.WriteByte(',')
			}
			first = false
			key, _ := json.Marshal(k.Value) // JSON keys are strings, whatever the YAML tag
			buf.Write(key)
			buf.WriteByte(':')
			if err := writeNodeJSON(buf, v, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeNodeJSON(buf, c, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
		return nil
	}
	return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
}
