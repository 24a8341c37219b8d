package main

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Limits on size, outside tests and generated files.
const (
	maxFileLines = 800
	maxFuncLines = 100
)

// inner are the layers that depend only on domain (and their own kind).
var inner = map[string]bool{"commands": true, "projections": true, "readmodels": true}

// aliasPrefix is the alias of a context package of each inner layer.
var aliasPrefix = map[string]string{"commands": "cmd", "projections": "proj", "readmodels": "rm"}

// infrastructure are imports of the outside world that no inner layer
// makes: drivers, transports and the projection engine's messaging.
// Projections and read models use pgx, their storage; commands use
// neither.
var infrastructure = map[string][]string{
	"commands":    {"github.com/jackc/pgx", "github.com/ThreeDotsLabs/", "github.com/go-chi/", "net/http"},
	"projections": {"github.com/ThreeDotsLabs/", "github.com/go-chi/", "net/http"},
	"readmodels":  {"github.com/ThreeDotsLabs/", "github.com/go-chi/", "net/http"},
}

// layout knows the module's path.
type layout struct{ module string }

// place splits an import path of the module into its layer and context
// ("commands", "content"); ok is false outside the module.
func (l layout) place(path string) (layer, ctx, rest string, ok bool) {
	rel, ok := strings.CutPrefix(path, l.module+"/")
	if !ok {
		return "", "", "", false
	}
	parts := strings.SplitN(rel, "/", 3)
	layer = parts[0]
	if len(parts) > 1 {
		ctx = parts[1]
	}
	if len(parts) > 2 {
		rest = parts[2]
	}
	return layer, ctx, rest, true
}

// std reports whether path is in the standard library (no dot in its
// first element).
func std(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// imports checks the imports of p's non-test files.
func (l layout) imports(p pkg) []string {
	layer, ctx, rest, _ := l.place(p.ImportPath)
	var out []string
	breach := func(imp, why string) {
		out = append(out, fmt.Sprintf("%s imports %s: %s", l.short(p.ImportPath), l.short(imp), why))
	}
	for _, imp := range p.Imports {
		iLayer, iCtx, _, mine := l.place(imp)
		switch {
		case layer == "domain":
			if !std(imp) && !(mine && iLayer == "domain") {
				breach(imp, "domain imports only the standard library and domain")
			}
		case inner[layer]:
			if mine && (iLayer == "adapters" || iLayer == "cmd") {
				breach(imp, layer+" never imports adapters or cmd")
			}
			if mine && inner[iLayer] && iLayer != layer {
				breach(imp, "no sideways imports between layers ("+layer+" → "+iLayer+")")
			}
			for _, f := range infrastructure[layer] {
				if strings.HasPrefix(imp, f) {
					breach(imp, layer+" does not use "+strings.TrimSuffix(f, "/"))
				}
			}
		case layer == "adapters" && ctx == "http" && rest != "":
			own, _, _ := strings.Cut(rest, "/")
			_, _, iRest, _ := l.place(imp)
			other, _, _ := strings.Cut(iRest, "/")
			if mine && iLayer == "adapters" && iCtx == "http" && other != "" && other != own && other != "internal" {
				breach(imp, "an HTTP context imports the HTTP root, never another context")
			}
		}
	}
	return out
}

// files checks the size of p's files and functions, and the aliases of
// every file's imports (tests included).
func (l layout) files(p pkg) ([]string, error) {
	var out []string
	fset := token.NewFileSet()
	all := [][]string{p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles}
	for i, names := range all {
		test := i >= 2
		for _, name := range names {
			path := filepath.Join(p.Dir, name)
			src, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
			if err != nil {
				return nil, err
			}
			rel := l.rel(p, name)
			self := p.ImportPath
			if i == 3 {
				self = "" // an external test imports its package like any other
			}
			out = append(out, l.aliases(rel, self, f)...)
			if test || generated(src) {
				continue
			}
			if n := bytes.Count(src, []byte("\n")); n > maxFileLines {
				out = append(out, fmt.Sprintf("%s: %d lines (at most %d outside tests)", rel, n, maxFileLines))
			}
			out = append(out, longFuncs(fset, rel, f)...)
		}
	}
	return out, nil
}

// short names a package of the module by its path in the module.
func (l layout) short(path string) string { return strings.TrimPrefix(path, l.module+"/") }

// rel names a file of p by its path in the module.
func (l layout) rel(p pkg, name string) string {
	return l.short(p.ImportPath) + "/" + name
}

// aliases checks the names under which f imports the module's packages:
// a context package of an inner layer as cmd<ctx>, proj<ctx> or rm<ctx>,
// a domain package by its own name.
func (l layout) aliases(rel, self string, f *ast.File) []string {
	var out []string
	for _, spec := range f.Imports {
		imp, _ := strconv.Unquote(spec.Path.Value)
		layer, ctx, rest, mine := l.place(imp)
		if !mine || imp == self || ctx == "" || rest != "" {
			continue
		}
		name := ""
		if spec.Name != nil {
			name = spec.Name.Name
		}
		if name == "_" {
			continue
		}
		switch {
		case inner[layer] && name != aliasPrefix[layer]+ctx:
			out = append(out, fmt.Sprintf("%s: import %s as %s (the convention for a context of %s)", rel, imp, aliasPrefix[layer]+ctx, layer))
		case layer == "domain" && name != "":
			out = append(out, fmt.Sprintf("%s: import %s unaliased (domain packages keep their names)", rel, imp))
		}
	}
	return out
}

// longFuncs lists the functions (declared or literal) of f over
// maxFuncLines lines.
func longFuncs(fset *token.FileSet, rel string, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		var name string
		switch x := n.(type) {
		case *ast.FuncDecl:
			name = x.Name.Name
			if x.Recv != nil && len(x.Recv.List) == 1 {
				name = recvName(x.Recv.List[0].Type) + "." + name
			}
		case *ast.FuncLit:
			name = "a function literal"
		default:
			return true
		}
		start, end := fset.Position(n.Pos()), fset.Position(n.End())
		if lines := end.Line - start.Line + 1; lines > maxFuncLines {
			out = append(out, fmt.Sprintf("%s:%d: %s has %d lines (at most %d outside tests)", rel, start.Line, name, lines, maxFuncLines))
		}
		return true
	})
	return out
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.IndexListExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}

// generated reports whether src carries Go's generated-code marker.
func generated(src []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(src))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
		if strings.HasPrefix(line, "package ") {
			return false
		}
	}
	return false
}
