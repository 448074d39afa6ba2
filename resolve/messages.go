package resolve

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file is the catalogue of every message the engine sends to GraphQL clients; no other file of the
// package writes message text (TestMessagesLiveInTheCatalogue enforces it). An entry marked "pg_graphql" is
// pg_graphql's own text and is part of the contract (graphql-api.md §2.3–2.4): it must stay byte-identical,
// down to quotes and punctuation, because the contract tests compare answers byte for byte. Unmarked entries
// are pgreflect's own (docs/compatibility.md, docs/extensions.md, docs/operations.md).

// clientError is an error whose message goes to the client verbatim.
type clientError struct{ msg string }

func (e *clientError) Error() string { return e.msg }

// gqlError builds a client error; only the constructors below call it.
func gqlError(format string, args ...any) error {
	if len(args) == 0 {
		return &clientError{msg: format}
	}
	return &clientError{msg: fmt.Sprintf(format, args...)}
}

// rustList formats names as Rust's {:?} prints a Vec<String>: ["a", "b"], as pg_graphql's messages show them.
func rustList(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}

// Document: parsing and choosing the operation.

// errVariablesNotObject: the request's variables are not a JSON object (pg_graphql).
func errVariablesNotObject() error { return gqlError("variables must be an object") }

// errParseAt: the document does not parse; detail is graphql-parser's "Unexpected …\nExpected …\n" lines
// (pg_graphql's prefix and layout).
func errParseAt(line, col int, detail string) error {
	return gqlError("query parse error: Parse error at %d:%d\n%s", line, col, detail)
}

// parseErrorDetail rephrases a gqlparser message ("Expected Name, found <EOF>", "Unexpected )") as the
// "Unexpected …\nExpected …\n" lines that Rust's graphql-parser prints; at is the query text from the error
// position on. The positions and expectation lists of the two parsers still differ in places
// (docs/compatibility.md).
func parseErrorDetail(msg string, at string) string {
	if rest, ok := strings.CutPrefix(msg, "Expected "); ok {
		if expected, found, ok := strings.Cut(rest, ", found "); ok {
			if isPunctuator(expected) {
				expected = "`" + expected + "`"
			}
			return "Unexpected " + parseToken(found, at) + "\nExpected " + expected + "\n"
		}
	}
	if tok, ok := strings.CutPrefix(msg, "Unexpected "); ok {
		return "Unexpected " + parseToken(tok, at) + "\n"
	}
	return msg + "\n"
}

// parseToken renders a gqlparser token description (`Name "where"`, `Name`, `)`, `<Invalid>`) the way
// graphql-parser shows tokens, taking the token's text from at when gqlparser gives only its kind.
func parseToken(tok string, at string) string {
	switch {
	case tok == "<EOF>":
		return "end of input"
	case tok == "<Invalid>" && at != "":
		r, _ := utf8.DecodeRuneInString(at)
		return fmt.Sprintf("`unexpected character %q`", r)
	case isPunctuator(tok):
		return "`" + tok + "[Punctuator]`"
	case tok == "Name" || tok == "Int" || tok == "Float":
		end := strings.IndexFunc(at, func(r rune) bool {
			if tok != "Name" {
				return !(unicode.IsDigit(r) || r == '-' || tok == "Float" && strings.ContainsRune(".eE+", r))
			}
			return !(r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r))
		})
		if end < 0 {
			end = len(at)
		}
		if end > 0 {
			return "`" + at[:end] + "[" + tok + "]`"
		}
	}
	for _, kind := range []string{"Name", "Int", "Float", "String", "BlockString"} {
		if v, ok := strings.CutPrefix(tok, kind+" "); ok {
			return "`" + strings.Trim(v, `"`) + "[" + kind + "]`"
		}
	}
	return "`" + tok + "`"
}

func isPunctuator(tok string) bool {
	return tok != "" && len(tok) <= 3 && strings.Trim(tok, "!$&().:=@[]{|}") == ""
}

