package mediaprobe

import (
	"bytes"
	"encoding/xml"
	"strconv"
	"strings"
)

// svgSize reads the root svg element's width and height (in px or
// unitless), else its viewBox, from the head of the file. 0×0 when the
// element is not in the head or its size is relative (a percentage, em).
func svgSize(head []byte) (int, int) {
	d := xml.NewDecoder(bytes.NewReader(head))
	d.Strict = false
	for i := 0; i < 1000; i++ {
		tok, err := d.Token()
		if err != nil {
			return 0, 0
		}
		el, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if el.Name.Local != "svg" {
			return 0, 0
		}
		var w, h, vb string
		for _, a := range el.Attr {
			switch a.Name.Local {
			case "width":
				w = a.Value
			case "height":
				h = a.Value
			case "viewBox":
				vb = a.Value
			}
		}
		if wi, hi := svgLength(w), svgLength(h); wi > 0 && hi > 0 {
			return wi, hi
		}
		f := strings.FieldsFunc(vb, func(r rune) bool { return r == ' ' || r == ',' })
		if len(f) == 4 {
			return svgLength(f[2]), svgLength(f[3])
		}
		return 0, 0
	}
	return 0, 0
}

// svgLength is a length in px or unitless, rounded; 0 otherwise.
func svgLength(s string) int {
	s = strings.TrimSuffix(strings.TrimSpace(s), "px")
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v > 1e9 {
		return 0
	}
	return int(v + 0.5)
}
