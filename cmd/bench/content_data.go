package main

// The content phase's data: the module's fields and the deterministic
// products imported into it, with what the checks need to know of each.

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// The module's fields: name and field type id.
var contentFields = []struct{ name, typ string }{
	{"title", "000000000000000000000001"},
	{"category", "000000000000000000000001"},
	{"price", "000000000000000000000002"},
	{"releaseDate", "000000000000000000000006"},
	{"active", "000000000000000000000008"},
	{"body", "000000000000000000000012"},
	{"stock", "000000000000000000000002"},
	{"color", "000000000000000000000009"},
	{"url", "000000000000000000000003"},
	{"brand", "000000000000000000000001"},
}

// contentWords make the titles: two of them per title, so that a like on
// one matches about 4% of the items. None is a part of another or of
// "Product".
var contentWords = []string{
	"amber", "aspen", "basalt", "birch", "cedar", "cobalt", "coral", "delta", "dune", "ember",
	"falcon", "fjord", "garnet", "glacier", "harbor", "heron", "indigo", "iris", "jasper", "juniper",
	"kelp", "kestrel", "lagoon", "lotus", "meadow", "mistral", "nectar", "nimbus", "onyx", "orchid",
	"pebble", "pine", "quartz", "quill", "raven", "reef", "saffron", "sierra", "thistle", "tundra",
	"umber", "velvet", "vortex", "willow", "wren", "xenon", "yarrow", "yucca", "zephyr", "zinnia",
}

var loremWords = strings.Fields(`lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor
	incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris
	nisi aliquip ex ea commodo consequat duis aute irure in reprehenderit voluptate velit esse cillum fugiat
	nulla pariatur excepteur sint occaecat cupidatat non proident sunt culpa qui officia deserunt mollit anim id est laborum`)

var (
	releaseFrom   = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	releaseUntil  = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) // exclusive: release dates are in 2020..2026
	publishedFrom = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)
	publishedSpan = 2 * 365 * 24 * time.Hour // published in 2023..2024: always in the past
	windowMonths  = 6 * 12                   // (b)'s one-year windows start in 2020-01..2025-12
)

// product is what the checks need to know of an item.
type product struct {
	title     string
	category  int
	cents     int64 // price in hundredths
	release   int64 // ms
	published bool
}

type productValues struct {
	Title       string  `json:"title"`
	Category    string  `json:"category"`
	Price       float64 `json:"price"`
	ReleaseDate int64   `json:"releaseDate"`
	Active      bool    `json:"active"`
	Body        string  `json:"body"`
	Stock       int     `json:"stock"`
	Color       string  `json:"color"`
	URL         string  `json:"url"`
	Brand       string  `json:"brand"`
}

type productBody struct {
	Module      string        `json:"module"`
	Name        string        `json:"name"`
	Values      productValues `json:"values"`
	PublishedAt *int64        `json:"publishedAt,omitempty"`
}

func category(c int) string { return fmt.Sprintf("cat-%02d", c) }

// genProduct makes item n (1-based), the same on every run.
func genProduct(module string, n int) (productBody, product) {
	r := rand.New(rand.NewPCG(contentSeed, uint64(n)))
	p := product{
		title:    fmt.Sprintf("Product %d %s %s", n, contentWords[r.IntN(len(contentWords))], contentWords[r.IntN(len(contentWords))]),
		category: r.IntN(contentCategories),
		cents:    r.Int64N(10_000_001),
		release:  releaseFrom.UnixMilli() + r.Int64N(releaseUntil.UnixMilli()-releaseFrom.UnixMilli()),
	}
	var body strings.Builder
	for body.Len() < 300 {
		if body.Len() > 0 {
			body.WriteByte(' ')
		}
		body.WriteString(loremWords[r.IntN(len(loremWords))])
	}
	b := productBody{Module: module, Name: fmt.Sprintf("Product %d", n), Values: productValues{
		Title: p.title, Category: category(p.category), Price: float64(p.cents) / 100, ReleaseDate: p.release,
		Active: r.IntN(2) == 1, Body: body.String(), Stock: r.IntN(10_000),
		Color: fmt.Sprintf("#%06x", r.IntN(1<<24)), URL: fmt.Sprintf("https://example.com/p/%d", n),
		Brand: fmt.Sprintf("Brand %02d", r.IntN(contentBrands)),
	}}
	if r.IntN(100) < contentPublishedPct {
		at := publishedFrom.UnixMilli() + r.Int64N(publishedSpan.Milliseconds())
		b.PublishedAt = &at
		p.published = true
	}
	return b, p
}