// emptyDocumentDetail is graphql-parser's detail for a document without definitions (pg_graphql).
const emptyDocumentDetail = "Unexpected end of input\nExpected `{`, `query`, `mutation`, `subscription` or `fragment`\n"

// errParse: the parser failed without a position (pg_graphql's prefix).
func errParse(err error) error { return gqlError("query parse error: %s", err.Error()) }

// errAnonymousNotAlone: an anonymous operation next to other operations (pg_graphql).
func errAnonymousNotAlone() error {
	return gqlError("Anonymous operations must be the only defined operation")
}

// errDuplicateOperationName: two operations share a name (pg_graphql).
func errDuplicateOperationName() error { return gqlError("Operation names must be unique") }

// errOperationNotFound: operationName names no operation, or none was named among several (pg_graphql).
func errOperationNotFound() error { return gqlError("Operation not found") }

// errSubscription: the operation is a subscription (pg_graphql).
func errSubscription() error { return gqlError("Subscriptions are not supported") }

// errNotASubscription: a live-query transport was asked to subscribe to a query or mutation (pgreflect).
func errNotASubscription() error { return gqlError("Operation is not a subscription") }

// errStreamBatchSize: a stream's batchSize is below 1 (pgreflect).
func errStreamBatchSize() error { return gqlError("batchSize must be at least 1") }

// errStreamCursorColumns: a stream's cursor names no column or more than one (pgreflect).
func errStreamCursorColumns() error {
	return gqlError("cursor.initialValue must give exactly one column")
}

// errSubscriptionRootFields: a subscription selects other than one root field, which the GraphQL spec requires
// (pgreflect; graphql-js words it "Anonymous Subscription must select only one top level field.").
func errSubscriptionRootFields() error {
	return gqlError("A subscription must select exactly one top level field")
}

// errNoMutationType: a mutation against a schema without a Mutation type (pg_graphql).
func errNoMutationType() error { return gqlError("Unknown type Mutation") }

// errEmptySelection: the operation selects nothing (pg_graphql).
func errEmptySelection() error { return gqlError("Selection set must not be empty") }

// Validation: fragments, merging, directives, fields.

// errFragmentCycle: fragments spread each other in a cycle (pg_graphql).
func errFragmentCycle() error { return gqlError("Found a cycle between fragments") }

// errFragmentDepth: fragment spreads nest deeper than max (pg_graphql, max 50).
func errFragmentDepth(max int) error { return gqlError("Fragment cycle depth is greater than %d", max) }

// errNoFragment: a spread names a fragment missing or on another type than typeName (pg_graphql).
func errNoFragment(name, typeName string) error {
	return gqlError("no fragment named %s on type %s", name, typeName)
}

// errFieldsDiffer: one response key selects two different fields (pg_graphql).
func errFieldsDiffer(name, other string) error {
	return gqlError("Fields `%s` and `%s` are different", name, other)
}

// errFieldArgsDiffer: one response key selects a field twice with different arguments (pg_graphql).
func errFieldArgsDiffer(key string) error {
	return gqlError("Two fields named `%s` have different arguments", key)
}

// errUnknownDirective: a directive other than @skip and @include (pg_graphql).
func errUnknownDirective(name string) error { return gqlError("Unknown directive %s", name) }

// errDirectiveArguments: @skip or @include without exactly one argument (pg_graphql).
func errDirectiveArguments(directive string) error {
	return gqlError("Incorrect arguments to directive @%s", directive)
}

// errDirectiveArgument: @skip or @include with an argument other than if (pg_graphql).
func errDirectiveArgument(directive, arg string) error {
	return gqlError("Unknown argument to @%s: %s", directive, arg)
}

// errDirectiveIf: the if of @skip or @include is missing or not a Boolean (pg_graphql).
func errDirectiveIf(directive string) error {
	return gqlError(`Value for "if" in @%s directive is required`, directive)
}

// errUnknownField: an unknown field on a root type (Query, Mutation) or a byPk node, name double-quoted and
// type bare (pg_graphql).
func errUnknownField(field, typeName string) error {
	return gqlError(`Unknown field "%s" on type %s`, field, typeName)
}

