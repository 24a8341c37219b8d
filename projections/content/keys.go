package content

// The keys of an item: its searchable values, typed, as content_keys
// holds them.

import (
	"encoding/json"
	"strconv"

	"github.com/halocms/halocms/domain/content"
)

// Keys appends an item's key rows (see Projector) to keys: those of its
// indexed fields that have no column in content_fields (slots).
func Keys(keys []keyRow, id, module string, fields []content.Field, slots map[string]string, vals map[string]any, from *int64, until int64) []keyRow {
	row := func(field, loc string, s *string, n *json.Number) keyRow {
		k := keyRow{ItemID: id, Module: module, Field: field, Loc: loc, N: n, PubFrom: from, PubUntil: until}
		k.S, k.X = keyText(s)
		return k
	}
	for _, f := range fields {
		v := vals[f.Name]
		kind := f.Kind()
		if _, ok := slots[f.Name]; ok {
			continue
		}
		switch {
		case !f.Indexed():
			continue
		case kind == content.KindLocalized:
			m, _ := v.(map[string]any)
			added := false
			for loc, e := range m {
				if s, ok := e.(string); ok {
					keys = append(keys, row(f.Name, loc, &s, nil))
					added = true
				}
			}
			if !added {
				keys = append(keys, row(f.Name, "", nil, nil))
			}
		case kind.Multi() || kind == content.KindList:
			arr, _ := v.([]any)
			added := false
			for _, e := range arr {
				if s, n, ok := scalar(e); ok {
					keys = append(keys, row(f.Name, "", s, n))
					added = true
				}
			}
			if !added {
				keys = append(keys, row(f.Name, "", nil, nil))
			}
		default:
			s, n, _ := scalar(v)
			keys = append(keys, row(f.Name, "", s, n))
		}
	}
	return keys
}

// scalar splits a scalar JSON value into the key's text (whole) or
// number.
func scalar(v any) (*string, *json.Number, bool) {
	switch x := v.(type) {
	case string:
		return &x, nil, true
	case bool:
		return strPtr(strconv.FormatBool(x)), nil, true
	case json.Number:
		return nil, &x, true
	case float64:
		n := json.Number(strconv.FormatFloat(x, 'f', -1, 64))
		return nil, &n, true
	case int:
		n := json.Number(strconv.Itoa(x))
		return nil, &n, true
	case int64:
		n := json.Number(strconv.FormatInt(x, 10))
		return nil, &n, true
	}
	return nil, nil, false
}

// keyText is how a text is indexed: its KeyCut and, when that is not the
// whole text, the whole text (nil otherwise).
func keyText(s *string) (key, whole *string) {
	if s == nil {
		return nil, nil
	}
	if k := KeyCut(*s); k != *s {
		return &k, s
	}
	return s, nil
}
