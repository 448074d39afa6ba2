package resolve

import (
	"context"
	"encoding/json"
	"testing"
)

// GraphQL language handling (spec 1.20) and the request-level messages of 2.3/2.4.

// run resolves a request with an operation name as service_role.
func (d *testDB) run(query, operationName, variables string) string {
	d.t.Helper()
	req := Request{Query: query, OperationName: operationName}
	if variables != "" {
		req.Variables = json.RawMessage(variables)
	}
	return string(d.engine.ExecuteAs(context.Background(), d.conn, Session{Role: "service_role", Claims: map[string]any{"role": "service_role"}, SearchPath: []string{"public"}}, req))
}

func TestOperationSelection(t *testing.T) {
	d := newTestDB(t, blogFixture)
	doc := `mutation insertAccount { insertIntoAccountCollection(objects: [{email: "new@x.com"}]) { records { id } } }
		mutation deleteAccount { deleteFromAccountCollection(filter: {id: {eq: 6}}) { affectedCount records { id } } }
		query countAccounts { accountCollection(filter: {id: {gte: 5}}) { edges { node { id } } } }`
	for _, tc := range []struct{ name, want string }{
		{"insertAccount", `{"data": {"insertIntoAccountCollection": {"records": [{"id": 6}]}}}`},
		{"countAccounts", `{"data": {"accountCollection": {"edges": [{"node": {"id": 5}}, {"node": {"id": 6}}]}}}`},
		{"deleteAccount", `{"data": {"deleteFromAccountCollection": {"records": [{"id": 6}], "affectedCount": 1}}}`},
		{"", `{"errors": [{"message": "Operation not found"}]}`},
		{"invalidName", `{"errors": [{"message": "Operation not found"}]}`},
	} {
		if got := d.run(doc, tc.name, ""); got != tc.want {
			t.Errorf("operationName %q\n got: %s\nwant: %s", tc.name, got, tc.want)
		}
	}
	// One operation needs no name; extra definitions of fragments are fine.
	if got := d.run(`query One { accountByPk(id: 1) { ...F } } fragment F on Account { email }`, "", ""); got != `{"data": {"accountByPk": {"email": "aardvark@x.com"}}}` {
		t.Errorf("single operation: %s", got)
	}
	if got := d.run(`query One { __typename }`, "Other", ""); got != `{"errors": [{"message": "Operation not found"}]}` {
		t.Errorf("single operation, wrong name: %s", got)
	}
}