// errUnknownNodeField: an unknown field on a node reached through a connection, relationship or function,
// both names single-quoted (pg_graphql).
func errUnknownNodeField(field, typeName string) error {
	return gqlError(`Unknown field '%s' on type '%s'`, field, typeName)
}

// errUnknownConnectionField: an unknown connection field, totalCount when not enabled included (pg_graphql).
func errUnknownConnectionField() error { return gqlError("unknown field in connection") }

// errUnknownEdgeField: an unknown field of an edge (pg_graphql).
func errUnknownEdgeField() error { return gqlError("unknown field in edge") }

// errUnknownPageInfoField: an unknown field of PageInfo (pg_graphql).
func errUnknownPageInfoField() error { return gqlError("unknown field in pageInfo") }

// errAggregateDisabled: aggregate selected on a table without the aggregate directive (pg_graphql).
func errAggregateDisabled() error {
	return gqlError("enable the aggregate directive to use aggregates")
}

// errUnknownAggregateField: an unknown field of an aggregate (pg_graphql).
func errUnknownAggregateField(field, typeName string) error {
	return gqlError(`Unknown field "%s" selected on type "%s"`, field, typeName)
}

// errUnknownAggregateColumn: a column an aggregate group (sum, avg, min, max) does not offer (pg_graphql).
func errUnknownAggregateColumn(field, typeName string) error {
	return gqlError(`Unknown or invalid field "%s" selected on type "%s"`, field, typeName)
}

// errNoSubselection: a field of object type selected without subfields (pg_graphql).
func errNoSubselection(field, typeName string) error {
	return gqlError("Field %s of type %s must have a selection of subfields", field, typeName)
}

// errUnknownMutationField: an unknown field of an insert, update or delete response; op names the mutation
// ("insert", "update", "delete") as the message does (pg_graphql).
func errUnknownMutationField(op string) error { return gqlError("unknown field in %s", op) }

// Introspection: each meta type has its own pg_graphql message for an unknown field.

// errUnknownSchemaField: an unknown field of __Schema (pg_graphql).
func errUnknownSchemaField(field string) error {
	return gqlError("unknown field in __Schema: %s", field)
}

// errUnknownTypeField: an unknown field of __Type (pg_graphql).
func errUnknownTypeField(field string) error { return gqlError("unknown field on __Type: %s", field) }

// errUnknownMetaFieldField: an unknown field of __Field, without pg_graphql's usual colon (pg_graphql).
func errUnknownMetaFieldField(field string) error {
	return gqlError("unknown field in __Field %s", field)
}

// errUnknownDirectiveField: an unknown field of __Directive, name in the middle (pg_graphql).
func errUnknownDirectiveField(field string) error {
	return gqlError("unknown field %s in __Directive", field)
}

// errUnknownEnumValueField: an unknown field of __EnumValue (pg_graphql).
func errUnknownEnumValueField(field string) error {
	return gqlError("unknown field in __EnumValue: %s", field)
}

// errUnknownInputValueField: an unknown field of __InputValue (pg_graphql).
func errUnknownInputValueField(field string) error {
	return gqlError("unknown field in __InputValue: %s", field)
}

// errTypeNameMissing: __type without a name or with null (pg_graphql's internal-check text).
func errTypeNameMissing() error { return gqlError("Internal Error: failed to parse validated name") }

// errTypeNameNotString: __type(name:) with a value that is not a String (pg_graphql).
func errTypeNameNotString() error { return gqlError("no name found for __type") }

// Input coercion: arguments, variables and literals against their declared types.

// errIntLiteral: an integer literal outside 64 bits (pg_graphql).
func errIntLiteral() error { return gqlError("Invalid Int input") }

// errInvalidLiteral: a literal of a kind gqlparser does not produce; a guard, not in the contract.
func errInvalidLiteral() error { return gqlError("Invalid input") }

