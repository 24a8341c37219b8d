package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// figure is one row of the table.
type figure struct {
	name   string
	value  float64
	unit   string
	detail string
	// target, if set, is the least acceptable value (the greatest with
	// atMost: lower is better); percent renders value and target as
	// percentages; decimals digits after the point are shown.
	target   float64
	percent  bool
	atMost   bool
	decimals int
}

func (f figure) met() bool {
	if f.atMost {
		return f.target == 0 || f.value <= f.target
	}
	return f.target == 0 || f.value >= f.target
}

type results struct {
	header  []string
	figures []figure
	// model is what the loaded users hold after the load (set by the load
	// phase, checked against the rebuilt projection).
	model map[rightsRow]string
}

func (r *results) add(f figure) {
	r.figures = append(r.figures, f)
	progressf("%s: %s %s %s", f.name, f.valueString(), f.unit, f.detail)
}

func (r *results) missed() bool {
	for _, f := range r.figures {
		if !f.met() {
			return true
		}
	}
	return false
}

func (f figure) valueString() string {
	if f.percent {
		return fmt.Sprintf("%.1f%%", f.value*100)
	}
	if f.decimals > 0 {
		return fmt.Sprintf("%.*f", f.decimals, f.value)
	}
	return thousands(f.value)
}

func (f figure) targetString() string {
	switch {
	case f.target == 0:
		return ""
	case f.percent:
		return fmt.Sprintf(">= %.0f%%", f.target*100)
	case f.atMost:
		return "<= " + thousands(f.target)
	default:
		return ">= " + thousands(f.target)
	}
}

func (r *results) print(w io.Writer) {
	if len(r.header) == 0 && len(r.figures) == 0 {
		return
	}
	fmt.Fprintln(w)
	for _, h := range r.header {
		fmt.Fprintln(w, h)
	}
	if len(r.figures) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tvalue\tunit\ttarget\tstatus")
	fmt.Fprintln(tw, "------\t-----\t----\t------\t------")
	for _, f := range r.figures {
		status := ""
		if f.target != 0 {
			status = "ok"
			if !f.met() {
				status = "MISSED"
			}
		}
		fmt.Fprintf(tw, "%s\t%12s\t%s\t%s\t%s\n", f.name, f.valueString(), f.unit, f.targetString(), status)
	}
	tw.Flush()

	fmt.Fprintln(w)
	fmt.Fprintln(w, "details:")
	for _, f := range r.figures {
		if f.detail != "" {
			fmt.Fprintf(w, "  %s: %s\n", f.name, f.detail)
		}
	}
	fmt.Fprintln(w)
	var met, total int
	var misses []string
	for _, f := range r.figures {
		if f.target == 0 {
			continue
		}
		total++
		if f.met() {
			met++
		} else {
			misses = append(misses, fmt.Sprintf("%s %s (target %s)", f.name, f.valueString(), f.targetString()))
		}
	}
	fmt.Fprintf(w, "summary: %d of %d targets met", met, total)
	if len(misses) > 0 {
		fmt.Fprintf(w, "; missed: %s", strings.Join(misses, "; "))
	}
	fmt.Fprintln(w)
}

// thousands renders v rounded, with thousands separators.
func thousands(v float64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := fmt.Sprintf("%.0f", v)
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}
