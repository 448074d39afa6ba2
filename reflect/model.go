// Package reflect loads the database catalog, as seen by one role with one search_path, into an immutable
// model: schemas, relations, columns, keys, foreign keys, functions, enums, privileges and comment directives.
//
// The model is read with a single catalog query (one round trip) that returns one JSON document built in
// Postgres and a row per column, decoded once. Models are cached by (schema version, role, search_path); the version advances when the database's
// event triggers announce a DDL, COMMENT, GRANT or REVOKE, so the hot path never queries the catalog.
//
// The package shares its name with the standard library's reflect. A file that needs both names one of them;
// pgreflect's code names this one catalog (and this package, which uses the standard library's, names that
// one goreflect):
//
//	import (
//		"reflect"
//
//		catalog "github.com/pgreflect/pgreflect/reflect"
//	)
package reflect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	goreflect "reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Catalog is everything one role sees through one search_path. It is never modified after Load returns, so it
// is safe to share between goroutines.
type Catalog struct {
	Role       string
	SearchPath []string
	// ServerVersion is the server_version_num of the server the catalog was read from (170004 for 17.4): what
	// SQL that server understands.
	ServerVersion int
	Schemas       []*Schema
	Relations     []*Relation
	ForeignKeys   []*ForeignKey
	Functions     []*Function
	Types         map[uint32]*Type

	schemaByOID   map[uint32]*Schema
	relationByOID map[uint32]*Relation
}

// Schema is a namespace on the search path on which the role has USAGE.
type Schema struct {
	OID        uint32
	Name       string
	Directives SchemaDirectives
}

// SchemaDirectives are the @graphql({...}) keys of a schema comment.
type SchemaDirectives struct {
	InflectNames  bool  `json:"inflect_names"`
	MaxRows       *uint `json:"max_rows"`
	Introspection bool  `json:"introspection"`
	// Features turns extensions beyond pg_graphql on for every table of the schema.
	Features []Feature `json:"features"`
}

// Relation is a table, view, materialized view or foreign table.
type Relation struct {
	OID        uint32
	Schema     *Schema
	Name       string
	Kind       string // r, v, m, f, or p: a partitioned table shown whole by the partitions directive
	RowType    uint32
	RLS        bool
	Columns    []*Column
	PrimaryKey []string // real primary key, else the primary_key_columns directive; empty if neither
	// UniqueIndexes are the column sets of non-partial unique indexes, primary key included.
	UniqueIndexes [][]string
	// UniqueKeys are the valid non-partial unique indexes on plain columns with their names, by name, that are
	// neither exclusion constraints (WITHOUT OVERLAPS) nor deferrable: the conflict targets an upsert may name,
	// and the keys at which a join finds at most one row.
	UniqueKeys []UniqueKey
	CanSelect  bool // table-level privileges of the role
	CanInsert  bool
	CanUpdate  bool
	CanDelete  bool
	Directives RelationDirectives
}

// UniqueKey is a unique index (or the index of a primary key or unique constraint) on plain columns.
type UniqueKey struct {
	Name    string   `json:"name"`
	Columns []string `json:"columns"`
}

// RelationDirectives are the @graphql({...}) keys of a relation comment.
type RelationDirectives struct {
	Name              string                `json:"name"`
	Description       *string               `json:"description"`
	TotalCount        *enabled              `json:"totalCount"`
	Aggregate         *enabled              `json:"aggregate"`
	PrimaryKeyColumns []string              `json:"primary_key_columns"`
	ForeignKeys       []ForeignKeyDirective `json:"foreign_keys"`
	MaxRows           *uint                 `json:"max_rows"`
	// Features adds extensions beyond pg_graphql for this table to those of its schema.
	Features []Feature `json:"features"`
}

type enabled struct {
	Enabled json.RawMessage `json:"enabled"`
}

// On mirrors pg_graphql comparing the directive's text to 'true'.
func (e *enabled) On() bool { return e != nil && strings.TrimSpace(string(e.Enabled)) == "true" }

// TotalCountEnabled reports whether the totalCount directive is on.
func (d RelationDirectives) TotalCountEnabled() bool { return d.TotalCount.On() }

// AggregateEnabled reports whether the aggregate directive is on.
func (d RelationDirectives) AggregateEnabled() bool { return d.Aggregate.On() }

// ForeignKeyDirective is a synthetic foreign key declared in a relation comment (views have no real ones).
type ForeignKeyDirective struct {
	LocalColumns   []string `json:"local_columns"`
	ForeignSchema  string   `json:"foreign_schema"`
	ForeignTable   string   `json:"foreign_table"`
	ForeignColumns []string `json:"foreign_columns"`
	LocalName      string   `json:"local_name"`
	ForeignName    string   `json:"foreign_name"`
}

