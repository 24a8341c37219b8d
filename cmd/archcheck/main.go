// Command archcheck checks the rules of the code's layout that the
// compiler does not: which layer may import which, the one alias
// convention for context packages, and the size of files and functions.
// `make lint` runs it on the module; it exits 1 and names every breach.
//
// The rules (docs/architecture.md explains them):
//
//   - domain imports only the standard library and domain;
//   - commands, projections and readmodels never import adapters or cmd,
//     nor each other (no sideways imports between layers); a context of a
//     layer may import its layer's root and the other contexts of its own
//     layer;
//   - an HTTP context package (adapters/http/<ctx>) imports the HTTP root,
//     never another HTTP context;
//   - a context package of commands, projections or readmodels is imported
//     as cmd<ctx>, proj<ctx> or rm<ctx>, and a domain package by its own
//     name;
//   - no Go file over 800 lines and no function over 100 lines, tests and
//     generated files aside.
//
// Test files may import across layers (a read model's tests project real
// events), so the import rules apply to the files a build compiles.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
)

func main() {
	dir := flag.String("C", ".", "the module's directory")
	flag.Parse()
	breaches, err := check(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "archcheck:", err)
		os.Exit(2)
	}
	for _, b := range breaches {
		fmt.Println(b)
	}
	if len(breaches) > 0 {
		fmt.Fprintf(os.Stderr, "archcheck: %d breaches of the layout's rules (see cmd/archcheck)\n", len(breaches))
		os.Exit(1)
	}
}

// pkg is what go list says of a package.
type pkg struct {
	Dir          string
	ImportPath   string
	Module       *struct{ Path string }
	Imports      []string
	GoFiles      []string
	CgoFiles     []string
	TestGoFiles  []string
	XTestGoFiles []string
}

// check lists the module's packages with go list and returns every breach,
// sorted.
func check(dir string) ([]string, error) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var pkgs []pkg
	dec := json.NewDecoder(out)
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		pkgs = append(pkgs, p)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("go list: %w", err)
	}
	var breaches []string
	for _, p := range pkgs {
		if p.Module == nil {
			continue
		}
		l := layout{module: p.Module.Path}
		breaches = append(breaches, l.imports(p)...)
		b, err := l.files(p)
		if err != nil {
			return nil, err
		}
		breaches = append(breaches, b...)
	}
	sort.Strings(breaches)
	return breaches, nil
}
