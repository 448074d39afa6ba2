package authapi

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

// TestErrorCodesLiveInTheCatalogue keeps the auth API's error codes in errorcodes.go: a code written as a string
// literal anywhere else in the package would be a second spelling of the contract that nothing checks.
func TestErrorCodesLiveInTheCatalogue(t *testing.T) {
	fset := token.NewFileSet()
	catalogue, err := parser.ParseFile(fset, "errorcodes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	codes := map[string]bool{}
	ast.Inspect(catalogue, func(n ast.Node) bool {
		if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			v, _ := strconv.Unquote(lit.Value)
			codes[v] = true
		}
		return true
	})
	if len(codes) < 20 {
		t.Fatalf("only %d codes in errorcodes.go", len(codes))
	}
	files, _ := filepath.Glob("*.go")
	for _, name := range files {
		if name == "errorcodes.go" || strings.HasSuffix(name, "_test.go") {
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
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if v, _ := strconv.Unquote(lit.Value); codes[v] {
					t.Errorf("%s: error code %s written as a literal; use its constant from errorcodes.go", fset.Position(lit.Pos()), lit.Value)
				}
			}
			return true
		})
	}
}
