package content

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// maxExprValues bounds the values of a tree's in and !in lists, all
// together: each is compared with every candidate's values.
const maxExprValues = 1000

// ParseExpr reads a searchValues/metaSearch tree strictly: a node is a
// condition {condition, operands} or an operation {operation, property,
// value, type}; anything else is a 400.
func ParseExpr(raw json.RawMessage, where string) (*Expr, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	d := json.NewDecoder(strings.NewReader(string(raw)))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fault.Invalidf("%s: malformed expression", where).With("field", where)
	}
	return exprOf(v, where, 1, &exprBudget{})
}

// exprBudget counts what a tree holds so far.
type exprBudget struct{ nodes, values int }

func exprOf(v any, path string, depth int, b *exprBudget) (*Expr, error) {
	b.nodes++
	if depth > maxExprDepth {
		return nil, fault.Invalidf("%s: expressions may nest at most %d levels", path, maxExprDepth).With("field", path)
	}
	if b.nodes > maxExprNodes {
		return nil, fault.Invalidf("expressions may have at most %d nodes", maxExprNodes).With("field", path)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fault.Invalidf("%s: an expression node must be an object", path).With("field", path)
	}
	e := &Expr{}
	for k, x := range m {
		switch k {
		case "condition":
			s, ok := x.(string)
			if !ok || (strings.ToLower(s) != "and" && strings.ToLower(s) != "or") {
				return nil, fault.Invalidf(`%s.condition must be "and" or "or"`, path).With("field", path+".condition")
			}
			e.Cond = strings.ToLower(s)
		case "operands":
			arr, ok := x.([]any)
			if !ok {
				return nil, fault.Invalidf("%s.operands must be an array", path).With("field", path+".operands")
			}
			for i, o := range arr {
				c, err := exprOf(o, path+".operands["+strconv.Itoa(i)+"]", depth+1, b)
				if err != nil {
					return nil, err
				}
				e.Operands = append(e.Operands, c)
			}
		case "operation":
			s, _ := x.(string)
			e.Op = s
		case "property":
			s, ok := x.(string)
			if !ok {
				return nil, fault.Invalidf("%s.property must be a string", path).With("field", path+".property")
			}
			e.Property = s
		case "value":
			if list, ok := x.([]any); ok {
				if b.values += len(list); b.values > maxExprValues {
					return nil, fault.Invalidf("the lists of an expression may hold at most %d values in all", maxExprValues).
						With("field", path+".value")
				}
			}
			e.Value = x
		case "type":
			s, ok := x.(string)
			if !ok {
				return nil, fault.Invalidf("%s.type must be string, number, date, boolean or null", path).With("field", path+".type")
			}
			e.Type = s
		default:
			return nil, fault.Invalidf("%s: unknown key %q", path, k).With("field", path+"."+k)
		}
	}
	switch {
	case e.Cond != "" && e.Op != "":
		return nil, fault.Invalidf("%s: a node is either a condition or an operation", path).With("field", path)
	case e.Cond != "":
		if len(e.Operands) == 0 {
			return nil, fault.Invalidf("%s: a condition needs operands", path).With("field", path+".operands")
		}
	case e.Op == "":
		return nil, fault.Invalidf("%s: a node needs a condition or an operation", path).With("field", path)
	}
	switch e.Type {
	case "", "string", "number", "date", "null", "boolean":
	default:
		return nil, fault.Invalidf("%s.type must be string, number, date, boolean or null", path).With("field", path+".type")
	}
	return e, nil
}