// errInvalidInput: a value that does not coerce to the named type; typeName is the GraphQL name, or NonNull
// for a missing required value (pg_graphql).
func errInvalidInput(typeName string) error { return gqlError("Invalid input for %s type", typeName) }

// errBigFloatNotString: a BigFloat given as anything but a string (pg_graphql).
func errBigFloatNotString() error {
	return gqlError("Invalid input for BigFloat type. String required")
}

// errInvalidString: a String that is not a string, in Rust's rendering of pg_graphql's scalar: String(None)
// without a length limit, String(Some(n)) for a varchar(n) column (pg_graphql).
func errInvalidString(maxLen int) error {
	if maxLen > 0 {
		return gqlError("Invalid input for String(Some(%d)) type", maxLen)
	}
	return gqlError("Invalid input for String(None) type")
}

// errStringTooLong: a string longer, in bytes, than its varchar(n) column (pg_graphql).
func errStringTooLong(max int) error {
	return gqlError("Invalid input for String type. Maximum character length %d", max)
}

// errUnknownInputType: a value declared of a type the schema does not have; validation catches it first, so
// this is a guard, not in the contract.
func errUnknownInputType(name string) error { return gqlError("Unknown type %s", name) }

// errExtraArguments: a field given arguments it does not declare (pg_graphql).
func errExtraArguments(names []string) error {
	return gqlError("Input contains extra keys %s", rustList(names))
}

// errExtraInputKeys: an input object with keys its type does not declare (pg_graphql).
func errExtraInputKeys(typeName string, keys []string) error {
	return gqlError("Input for type %s contains extra keys %s", typeName, rustList(keys))
}

// Filters.

// errIsFilterValue: is: null in a filter (pg_graphql).
func errIsFilterValue() error { return gqlError("Error transpiling Is filter value type") }

// errFilterOperation: a filter operator the column's filter type does not have (pg_graphql).
func errFilterOperation(op string) error { return gqlError("Invalid filter operation: %s", op) }

// Cursors and pagination.

// errNotUnsigned: first, last or offset below zero (pg_graphql).
func errNotUnsigned(arg string) error { return gqlError("`%s` must be an unsigned integer", arg) }

// errFirstAndLast: both first and last (pg_graphql).
func errFirstAndLast() error { return gqlError(`only one of "first" and "last" may be provided`) }

// errBeforeAndAfter: both before and after (pg_graphql).
func errBeforeAndAfter() error { return gqlError(`only one of "before" and "after" may be provided`) }

// errFirstWithBefore: first with before (pg_graphql).
func errFirstWithBefore() error { return gqlError(`"first" may only be used with "after"`) }

// errLastWithAfter: last with after (pg_graphql).
func errLastWithAfter() error { return gqlError(`"last" may only be used with "before"`) }

// errOffsetBackwards: offset with last or before (pg_graphql).
func errOffsetBackwards() error {
	return gqlError(`"offset" may only be used with "first" and "after"`)
}

// errCursorOrderBy: a cursor whose values do not match the orderBy columns (pg_graphql).
func errCursorOrderBy() error { return gqlError("orderBy clause incompatible with pagination cursor") }

// errCursorDecode: a cursor that fails a decoding step: 1 base64, 2 UTF-8, 3 JSON, 4 not an array
// (pg_graphql).
func errCursorDecode(step int) error { return gqlError("Failed to decode cursor, error %d", step) }

// nodeId.

// errNodeIDNotString: a nodeId that is not a string; pg_graphql writes a comma here, a period in the other
// steps (pg_graphql).
func errNodeIDNotString() error { return gqlError("Invalid value passed to nodeId argument, Error 1") }

// errNodeIDDecode: a nodeId that fails a decoding step: 2 base64, 3 UTF-8, 4 JSON, 10 not an array, 5 fewer
// than three elements, 6 schema not a string, 7 table not a string (pg_graphql).
func errNodeIDDecode(step int) error {
	return gqlError("Invalid value passed to nodeId argument. Error %d", step)
}