func TestFragments(t *testing.T) {
	d := newTestDB(t, blogFixture)
	d.expect(`{ accountByPk(id: 1) { ...A ... on Account { id } ... on Blog { name } ... { email } } } fragment A on Account { createdAt }`,
		`{"data": {"accountByPk": {"id": 1, "email": "aardvark@x.com", "createdAt": "2023-07-28T12:40:05"}}}`)
	for query, want := range map[string]string{
		`{ accountCollection { ...F } } fragment F on Account { id }`:                 "no fragment named F on type AccountConnection",
		`{ accountByPk(id: 1) { ...Missing } }`:                                       "no fragment named Missing on type Account",
		`{ accountCollection { edges { node { ...F } } } } fragment F on Blog { id }`: "no fragment named F on type Account",
	} {
		if got, exp := d.query(query), `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
	// A wrong fragment at the root is a per-field error too: the other root fields still answer.
	d.expect(`{ ...Q accountByPk(id: 1) { id } } fragment Q on Mutation { __typename }`,
		`{"errors": [{"message": "no fragment named Q on type Query"}]}`)
	d.expect(`{ ...A } fragment A on Query { ...B } fragment B on Query { a: __typename ...C } fragment C on Query { b: __typename }`,
		`{"data": {"a": "Query", "b": "Query"}}`)
}

func TestSkipAndInclude(t *testing.T) {
	d := newTestDB(t, blogFixture)
	q := `query Q($s: Boolean!, $i: Boolean!) { accountByPk(id: 1) { id email @skip(if: $s) createdAt @include(if: $i) ... on Account @skip(if: $s) { updatedAt } ...F @include(if: $i) } } fragment F on Account { nodeId }`
	for vars, want := range map[string]string{
		`{"s": true, "i": false}`:  `{"data": {"accountByPk": {"id": 1}}}`,
		`{"s": false, "i": true}`:  `{"data": {"accountByPk": {"id": 1, "email": "aardvark@x.com", "nodeId": "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDFd", "createdAt": "2023-07-28T12:40:05", "updatedAt": "2023-07-28T12:40:05"}}}`,
		`{"s": true, "i": true}`:   `{"data": {"accountByPk": {"id": 1, "nodeId": "WyJwdWJsaWMiLCAiYWNjb3VudCIsIDFd", "createdAt": "2023-07-28T12:40:05"}}}`,
		`{"s": false, "i": false}`: `{"data": {"accountByPk": {"id": 1, "email": "aardvark@x.com", "updatedAt": "2023-07-28T12:40:05"}}}`,
	} {
		if got := d.as("service_role", nil, q, vars); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", vars, got, want)
		}
	}
	d.expect(`{ accountByPk(id: 1) { id email @skip(if: true) createdAt @include(if: false) } }`, `{"data": {"accountByPk": {"id": 1}}}`)
	// Root fields can be skipped; skipping all of them leaves an empty selection.
	d.expect(`{ a: __typename @include(if: true) accountByPk(id: 1) @skip(if: true) { id } }`, `{"data": {"a": "Query"}}`)
	for _, tc := range []struct{ query, vars, want string }{
		{`query Q($s: Boolean) { accountByPk(id: 1) { id @skip(if: $s) } }`, ``, `Value for "if" in @skip directive is required`},
		{`query Q($s: Boolean) { accountByPk(id: 1) { id @include(if: $s) } }`, `{"s": "yes"}`, `Value for "if" in @include directive is required`},
		{`{ accountByPk(id: 1) { id @skip } }`, ``, `Incorrect arguments to directive @skip`},
		{`{ accountByPk(id: 1) { id @include(if: true, unless: false) } }`, ``, `Incorrect arguments to directive @include`},
		{`{ accountByPk(id: 1) { id @include(when: true) } }`, ``, `Unknown argument to @include: when`},
		{`{ accountByPk(id: 1) { id @deprecated } }`, ``, `Unknown directive deprecated`},
	} {
		if got, exp := d.as("service_role", nil, tc.query, tc.vars), `{"data": null, "errors": [{"message": `+jsonString(tc.want)+`}]}`; got != exp {
			t.Errorf("%s %s\n got: %s\nwant: %s", tc.query, tc.vars, got, exp)
		}
	}
	// A variable default applies to directives too (pg_graphql reads only the variables; docs/compatibility.md).
	d.expect(`query Q($s: Boolean = true) { accountByPk(id: 1) { id email @skip(if: $s) } }`, `{"data": {"accountByPk": {"id": 1}}}`)
}

func TestFieldMerging(t *testing.T) {
	d := newTestDB(t, `
		comment on schema public is '@graphql({"inflect_names": true})';
		create table blog_post(id int primary key, a text, b text, c text);
		insert into blog_post values (1, 'a', 'b', 'c');
		grant select on blog_post to service_role;
	`)
	// Same field, same arguments: the selections merge.
	d.expect(`{ blogPostCollection { edges { node { a } } } blogPostCollection { edges { node { b } cursor } } }`,
		`{"data": {"blogPostCollection": {"edges": [{"node": {"a": "a", "b": "b"}, "cursor": "WzFd"}]}}}`)
	d.expect(`{ x: blogPostCollection { edges { node { a } } } x: blogPostCollection { edges { node { c: c a } } } }`,
		`{"data": {"x": {"edges": [{"node": {"a": "a", "c": "c"}}]}}}`)
	// pg_graphql's expected outputs (issue_237_field_merging_mismatched).
	d.expect(`{ blogPostCollection { edges { node { a } } } blogPostCollection { edges { node { a: b } } } }`,
		"{\"data\": null, \"errors\": [{\"message\": \"Fields `b` and `a` are different\"}]}")
	d.expect(`{ blogPostCollection(filter: {id: {eq: 1}}) { edges { node { a } } } blogPostCollection { edges { node { b } } } }`,
		"{\"errors\": [{\"message\": \"Two fields named `blogPostCollection` have different arguments\"}]}")
	d.expect(`{ blogPostCollection { a: edges { cursor } } blogPostCollection { a: pageInfo { cursor: endCursor } } }`,
		"{\"data\": null, \"errors\": [{\"message\": \"Fields `pageInfo` and `edges` are different\"}]}")
	// At the root, a name conflict is a request-level error.
	d.expect(`{ x: blogPostCollection { edges { cursor } } x: __typename }`,
		"{\"errors\": [{\"message\": \"Fields `__typename` and `blogPostCollection` are different\"}]}")
}

func TestVariables(t *testing.T) {
	d := newTestDB(t, blogFixture)
	q := `query Q($first: Int = 2, $email: String, $filter: AccountFilter) { accountCollection(first: $first, filter: $filter) { edges { node { id } } } }`
	for vars, want := range map[string]string{
		``:                              `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}]}}}`,
		`{}`:                            `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}]}}}`,
		`{"first": 1}`:                  `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}`,
		`{"first": null}`:               `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}, {"node": {"id": 2}}, {"node": {"id": 3}}, {"node": {"id": 4}}, {"node": {"id": 5}}]}}}`,
		`{"filter": {"id": {"eq": 3}}}`: `{"data": {"accountCollection": {"edges": [{"node": {"id": 3}}]}}}`,
		`{"filter": {"id": {"eq": 3}}, "unused": [1]}`: `{"data": {"accountCollection": {"edges": [{"node": {"id": 3}}]}}}`,
	} {
		if got := d.as("service_role", nil, q, vars); got != want {
			t.Errorf("variables %s\n got: %s\nwant: %s", vars, got, want)
		}
	}
	// Declared variable types are not checked; values are checked where they are used.
	if got := d.as("service_role", nil, `query Q($n: String) { accountCollection(first: $n) { edges { cursor } } }`, `{"n": 1}`); got != `{"data": {"accountCollection": {"edges": [{"cursor": "WzFd"}]}}}` {
		t.Errorf("undeclared-type variable: %s", got)
	}
	for _, tc := range []struct{ vars, want string }{
		{`{"n": "1"}`, `Invalid input for Int type`},
		{`{"n": 1.5}`, `Invalid input for Int type`},
	} {
		got := d.as("service_role", nil, `query Q($n: Int) { accountCollection(first: $n) { edges { cursor } } }`, tc.vars)
		if exp := `{"data": null, "errors": [{"message": ` + jsonString(tc.want) + `}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", tc.vars, got, exp)
		}
	}
	for _, vars := range []string{`"x"`, `1`, `true`, `[]`, `{"n": 1}garbage`, `{} {}`} {
		if got := d.as("service_role", nil, `{ __typename }`, vars); got != `{"errors": [{"message": "variables must be an object"}]}` {
			t.Errorf("variables %s: %s", vars, got)
		}
	}
	if got := d.as("service_role", nil, `{ __typename }`, `null`); got != `{"data": {"__typename": "Query"}}` {
		t.Errorf("null variables: %s", got)
	}
}

