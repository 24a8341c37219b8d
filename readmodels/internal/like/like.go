// Package like builds the patterns of the read models' LIKE and ILIKE
// searches.
package like

import "strings"

var escaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// Containing returns the pattern that matches the texts containing s: s
// with LIKE's wildcards and its escape character escaped, between two %.
func Containing(s string) string { return "%" + escaper.Replace(s) + "%" }
