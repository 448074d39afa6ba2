package reflect

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	goreflect "reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// CatalogQuery is the catalog query, for callers that send it in a batch of their own: Answer.Add takes each row of
// its result, and Parse reads them (Read does both on a connection or transaction). Its parameters are the schemas to read ([]string, a search path; nil for the session's current_schemas(false)),
// the relations to read (oids; nil for all) and the types to read whatever uses them (oids; nil for none): see
// Shared.Update. Its answer depends on no role: every role shares it. Run it after CatalogSettings, in the same
// transaction.
//
//go:embed catalog.sql
var CatalogQuery string

// CatalogSettings is what the catalog query runs best with, local to its transaction. JIT off: a large catalog
// costs its plan above jit_above_cost, and compiling took longer than the query itself (2 s of 4 s at 5,000
// tables). work_mem of 64 MB: at 5,000 tables the columns' JSON (8 MB) is sorted and hashed on disk with the
// default 4 MB.
const CatalogSettings = "select set_config('jit', 'off', true), set_config('work_mem', '64MB', true)"

// PrivilegesQuery says what the current role may see and do of the catalog; Shared.ForRole reads its result.
//
//go:embed privileges.sql
var PrivilegesQuery string

// Querier is what Load needs: a connection, a pool or a transaction.
type Querier interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Load runs the catalog and privileges queries on q, as q's current role and search_path, and builds the model.
// They run in a transaction of their own, or a savepoint in q's, rolled back: CatalogSettings leave nothing
// behind.
func Load(ctx context.Context, q Querier) (*Catalog, error) {
	var role, privileges string
	var answer *Answer
	err := readRolledBack(ctx, q, func(q Querier) error {
		if _, err := q.Exec(ctx, CatalogSettings); err != nil {
			return fmt.Errorf("catalog settings: %w", err)
		}
		var err error
		if answer, err = Read(ctx, q, nil, nil, nil); err != nil {
			return err
		}
		if err := q.QueryRow(ctx, "select current_user::text").Scan(&role); err != nil {
			return fmt.Errorf("current role: %w", err)
		}
		if err := q.QueryRow(ctx, PrivilegesQuery).Scan(&privileges); err != nil {
			return fmt.Errorf("privileges query: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	shared, err := Parse(answer)
	if err != nil {
		return nil, err
	}
	return shared.ForRole(role, []byte(privileges))
}

// Read runs the catalog query on q, which has run CatalogSettings in the same transaction, for the schemas,
// relations and types given (see CatalogQuery; nil for the defaults).
func Read(ctx context.Context, q Querier, schemas []string, relations, types []uint32) (*Answer, error) {
	rows, err := q.Query(ctx, CatalogQuery, schemas, relations, types)
	if err != nil {
		return nil, fmt.Errorf("catalog query: %w", err)
	}
	defer rows.Close()
	answer := &Answer{}
	for rows.Next() {
		if err := answer.Add(rows.RawValues()); err != nil {
			return nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("catalog query: %w", err)
	}
	return answer, nil
}

// Answer is the catalog query's answer, taken row by row as it arrives (Add): a document, a row per relation
// read and a row per column of those (catalog.sql says why). Parse and Shared.Update read it, once.
type Answer struct {
	raw      rawCatalog
	document bool
	// columns are each relation's columns by its oid. A slice per relation, not one for all: growing one slice of
	// 50,000 columns copied it into fresh memory again and again, which cost more than reading the rows.
	columns map[uint32][]rawColumn
}

// answerFields is the number of fields of each row of the catalog query's answer: its kind, and the fields of the
// widest kinds (a relation's, a column's).
const answerFields = 12

// Add takes one row of the catalog query's answer, as the protocol delivers it (every field is text, whose
// binary and text formats are alike). values are not kept.
func (a *Answer) Add(values [][]byte) error {
	if len(values) != answerFields {
		return fmt.Errorf("catalog query: a row of %d fields, want %d", len(values), answerFields)
	}
	f := fields{values: values[1:]}
	switch string(values[0]) {
	case "d":
		if a.document {
			return errors.New("catalog query: a second document")
		}
		a.document = true
		if err := json.Unmarshal(f.required(), &a.raw); err != nil {
			return fmt.Errorf("decode catalog: %w", err)
		}
		if err := f.done(); err != nil {
			return fmt.Errorf("catalog query: the document: %w", err)
		}
		return nil
	case "r":
		r := rawRelation{OID: f.oid(), Name: string(f.required()), Kind: string(f.required()), SchemaOID: f.oid(),
			RowType: f.oid(), RLS: f.boolean(), Comment: f.optional(), Partition: f.boolean(),
			RootComment: f.optional(), PartitionRoot: f.optionalOID()}
		if indexes := f.next(); indexes != nil && f.err == nil {
			f.err = json.Unmarshal(indexes, &r.Indexes)
		}
		if err := f.done(); err != nil {
			return fmt.Errorf("catalog query: relation %q: %w", r.Name, err)
		}
		a.raw.Relations = append(a.raw.Relations, r)
		return nil
	case "c":
		relation := f.oid()
		c := rawColumn{Column: Column{Num: f.number(), Name: string(f.required()), Type: f.oid(), TypeMod: f.number(),
			FormatType: string(f.required()), NotNull: f.boolean(), HasDefault: f.boolean(), Generated: f.boolean(),
			Serial: f.boolean()}, Comment: f.optional()}
		if err := f.done(); err != nil {
			return fmt.Errorf("catalog query: column %q of relation %d: %w", c.Name, relation, err)
		}
		if a.columns == nil {
			a.columns = map[uint32][]rawColumn{}
		}
		a.columns[relation] = append(a.columns[relation], c)
		return nil
	}
	return fmt.Errorf("catalog query: a row of kind %q", values[0])
}

// fields reads a row's text fields in order; the first error stays.
type fields struct {
	values [][]byte
	err    error
}

func (f *fields) next() []byte {
	if len(f.values) == 0 {
		f.err = cmp.Or(f.err, errors.New("a field too few"))
		return nil
	}
	v := f.values[0]
	f.values = f.values[1:]
	return v
}

func (f *fields) required() []byte {
	v := f.next()
	if v == nil {
		f.err = cmp.Or(f.err, errors.New("a field that is never null is null"))
	}
	return v
}

func (f *fields) optional() *string {
	if v := f.next(); v != nil {
		s := string(v)
		return &s
	}
	return nil
}

func (f *fields) oid() uint32 {
	n, err := strconv.ParseUint(string(f.required()), 10, 32)
	f.err = cmp.Or(f.err, err)
	return uint32(n)
}

// optionalOID is 0 for null.
func (f *fields) optionalOID() uint32 {
	if len(f.values) > 0 && f.values[0] == nil {
		f.values = f.values[1:]
		return 0
	}
	return f.oid()
}

func (f *fields) number() int {
	n, err := strconv.ParseInt(string(f.required()), 10, 32)
	f.err = cmp.Or(f.err, err)
	return int(n)
}

func (f *fields) boolean() bool {
	b, err := strconv.ParseBool(string(f.required()))
	f.err = cmp.Or(f.err, err)
	return b
}

// done says what was wrong with the row read, if anything: a bad field, or one left over that is not null (the
// kinds narrower than the row leave theirs null).
func (f *fields) done() error {
	if f.err == nil && slices.ContainsFunc(f.values, func(v []byte) bool { return v != nil }) {
		f.err = errors.New("a field too many")
	}
	return f.err
}

// readRolledBack runs read in a transaction rolled back after it: q's own, or a savepoint when q is a
// transaction or a connection inside one (pgx begins a savepoint for a transaction, but a connection's Begin
// would send BEGIN into the caller's transaction, and its rollback end that).
func readRolledBack(ctx context.Context, q Querier, read func(Querier) error) error {
	if conn, ok := q.(*pgx.Conn); ok && conn.PgConn().TxStatus() != 'I' {
		const savepoint = "pgreflect_catalog_read"
		if _, err := conn.Exec(ctx, "savepoint "+savepoint); err != nil {
			return fmt.Errorf("begin the catalog read: %w", err)
		}
		err := read(conn)
		_, rollback := conn.Exec(context.WithoutCancel(ctx), "rollback to savepoint "+savepoint)
		_, release := conn.Exec(context.WithoutCancel(ctx), "release savepoint "+savepoint)
		return errors.Join(err, rollback, release)
	}
	tx, err := q.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin the catalog read: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }() // only read; nothing to keep
	return read(tx)
}

// Shared is a catalog read once for every role of a search_path: what the catalog query answered, before any
// role's privileges apply. It is immutable.
type Shared struct {
	raw rawCatalog
}

// Parse reads the catalog query's answer, which it uses up.
func Parse(a *Answer) (*Shared, error) {
	if !a.document {
		return nil, errors.New("decode catalog: the answer has no document")
	}
	s := &Shared{raw: a.raw}
	// in oid order, as the rest of the answer: the rows come in no order
	sortByOID(s.raw.Relations, func(r rawRelation) uint32 { return r.OID })
	for i := range s.raw.Relations {
		r := &s.raw.Relations[i]
		r.Columns = a.columns[r.OID]
		delete(a.columns, r.OID)
		// in attribute order: the rows come in no order
		slices.SortFunc(r.Columns, func(x, y rawColumn) int { return cmp.Compare(x.Num, y.Num) })
	}
	if len(a.columns) > 0 {
		return nil, fmt.Errorf("decode catalog: columns of relation %d, which the answer does not hold",
			slices.Min(slices.Collect(maps.Keys(a.columns))))
	}
	*a = Answer{}
	return s, nil
}

// rawRelation is a relation of the catalog query's answer, with its indexes and columns.
type rawRelation struct {
	OID         uint32
	Name        string
	Kind        string
	SchemaOID   uint32
	RowType     uint32
	RLS         bool
	Comment     *string
	Partition   bool
	RootComment *string
	// PartitionRoot is a partition's top-level partitioned table (0: not a partition).
	PartitionRoot uint32
	Indexes       []rawIndex
	Columns       []rawColumn
}

// rawIndex is a unique index of a relation of the catalog query's answer (the query reads no other).
type rawIndex struct {
	OID        uint32 `json:"oid"`
	Name       string `json:"name"`
	Primary    bool   `json:"primary"`
	Expression bool   `json:"expression"`
	Exclusion  bool   `json:"exclusion"`
	Deferrable bool   `json:"deferrable"`
	Valid      bool   `json:"valid"`
	// Columns are attribute numbers, 0 for an expression: named by ForRole from the relation's columns.
	Columns []int `json:"columns"`
}

// rawColumn is a column of the catalog query's answer: the Column each role's copy starts from (privileges and
// directives left to ForRole), and its comment.
type rawColumn struct {
	Column
	Comment *string
}

// rawForeignKey is a foreign key of the catalog query's answer.
type rawForeignKey struct {
	OID     uint32 `json:"oid"`
	Name    string `json:"name"`
	Local   uint32 `json:"local_relation"`
	Foreign uint32 `json:"foreign_relation"`
	// LocalColumns and ForeignColumns are attribute numbers of Local and Foreign, named by ForRole from their
	// columns: after Update one end may come from an earlier read, unchanged since.
	LocalColumns   []int   `json:"local_columns"`
	ForeignColumns []int   `json:"foreign_columns"`
	Unchecked      bool    `json:"unchecked"`
	Comment        *string `json:"comment"`
}

// rawType is a type of the catalog query's answer.
type rawType struct {
	OID        uint32      `json:"oid"`
	Name       string      `json:"name"`
	SchemaOID  uint32      `json:"schema_oid"`
	Schema     string      `json:"schema"`
	Kind       string      `json:"kind"`
	Category   string      `json:"category"`
	Elem       uint32      `json:"elem"`
	Relation   uint32      `json:"relation"`
	Comment    *string     `json:"comment"`
	EnumValues []string    `json:"enum_values"`
	Attributes []Attribute `json:"attributes"`
}

// ErrWholeReadNeeded is Update's answer when a partition read again has a root that was not read with it: a
// partitioned table with partitions of its own, detached from its tree, is a new tree that no announcement
// named. Only a whole read is right then.
var ErrWholeReadNeeded = errors.New("reflect: the change needs a whole read of the catalog")

// Update returns the catalog with some relations read again: a is the catalog query's answer for those
// relations and for s's types (TypeOIDs), which replaces what s holds of them (a relation a lacks was dropped,
// or left the search path) and of the foreign keys that touch them. The schemas, functions and types, which the
// query reads whole or as s had them, are a's, less the types nothing uses any more. s is not changed.
func (s *Shared) Update(a *Answer, relations []uint32) (*Shared, error) {
	part, err := Parse(a)
	if err != nil {
		return nil, err
	}
	changed := make(map[uint32]bool, len(relations))
	for _, oid := range relations {
		changed[oid] = true
	}
	for _, r := range part.raw.Relations {
		if r.PartitionRoot != 0 && !changed[r.PartitionRoot] {
			return nil, ErrWholeReadNeeded
		}
	}
	out := &Shared{raw: part.raw}
	for _, r := range s.raw.Relations {
		if !changed[r.OID] {
			out.raw.Relations = append(out.raw.Relations, r)
		}
	}
	for _, fk := range s.raw.ForeignKeys {
		if !changed[fk.Local] && !changed[fk.Foreign] {
			out.raw.ForeignKeys = append(out.raw.ForeignKeys, fk)
		}
	}
	// the catalog query's order, which the schema built from it follows
	sortByOID(out.raw.Relations, func(r rawRelation) uint32 { return r.OID })
	sortByOID(out.raw.ForeignKeys, func(fk rawForeignKey) uint32 { return fk.OID })
	out.raw.Types = out.raw.usedTypes()
	return out, nil
}

// Equal reports whether s and o hold the same catalog: a read that finds what the last one found changes nothing
// built from it. Relations an update kept share their columns with the read before, which makes comparing them
// cheap.
func (s *Shared) Equal(o *Shared) bool {
	return s == o || goreflect.DeepEqual(s.raw, o.raw)
}

// ToRead returns what an update of s reads again for a change announced of relations (oids): those relations,
// the partitions s holds of every partitioned table among them, and the relation s holds each index among them
// on. The announcement of a change of a partition tree lists the tree as it is now; a partition detached from it
// is no longer in it, and is found here, in the tree as s has it. A dropped index is announced by its own oid,
// which no longer says its table; one s does not hold (not unique, partial, or of a relation not read) changed
// nothing that s holds.
func (s *Shared) ToRead(relations []uint32) []uint32 {
	listed := make(map[uint32]bool, len(relations))
	for _, oid := range relations {
		listed[oid] = true
	}
	out := slices.Clip(relations) // appended to, never the caller's array
	for _, r := range s.raw.Relations {
		if listed[r.OID] {
			continue
		}
		if r.PartitionRoot != 0 && listed[r.PartitionRoot] ||
			slices.ContainsFunc(r.Indexes, func(ix rawIndex) bool { return listed[ix.OID] }) {
			out = append(out, r.OID)
		}
	}
	return out
}

// TypeOIDs are the types s holds, for the catalog query that brings s up to date (Update).
func (s *Shared) TypeOIDs() []uint32 {
	oids := make([]uint32, len(s.raw.Types))
	for i, t := range s.raw.Types {
		oids[i] = t.OID
	}
	return oids
}

// usedTypes are the types of c that a full read of c's relations and functions reads (catalog.sql's
// used_types, and their elements): an update reads every type the earlier read held, some of which only a
// relation since dropped or changed used.
func (c *rawCatalog) usedTypes() []rawType {
	byOID := make(map[uint32]*rawType, len(c.Types))
	for i := range c.Types {
		byOID[c.Types[i].OID] = &c.Types[i]
	}
	schemas := make(map[uint32]bool, len(c.Schemas))
	for _, s := range c.Schemas {
		schemas[s.OID] = true
	}
	columnTypes := map[uint32]bool{}
	for _, r := range c.Relations {
		for _, col := range r.Columns {
			columnTypes[col.Type] = true
		}
	}
	used := maps.Clone(columnTypes)
	for oid := range columnTypes {
		// the fields of composite-type columns, one level deep
		if t := byOID[oid]; t != nil {
			for _, a := range t.Attributes {
				used[a.Type] = true
			}
		}
	}
	for _, f := range c.Functions {
		used[f.ReturnType] = true
		for _, oid := range f.ArgTypes {
			used[oid] = true
		}
	}
	for _, t := range c.Types {
		if t.Kind == "e" && schemas[t.SchemaOID] {
			used[t.OID] = true
		}
	}
	elements := map[uint32]bool{}
	for oid := range used {
		if t := byOID[oid]; t != nil && t.Elem != 0 {
			elements[t.Elem] = true
		}
	}
	var out []rawType
	for _, t := range c.Types {
		if used[t.OID] || elements[t.OID] {
			out = append(out, t)
		}
	}
	return out
}

func sortByOID[T any](list []T, oid func(T) uint32) {
	slices.SortFunc(list, func(a, b T) int { return cmp.Compare(oid(a), oid(b)) })
}

// rawPrivileges is the privileges query's answer.
type rawPrivileges struct {
	SearchPath []string `json:"search_path"`
	Schemas    []uint32 `json:"schemas"`
	// Relations are each relation's table privileges as letters (s, i, u, d).
	Relations map[uint32]string `json:"relations"`
	// Columns are the column privileges that exceed their table's (s, i, u).
	Columns []struct {
		Relation uint32 `json:"relation"`
		Num      int    `json:"num"`
		Can      string `json:"can"`
	} `json:"columns"`
	FunctionsDenied []uint32 `json:"functions_denied"`
	TypesDenied     []uint32 `json:"types_denied"`
}

type columnKey struct {
	relation uint32
	num      int
}

type rawCatalog struct {
	ServerVersion int `json:"server_version_num"`
	Schemas       []struct {
		OID     uint32  `json:"oid"`
		Name    string  `json:"name"`
		Comment *string `json:"comment"`
	} `json:"schemas"`
	// Relations come as rows of their own (Answer), not in the document.
	Relations   []rawRelation   `json:"-"`
	ForeignKeys []rawForeignKey `json:"foreign_keys"`
	Functions   []struct {
		OID         uint32   `json:"oid"`
		Name        string   `json:"name"`
		SchemaOID   uint32   `json:"schema_oid"`
		Volatility  string   `json:"volatility"`
		ReturnsSet  bool     `json:"returns_set"`
		ReturnType  uint32   `json:"return_type"`
		Rows        float64  `json:"rows"`
		NumArgs     int      `json:"num_args"`
		NumDefaults int      `json:"num_defaults"`
		Variadic    bool     `json:"variadic"`
		ArgNames    []string `json:"arg_names"`
		ArgModes    []string `json:"arg_modes"`
		ArgTypes    []uint32 `json:"arg_types"`
		ArgDefaults *string  `json:"arg_defaults"`
		Comment     *string  `json:"comment"`
	} `json:"functions"`
	Types []rawType `json:"types"`
}

// ForRole builds the model role sees from the privileges query's JSON, run as that role: the schemas it may
// use, and what it may do with each relation, column, function and type. The shared catalog is not changed.
func (s *Shared) ForRole(role string, privilegesDoc []byte) (*Catalog, error) {
	var p rawPrivileges
	if err := json.Unmarshal(privilegesDoc, &p); err != nil {
		return nil, fmt.Errorf("decode privileges: %w", err)
	}
	usable := make(map[uint32]bool, len(p.Schemas))
	for _, oid := range p.Schemas {
		usable[oid] = true
	}
	columnPrivileges := make(map[columnKey]string, len(p.Columns))
	for _, c := range p.Columns {
		columnPrivileges[columnKey{c.Relation, c.Num}] = c.Can
	}
	functionDenied := make(map[uint32]bool, len(p.FunctionsDenied))
	for _, oid := range p.FunctionsDenied {
		functionDenied[oid] = true
	}
	typeDenied := make(map[uint32]bool, len(p.TypesDenied))
	for _, oid := range p.TypesDenied {
		typeDenied[oid] = true
	}
	raw := &s.raw
	c := &Catalog{
		Role:          role,
		SearchPath:    p.SearchPath,
		ServerVersion: raw.ServerVersion,
		Types:         map[uint32]*Type{},
		schemaByOID:   map[uint32]*Schema{},
		relationByOID: map[uint32]*Relation{},
	}
	for _, rs := range raw.Schemas {
		if !usable[rs.OID] {
			continue // without USAGE the role sees nothing in it
		}
		s := &Schema{OID: rs.OID, Name: rs.Name}
		if err := parseDirective(rs.Comment, &s.Directives); err != nil {
			return nil, err
		}
		c.Schemas = append(c.Schemas, s)
		c.schemaByOID[s.OID] = s
	}
	for _, rt := range raw.Types {
		t := &Type{OID: rt.OID, Name: rt.Name, SchemaOID: rt.SchemaOID, SchemaName: rt.Schema, Kind: rt.Kind,
			Category: rt.Category, Elem: rt.Elem, Relation: rt.Relation, CanUse: !typeDenied[rt.OID], EnumValues: rt.EnumValues,
			Attributes: rt.Attributes}
		if t.Kind == "e" {
			if err := parseDirective(rt.Comment, &t.Directives); err != nil {
				return nil, err
			}
		}
		c.Types[t.OID] = t
	}
	for _, rr := range raw.Relations {
		if rr.Kind == "p" && !partitionsHidden(rr.Comment) || rr.Partition && partitionsHidden(rr.RootComment) {
			continue
		}
		schema := c.schemaByOID[rr.SchemaOID]
		if schema == nil {
			continue // a schema the role may not use
		}
		can := p.Relations[rr.OID]
		r := &Relation{OID: rr.OID, Schema: schema, Name: rr.Name, Kind: rr.Kind,
			RowType: rr.RowType, RLS: rr.RLS,
			CanSelect: has(can, 's'), CanInsert: has(can, 'i'), CanUpdate: has(can, 'u'), CanDelete: has(can, 'd')}
		if err := parseDirective(rr.Comment, &r.Directives); err != nil {
			return nil, err
		}
		for _, rc := range rr.Columns {
			colCan := columnPrivileges[columnKey{rr.OID, rc.Num}]
			col := new(Column)
			*col = rc.Column
			col.CanSelect, col.CanInsert = r.CanSelect || has(colCan, 's'), r.CanInsert || has(colCan, 'i')
			col.CanUpdate = r.CanUpdate || has(colCan, 'u')
			if err := parseDirective(rc.Comment, &col.Directives); err != nil {
				return nil, err
			}
			r.Columns = append(r.Columns, col)
		}
		for _, ix := range rr.Indexes {
			columns := r.columnNames(ix.Columns)
			if ix.Primary {
				r.PrimaryKey = columns
			}
			r.UniqueIndexes = append(r.UniqueIndexes, columns)
			// ON CONFLICT DO UPDATE refuses an exclusion constraint (a WITHOUT OVERLAPS key), a deferrable one
			// and an invalid index; the unique column sets keep them, as pg_graphql's do
			if !ix.Expression && !ix.Exclusion && !ix.Deferrable && ix.Valid {
				r.UniqueKeys = append(r.UniqueKeys, UniqueKey{Name: ix.Name, Columns: columns})
			}
		}
		if len(r.PrimaryKey) == 0 && len(r.Directives.PrimaryKeyColumns) > 0 && r.hasColumns(r.Directives.PrimaryKeyColumns) {
			r.PrimaryKey = r.Directives.PrimaryKeyColumns
		}
		c.Relations = append(c.Relations, r)
		c.relationByOID[r.OID] = r
	}
	for _, rf := range raw.ForeignKeys {
		fk := &ForeignKey{Name: rf.Name, Local: c.relationByOID[rf.Local], Foreign: c.relationByOID[rf.Foreign],
			Unchecked: rf.Unchecked}
		if fk.Local == nil || fk.Foreign == nil {
			continue // an end is a partitioned table or a partition that is not shown
		}
		fk.LocalColumns, fk.ForeignColumns = fk.Local.columnNames(rf.LocalColumns), fk.Foreign.columnNames(rf.ForeignColumns)
		if err := parseDirective(rf.Comment, &fk.Directives); err != nil {
			return nil, err
		}
		c.ForeignKeys = append(c.ForeignKeys, fk)
	}
	c.addDirectiveForeignKeys()
	for _, rf := range raw.Functions {
		schema := c.schemaByOID[rf.SchemaOID]
		if schema == nil {
			continue // a schema the role may not use
		}
		f := &Function{OID: rf.OID, Schema: schema, Name: rf.Name, Volatility: rf.Volatility,
			ReturnsSet: rf.ReturnsSet, ReturnType: rf.ReturnType, Rows: rf.Rows, NumArgs: rf.NumArgs,
			NumDefaults: rf.NumDefaults, Variadic: rf.Variadic, ArgNames: rf.ArgNames, ArgModes: rf.ArgModes,
			ArgTypes: rf.ArgTypes, CanExecute: !functionDenied[rf.OID]}
		if rf.ArgDefaults != nil {
			f.ArgDefaults = *rf.ArgDefaults
		}
		if err := parseDirective(rf.Comment, &f.Directives); err != nil {
			return nil, err
		}
		c.Functions = append(c.Functions, f)
	}
	return c, nil
}

// has reports whether privileges, as the privileges query writes them, hold letter.
func has(privileges string, letter byte) bool { return strings.IndexByte(privileges, letter) >= 0 }

// partitionsHidden reports whether a partitioned table's comment asks for it to be shown as one collection with
// its partitions hidden: @graphql({"partitions": "hidden"}). It is read leniently, apart from the relation's
// other directives, because pg_graphql never reads the comment of a partitioned table: one that is not valid
// JSON, or of another shape, leaves the pg_graphql default rather than failing every request.
func partitionsHidden(comment *string) bool {
	var d struct {
		Partitions any `json:"partitions"`
	}
	return parseDirective(comment, &d) == nil && d.Partitions == "hidden"
}

// columnNames names the columns of r numbered nums, in their order, leaving out numbers r has no column of (0,
// an index's expression).
func (r *Relation) columnNames(nums []int) []string {
	names := make([]string, 0, len(nums))
	for _, num := range nums {
		for _, col := range r.Columns {
			if col.Num == num {
				names = append(names, col.Name)
				break
			}
		}
	}
	return names
}

func (r *Relation) hasColumns(names []string) bool {
	for _, n := range names {
		if r.Column(n) == nil {
			return false
		}
	}
	return true
}

// addDirectiveForeignKeys adds the foreign_keys directives of relations, skipping those whose target or
// columns do not exist.
func (c *Catalog) addDirectiveForeignKeys() {
	for _, r := range c.Relations {
		for _, d := range r.Directives.ForeignKeys {
			var target *Relation
			for _, t := range c.Relations {
				if t.Schema != nil && t.Schema.Name == d.ForeignSchema && t.Name == d.ForeignTable {
					target = t
				}
			}
			if target == nil || !r.hasColumns(d.LocalColumns) || !target.hasColumns(d.ForeignColumns) ||
				len(d.LocalColumns) != len(d.ForeignColumns) || len(d.LocalColumns) == 0 {
				continue
			}
			c.ForeignKeys = append(c.ForeignKeys, &ForeignKey{
				Name:  fmt.Sprintf("%s_%s_directive_fkey", r.Name, strings.Join(d.LocalColumns, "_")),
				Local: r, LocalColumns: d.LocalColumns, Foreign: target, ForeignColumns: d.ForeignColumns,
				Directives: NameDirectives{LocalName: d.LocalName, ForeignName: d.ForeignName},
				Synthetic:  true,
			})
		}
	}
}