func TestInputCoercionMessages(t *testing.T) {
	d := newTestDB(t, blogFixture)
	for query, want := range map[string]string{
		`{ accountCollection(first: 99999999999999999999) { edges { cursor } } }`:      "Invalid Int input",
		`{ accountCollection(filter: 1) { edges { cursor } } }`:                        "Invalid input for AccountFilter type",
		`{ accountCollection(filter: {id: 1}) { edges { cursor } } }`:                  "Invalid input for IntFilter type",
		`{ accountCollection(filter: {id: {is: MAYBE}}) { edges { cursor } } }`:        "Invalid input for FilterIs type",
		`{ accountCollection(filter: {id: {eq: true}}) { edges { cursor } } }`:         "Invalid input for Int type",
		`{ accountCollection(orderBy: [{id: 1}]) { edges { cursor } } }`:               "Invalid input for OrderByDirection type",
		`{ accountCollection(after: 1) { edges { cursor } } }`:                         "Invalid input for Cursor type",
		`{ node(nodeId: null) { nodeId } }`:                                            "Invalid input for NonNull type",
		`{ node(nodeId: 1) { nodeId } }`:                                               "Invalid input for ID type",
		`{ node(nodeId: FOO) { nodeId } }`:                                             "Invalid value passed to nodeId argument. Error 2",
		`{ node { nodeId } }`:                                                          "Invalid input for NonNull type",
		`{ blogPostCollection(filter: {id: {eq: 1}}) { edges { cursor } } }`:           "Invalid input for UUID type",
		`{ blogPostCollection(filter: {status: {eq: UNKNOWN}}) { edges { cursor } } }`: "Invalid input for BlogPostStatus type",
		`{ accountCollection(filter: {createdAt: {eq: 1}}) { edges { cursor } } }`:     "Invalid input for Datetime type",
	} {
		if got, exp := d.query(query), `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
	for query, want := range map[string]string{
		`mutation { insertIntoBlogCollection(objects: [1]) { affectedCount } }`:                                                     "Invalid input for BlogInsertInput type",
		`mutation { insertIntoAccountCollection(objects: [{invalidKey: 1}]) { affectedCount } }`:                                    `Input for type AccountInsertInput contains extra keys ["invalidKey"]`,
		`mutation { insertIntoAccountCollection(objects: null) { affectedCount } }`:                                                 "Invalid input for NonNull type",
		`mutation { insertIntoAccountCollection { affectedCount } }`:                                                                "Invalid input for NonNull type",
		`mutation { updateAccountCollection(set: null) { affectedCount } }`:                                                         "Invalid input for NonNull type",
		`mutation { updateAccountCollection(set: {email: "x"}, atMost: null) { affectedCount } }`:                                   "Invalid input for NonNull type",
		`mutation { insertIntoAccountCollection(objects: [{email: "` + string(make([]byte, 0)) + `x", id: 1}]) { affectedCount } }`: `Input for type AccountInsertInput contains extra keys ["id"]`,
	} {
		if got, exp := d.query(query), `{"data": null, "errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, exp)
		}
	}
}

