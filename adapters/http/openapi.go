package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"

	"go.yaml.in/yaml/v3"
)

var (
	openapiJSONOnce  sync.Once
	openapiJSONBytes []byte
	openapiJSONErr   error
)

// openapiJSON returns the embedded OpenAPI document (openapiYAML) as JSON,
// converted once. Keys keep the YAML's order, so paths read as written.
// It panics if the embedded YAML is invalid: that is a build mistake, and
// the package's tests catch it.
func openapiJSON() []byte {
	openapiJSONOnce.Do(func() {
		openapiJSONBytes, openapiJSONErr = yamlToJSON(openapiYAML)
	})
	if openapiJSONErr != nil {
		panic("httpapi: embedded openapi.yaml: " + openapiJSONErr.Error())
	}
	return openapiJSONBytes
}

// openapiJSONHandler serves GET /openapi.json.
func (s *server) openapiJSONHandler(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(openapiJSON())
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