// Column is a relation's column with the role's column privileges.
type Column struct {
	Num        int
	Name       string
	Type       uint32
	TypeMod    int
	FormatType string
	NotNull    bool
	HasDefault bool
	Generated  bool
	Serial     bool // identity or owned sequence
	CanSelect  bool
	CanInsert  bool
	CanUpdate  bool
	Directives NameDirectives
}

// NameDirectives are the name/description keys that columns, functions and foreign keys take.
type NameDirectives struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	LocalName   string  `json:"local_name"`
	ForeignName string  `json:"foreign_name"`
}

// ForeignKey links Local's columns to Foreign's columns.
type ForeignKey struct {
	Name           string
	Local          *Relation
	LocalColumns   []string
	Foreign        *Relation
	ForeignColumns []string
	Directives     NameDirectives
	// Synthetic marks a foreign key declared by a foreign_keys directive.
	Synthetic bool
	// Unchecked marks a foreign key that existing rows may break: added NOT VALID and not validated since, or
	// NOT ENFORCED (PostgreSQL 18).
	Unchecked bool
}

// Function is a plain function (not a procedure or aggregate) in a schema on the search path.
type Function struct {
	OID         uint32
	Schema      *Schema
	Name        string
	Volatility  string // i, s, v
	ReturnsSet  bool
	ReturnType  uint32
	Rows        float64
	NumArgs     int
	NumDefaults int
	Variadic    bool
	ArgNames    []string
	ArgModes    []string
	ArgTypes    []uint32
	// ArgDefaults is pg_get_expr(proargdefaults): the defaults of the last NumDefaults arguments, comma-joined.
	ArgDefaults string
	CanExecute  bool
	Directives  NameDirectives
}

// Type is a pg_type entry that some column, argument or return value uses, or an enum on the search path.
type Type struct {
	OID        uint32
	Name       string
	SchemaOID  uint32
	SchemaName string
	Kind       string // typtype: b, c, d, e, p, r, m
	Category   string // typcategory
	Elem       uint32 // element type of an array
	Relation   uint32 // typrelid of a composite or table row type
	CanUse     bool
	EnumValues []string
	// Attributes are the fields of a standalone composite type (create type ... as), in order.
	Attributes []Attribute
	Directives EnumDirectives
}

// Attribute is a field of a composite type.
type Attribute struct {
	Name       string `json:"name"`
	Type       uint32 `json:"type"`
	TypeMod    int    `json:"typmod"`
	FormatType string `json:"format_type"`
}

// EnumDirectives are the @graphql({...}) keys of an enum type comment.
type EnumDirectives struct {
	Name     string            `json:"name"`
	Mappings map[string]string `json:"mappings"`
}

// SchemaByOID returns the exposed schema with that oid, or nil.
func (c *Catalog) SchemaByOID(oid uint32) *Schema { return c.schemaByOID[oid] }

// RelationByOID returns the relation with that oid, or nil.
func (c *Catalog) RelationByOID(oid uint32) *Relation { return c.relationByOID[oid] }

// Column returns the column of that name, or nil.
func (r *Relation) Column(name string) *Column {
	for _, c := range r.Columns {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// UniqueIndexWithin reports whether cols hold every column of one of r's unique column sets or of its primary
// key (a primary_key_columns directive's too): what makes a relationship to r one record for pg_graphql.
func (r *Relation) UniqueIndexWithin(cols []string) bool {
	return keyWithin(r.PrimaryKey, cols) || slices.ContainsFunc(r.UniqueIndexes, func(key []string) bool { return keyWithin(key, cols) })
}

// UniqueKeyWithin reports whether cols hold every column of one of r's UniqueKeys: rows of r equal on cols are
// then one row, as Postgres enforces at every statement.
func (r *Relation) UniqueKeyWithin(cols []string) bool {
	return slices.ContainsFunc(r.UniqueKeys, func(key UniqueKey) bool { return keyWithin(key.Columns, cols) })
}

// keyWithin reports whether key has columns and all of them are in cols.
func keyWithin(key, cols []string) bool {
	return len(key) > 0 && !slices.ContainsFunc(key, func(c string) bool { return !slices.Contains(cols, c) })
}

// DirectiveError is a comment directive that does not fit its key's type; every request then fails with it,
// as in pg_graphql.
type DirectiveError struct{ Detail string }

func (e *DirectiveError) Error() string {
	return "Error while loading schema, check comment directives. " + e.Detail
}

var directivePattern = regexp.MustCompile(`(?s)@graphql\((.+)\)`)

// parseDirective decodes the @graphql(...) JSON of a comment into dst; a comment without one leaves dst alone.
func parseDirective(comment *string, dst any) error {
	if comment == nil {
		return nil
	}
	m := directivePattern.FindStringSubmatch(*comment)
	if m == nil {
		return nil
	}
	doc, err := sqlReadKeys([]byte(m[1]))
	if err != nil {
		return &DirectiveJSONError{}
	}
	if err := json.Unmarshal(doc, dst); err != nil {
		return &DirectiveError{Detail: directiveMessage(err, string(doc))}
	}
	if c, ok := dst.(interface{ check() error }); ok {
		return c.check()
	}
	return nil
}

// sqlReadKeys rewrites the top-level keys that pg_graphql's catalog query reads with SQL operators rather than
// serde, so that they never fail to decode: names and descriptions are read with ->> (any scalar becomes its
// text), inflect_names and introspection count only when they are JSON true, totalCount and aggregate only when
// their "enabled" reads as the text 'true', and max_rows is cast from its text. Other keys stay as they are
// and are decoded strictly, as serde would. An error means the text is not JSON.
func sqlReadKeys(raw []byte) ([]byte, error) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return raw, nil
	}
	for k, val := range obj {
		switch k {
		case "name", "description", "local_name", "foreign_name":
			switch val := val.(type) {
			case nil, string:
			case json.Number:
				obj[k] = string(val)
			case bool:
				obj[k] = strconv.FormatBool(val)
			default:
				b, _ := json.Marshal(val)
				obj[k] = string(b)
			}
		case "inflect_names", "introspection":
			obj[k] = val == true
		case "totalCount", "aggregate":
			inner, _ := val.(map[string]any)
			e := inner["enabled"]
			obj[k] = map[string]any{"enabled": e == true || e == "true"}
		case "max_rows":
			if s, ok := val.(string); ok {
				if _, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil {
					obj[k] = json.Number(strings.TrimSpace(s))
				}
			}
		}
	}
	return json.Marshal(obj)
}

