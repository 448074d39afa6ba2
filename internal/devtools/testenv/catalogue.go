package testenv

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Catalogue checks that the texts and codes a package's clients read live in one file of its own (catalogue,
// in dir: the package's directory, "." from its own test) and that call sites only name them. It fails t on
//   - a string literal outside the catalogue whose value is one of the catalogue's (a second spelling of the
//     contract that nothing keeps in step), and
//   - a string literal anywhere in the argument that sinks names for a call (function or method name -> index
//     of the argument a client reads): writeMessage(w, status, "text"), or "Forbidden: "+msg, or
//     fmt.Sprintf("...", v) in that place.
//
// It reads the package's non-test files and returns the catalogue's values, for a test to check its size.
func Catalogue(t testing.TB, dir, catalogue string, sinks map[string]int) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	parsed, err := parser.ParseFile(fset, filepath.Join(dir, catalogue), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]bool{}
	ast.Inspect(parsed, func(n ast.Node) bool {
		if _, isImport := n.(*ast.ImportSpec); isImport {
			return false
		}
		if v, ok := stringLiteral(n); ok {
			values[v] = true
		}
		return true
	})
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if filepath.Base(name) == catalogue || strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if _, isImport := n.(*ast.ImportSpec); isImport {
				return false
			}
			if v, ok := stringLiteral(n); ok && values[v] {
				t.Errorf("%s: %q written as a literal; use its constant from %s", fset.Position(n.Pos()), v, catalogue)
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			index, isSink := sinks[calleeName(call)]
			if !isSink || index >= len(call.Args) {
				return true
			}
			ast.Inspect(call.Args[index], func(arg ast.Node) bool {
				if v, ok := stringLiteral(arg); ok {
					t.Errorf("%s: %s is given the text %q; name a constant of %s", fset.Position(arg.Pos()), calleeName(call), v, catalogue)
				}
				return true
			})
			return true
		})
	}
	return values
}

func stringLiteral(n ast.Node) (string, bool) {
	lit, ok := n.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

// calleeName is f of f(...) and of x.f(...).
func calleeName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}