func TestParseErrors(t *testing.T) {
	d := newTestDB(t, blogFixture)
	for query, want := range map[string]string{
		`{ viewer { login `:     "query parse error: Parse error at 1:18\nUnexpected end of input\nExpected Name\n",
		`{ a } }`:               "query parse error: Parse error at 1:7\nUnexpected `}[Punctuator]`\n",
		`where a`:               "query parse error: Parse error at 1:1\nUnexpected `where[Name]`\n",
		`{ 1users }`:            "query parse error: Parse error at 1:3\nUnexpected `1[Int]`\nExpected Name\n",
		``:                      "query parse error: Parse error at 1:1\nUnexpected end of input\nExpected `{`, `query`, `mutation`, `subscription` or `fragment`\n",
		"\n  ":                  "query parse error: Parse error at 2:3\nUnexpected end of input\nExpected `{`, `query`, `mutation`, `subscription` or `fragment`\n",
		`{ a % }`:               "query parse error: Parse error at 1:5\nUnexpected `unexpected character '%'`\nExpected Name\n",
		`{ a(x: ) }`:            "query parse error: Parse error at 1:8\nUnexpected `)[Punctuator]`\n",
		`query Q($a Int) { a }`: "query parse error: Parse error at 1:12\nUnexpected `Int[Name]`\nExpected `:`\n",
	} {
		if got, exp := d.query(query), `{"errors": [{"message": `+jsonString(want)+`}]}`; got != exp {
			t.Errorf("%q\n got: %s\nwant: %s", query, got, exp)
		}
	}
}

