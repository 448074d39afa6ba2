package resolve

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// catalogueFile is the one file allowed to write client-facing message text.
const catalogueFile = "messages.go"

// inlineMessages lists the places in one Go source file that make a client error without going through the
// catalogue: a gqlError call, a clientError literal, or errPassThrough given literal text (pass-through is
// for texts written elsewhere, such as Postgres' messages).
func inlineMessages(t *testing.T, name string, src []byte) []string {
	t.Helper()
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, name, src, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	var found []string
	ast.Inspect(file, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			fn, ok := n.Fun.(*ast.Ident)
			if !ok {
				break
			}
			literal := len(n.Args) > 0 && isStringLiteral(n.Args[0])
			if fn.Name == "gqlError" || fn.Name == "errPassThrough" && literal {
				found = append(found, fset.Position(n.Pos()).String()+": "+fn.Name)
			}
		case *ast.CompositeLit:
			if typ, ok := n.Type.(*ast.Ident); ok && typ.Name == "clientError" {
				found = append(found, fset.Position(n.Pos()).String()+": clientError literal")
			}
		}
		return true
	})
	return found
}

func isStringLiteral(e ast.Expr) bool {
	lit, ok := e.(*ast.BasicLit)
	return ok && lit.Kind == token.STRING
}

// Every client-facing error text of the engine lives in messages.go, where each one says when it happens and
// whether it is pg_graphql's contract text; call sites use the catalogue's constructors.
func TestMessagesLiveInTheCatalogue(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") || name == catalogueFile {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, at := range inlineMessages(t, name, src) {
			t.Errorf("%s: client error text written outside %s; add a constructor to the catalogue", at, catalogueFile)
		}
		checked++
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: is the test running in the package directory?", checked)
	}
	src, err := os.ReadFile(catalogueFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(inlineMessages(t, catalogueFile, src)) == 0 {
		t.Fatalf("%s makes no client errors: has the catalogue moved?", catalogueFile)
	}
}

// The guard above must see each way of writing a message inline, and leave catalogue calls and pass-through
// of a variable alone.
func TestInlineMessagesAreFound(t *testing.T) {
	src := `package resolve

func bad(name, msg string) (error, error, error) {
	return gqlError("Unknown type %s", name), &clientError{msg: "x"}, errPassThrough("text")
}

func good(name, msg string) (error, error) {
	return errUnknownInputType(name), errPassThrough(msg)
}
`
	found := inlineMessages(t, "example.go", []byte(src))
	want := []string{"example.go:4:9: gqlError", "example.go:4:45: clientError literal", "example.go:4:68: errPassThrough"}
	if strings.Join(found, "\n") != strings.Join(want, "\n") {
		t.Errorf("found:\n%s\nwant:\n%s", strings.Join(found, "\n"), strings.Join(want, "\n"))
	}
}

// The parameterised constructors rebuild pg_graphql's texts from parts; these are the ones whose wording
// changes between cases (a comma for one nodeId step, Rust's rendering of the String scalar, each meta type's
// own phrasing), pinned to the contract's texts.
func TestCatalogueRebuildsContractTexts(t *testing.T) {
	cases := []struct {
		err  error
		want string
	}{
		{errNodeIDNotString(), "Invalid value passed to nodeId argument, Error 1"},
		{errNodeIDDecode(10), "Invalid value passed to nodeId argument. Error 10"},
		{errCursorDecode(3), "Failed to decode cursor, error 3"},
		{errInvalidString(0), "Invalid input for String(None) type"},
		{errInvalidString(8), "Invalid input for String(Some(8)) type"},
		{errInvalidInput("NonNull"), "Invalid input for NonNull type"},
		{errExtraArguments([]string{"unknown", "x\"y"}), `Input contains extra keys ["unknown", "x\"y"]`},
		{errExtraInputKeys("AccountInsertInput", []string{"invalidKey"}), `Input for type AccountInsertInput contains extra keys ["invalidKey"]`},
		{errMissingPrimaryKey([]string{"a", "b"}), "Missing primary key column(s): a, b"},
		{errUnknownMutationField("delete"), "unknown field in delete"},
		{errUnknownMetaFieldField("x"), "unknown field in __Field x"},
		{errUnknownDirectiveField("x"), "unknown field x in __Directive"},
		{errUnknownTypeField("x"), "unknown field on __Type: x"},
		{errParseAt(1, 1, emptyDocumentDetail), "query parse error: Parse error at 1:1\nUnexpected end of input\nExpected `{`, `query`, `mutation`, `subscription` or `fragment`\n"},
		{errInternal(""), "Internal server error"},
		{errInternal("abc"), "Internal server error (request id abc)"},
		{errPassThrough("100% done: %s"), "100% done: %s"},
	}
	for _, c := range cases {
		if got := c.err.Error(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
}