// errNodeIDCollection: a nodeId naming a table the role's schema does not have (pg_graphql).
func errNodeIDCollection() error {
	return gqlError("Collection referenced by nodeId did not match any known collection")
}

// errNodeIDKeyCount: a nodeId with another number of key values than its table's primary key (pg_graphql).
func errNodeIDKeyCount(want, got int) error {
	return gqlError("Primary key column count mismatch. Expected %d, provided %d", want, got)
}

// errNodeIDOtherCollection: a nodeId filter naming another table than the one filtered (pg_graphql).
func errNodeIDOtherCollection() error { return gqlError("nodeId belongs to a different collection") }

// errMissingPrimaryKey: a byPk field without some key columns, named by their SQL names (pg_graphql).
func errMissingPrimaryKey(columns []string) error {
	return gqlError("Missing primary key column(s): %s", strings.Join(columns, ", "))
}

// Mutations.

// errNoRecords: an insert with an empty objects list (pg_graphql).
func errNoRecords() error { return gqlError("At least one record must be provided to objects") }

// errNoMappings: an update whose set names no column (pg_graphql).
func errNoMappings() error { return gqlError("At least one mapping must be provided to set argument") }

// updateTooMany and deleteTooMany answer an update or delete that would touch more rows than its atMost; the
// statement carries the text and fails with it, and sqlgen.TooManyFailure finds it again (pg_graphql).
const (
	updateTooMany = "update impacts too many records"
	deleteTooMany = "delete impacts too many records"
)

// Extensions: pgreflect's nested inserts (docs/extensions.md).

// errNestedOnConflict: onConflict on an insert that also writes related rows.
func errNestedOnConflict() error {
	return gqlError("onConflict cannot be combined with nested inserts")
}

// errNestedTooMany: a nested insert writing more than max rows in all.
func errNestedTooMany(max int) error {
	return gqlError("A nested insert may write at most %d records", max)
}

// errNestedColumnTwice: two relationships of one object fill the same foreign key column.
func errNestedColumnTwice(typeName, column, field string) error {
	return gqlError("Input for type %s sets column %s twice (%s fills it)", typeName, column, field)
}

// errNestedColumnFilled: an object sets a column the relationship to its parent fills.
func errNestedColumnFilled(typeName, field string) error {
	return gqlError("Input for type %s sets column %s, which its relationship fills", typeName, field)
}

// Limits: pgreflect's bounds on a request (docs/operations.md).

// errTooComplex: expanding the fragments takes more than steps units of work.
func errTooComplex(steps int) error {
	return gqlError("Query is too complex: spreading its fragments takes more than %d steps", steps)
}

// errTooManyFields: more than max fields once fragments are spread.
func errTooManyFields(max int) error {
	return gqlError("Query selects more than %d fields after fragments are spread", max)
}

// errTooDeep: selections nested more than max levels.
func errTooDeep(max int) error { return gqlError("Query is nested more than %d levels deep", max) }

// errTooManyAliases: more than max aliases.
func errTooManyAliases(max int) error { return gqlError("Query uses more than %d aliases", max) }

// errTooManyParameters: one statement would bind n parameters, over max.
func errTooManyParameters(n, max int) error {
	return gqlError("Query needs %d parameters in one statement; the limit is %d", n, max)
}

// Internal failures and pass-through.

// errInternal answers a failure that is not the client's doing, without its text; requestID ("" when
// unknown) lets an operator find the logged cause.
func errInternal(requestID string) error { return &clientError{msg: InternalErrorMessage(requestID)} }

// InternalErrorMessage is the text of errInternal, exported so that the HTTP layer answers its own internal
// failures (a panic) with the same words.
func InternalErrorMessage(requestID string) string {
	if requestID == "" {
		return "Internal server error"
	}
	return "Internal server error (request id " + requestID + ")"
}

// errPassThrough answers with a text written elsewhere, verbatim: Postgres' own message (pgErr.Message, as
// pg_graphql passes it on), a comment directive's error from package reflect, or the atMost text a failed
// statement carried back.
func errPassThrough(message string) error { return &clientError{msg: message} }