func TestPartialResponses(t *testing.T) {
	d := newTestDB(t, blogFixture)
	// One error per failing root field, in document order; data keeps the fields that planned.
	d.expect(`{ a: accountByPk(id: 1) { nope } b: accountCollection(first: -1) { edges { cursor } } }`,
		"{\"data\": null, \"errors\": [{\"message\": \"Unknown field \\\"nope\\\" on type Account\"}, {\"message\": \"`first` must be an unsigned integer\"}]}")
	d.expect(`{ a: accountByPk(id: 1) { email } b: accountCollection(first: 99999999999999999999) { edges { cursor } } c: __typename }`,
		`{"data": {"a": {"email": "aardvark@x.com"}, "c": "Query"}, "errors": [{"message": "Invalid Int input"}]}`)
	// A runtime SQL error fails the whole query.
	d.expect(`{ a: accountByPk(id: 1) { email } b: blogPostCollection(filter: {id: {eq: "not-a-uuid"}}) { edges { cursor } } }`,
		`{"data": null, "errors": [{"message": "invalid input syntax for type uuid: \"not-a-uuid\""}]}`)
}

func TestNestedMergingAndFragments(t *testing.T) {
	d := newTestDB(t, blogFixture)
	for query, want := range map[string]string{
		// A relationship selected twice (once through a fragment) merges its sub-selections.
		`{ blogCollection(first: 1) { edges { node { owner { id } ...F } } } } fragment F on Blog { owner { email } }`: `{"data": {"blogCollection": {"edges": [{"node": {"owner": {"id": 1, "email": "aardvark@x.com"}}}]}}}`,
		// Aliases keep differently paginated copies of one relationship apart.
		`{ accountByPk(id: 1) { a: blogCollection(first: 1) { edges { node { name } } } b: blogCollection(first: 2) { edges { node { name } } } } }`: `{"data": {"accountByPk": {"a": {"edges": [{"node": {"name": "A: Blog 1"}}]}, "b": {"edges": [{"node": {"name": "A: Blog 1"}}, {"node": {"name": "A: Blog 2"}}]}}}}`,
		// Inline fragments on every level of a connection.
		`{ accountCollection(first: 1) { ... on AccountConnection { edges { ... on AccountEdge { node { ... on Account { id } } } } } } }`:         `{"data": {"accountCollection": {"edges": [{"node": {"id": 1}}]}}}`,
		`{ accountByPk(id: 1) { blogCollection(first: 1) { edges { node { owner { __typename } __typename } } } } }`:                               `{"data": {"accountByPk": {"blogCollection": {"edges": [{"node": {"owner": {"__typename": "Account"}, "__typename": "Blog"}}]}}}}`,
		`{ accountByPk(id: 1) { x: blogCollection(first: 1) { edges { node { name } } } x: blogCollection(first: 2) { edges { node { id } } } } }`: "{\"data\": null, \"errors\": [{\"message\": \"Two fields named `x` have different arguments\"}]}",
		`{ accountByPk(id: 1) { email email e: email } }`:                 `{"data": {"accountByPk": {"e": "aardvark@x.com", "email": "aardvark@x.com"}}}`,
		`{ ...on Query { accountByPk(id: 1) { id } } }`:                   `{"data": {"accountByPk": {"id": 1}}}`,
		`{ accountByPk(id: 1) { ... @include(if: false) { id } email } }`: `{"data": {"accountByPk": {"email": "aardvark@x.com"}}}`,
	} {
		if got := d.query(query); got != want {
			t.Errorf("%s\n got: %s\nwant: %s", query, got, want)
		}
	}
}