// DirectiveJSONError is a comment directive that is not JSON. pg_graphql's catalog query casts it to jsonb, so
// the request fails with Postgres' message.
type DirectiveJSONError struct{}

func (e *DirectiveJSONError) Error() string { return "invalid input syntax for type json" }

// directiveMessage phrases a decoding error the way serde_json does, which pg_graphql shows verbatim, as far as
// Go's decoder tells what was found.
func directiveMessage(err error, doc string) string {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) {
		return err.Error()
	}
	expected := map[goreflect.Kind]string{
		goreflect.Uint: "u64", goreflect.Slice: "a sequence", goreflect.Bool: "a boolean", goreflect.String: "a string",
		goreflect.Struct: "struct", goreflect.Map: "a map",
	}[typeErr.Type.Kind()]
	if expected == "" {
		expected = typeErr.Type.String()
	}
	if n, ok := strings.CutPrefix(typeErr.Value, "number "); ok {
		if strings.HasPrefix(n, "-") && typeErr.Type.Kind() == goreflect.Uint {
			return fmt.Sprintf("invalid value: integer `%s`, expected %s", n, expected)
		}
		return fmt.Sprintf("invalid type: %s, expected %s", serdeNumber(n), expected)
	}
	return fmt.Sprintf("invalid type: %s, expected %s", serdeUnexpected(typeErr.Value, doc, typeErr.Offset), expected)
}

// serdeNumber describes a JSON number as serde's Unexpected does.
func serdeNumber(n string) string {
	if !strings.ContainsAny(n, ".eE") {
		return "integer `" + n + "`"
	}
	if !strings.Contains(n, ".") {
		if f, err := strconv.ParseFloat(n, 64); err == nil {
			n = strconv.FormatFloat(f, 'f', -1, 64)
		}
	}
	if !strings.Contains(n, ".") {
		n += ".0"
	}
	return "floating point `" + n + "`"
}

// serdeUnexpected describes the JSON value that ends at offset in doc, of Go's kind, as serde's Unexpected does
// (string "x", boolean `true`, sequence, map).
func serdeUnexpected(kind, doc string, offset int64) string {
	end := int(offset)
	if end > len(doc) {
		end = len(doc)
	}
	token := strings.TrimRight(doc[:end], " \t\r\n")
	switch kind {
	case "array":
		return "sequence"
	case "object":
		return "map"
	case "bool":
		if strings.HasSuffix(token, "true") {
			return "boolean `true`"
		}
		return "boolean `false`"
	case "number":
		start := len(token)
		for start > 0 && strings.IndexByte("0123456789.eE+-", token[start-1]) >= 0 {
			start--
		}
		return serdeNumber(token[start:])
	case "string":
		if !strings.HasSuffix(token, `"`) {
			return "string"
		}
		for start := len(token) - 2; start >= 0; start-- {
			if token[start] != '"' {
				continue
			}
			backslashes := 0
			for k := start - 1; k >= 0 && token[k] == '\\'; k-- {
				backslashes++
			}
			if backslashes%2 == 1 {
				continue // an escaped quote inside the string
			}
			var s string
			if json.Unmarshal([]byte(token[start:]), &s) == nil {
				return "string " + strconv.Quote(s)
			}
		}
		return "string"
	}
	return kind
}
