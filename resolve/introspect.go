package resolve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"

	"github.com/pgreflect/pgreflect/gqlschema"
)

// IntrospectionQuery is graphql-js's getIntrospectionQuery with descriptions on: what GraphiQL and
// graphql-codegen send.
const IntrospectionQuery = `query IntrospectionQuery { __schema { queryType { name } mutationType { name } subscriptionType { name }
		types { ...FullType } directives { name description locations args { ...InputValue } } } }
	fragment FullType on __Type { kind name description
		fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
		inputFields { ...InputValue } interfaces { ...TypeRef }
		enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason } possibleTypes { ...TypeRef } }
	fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
	fragment TypeRef on __Type { kind name ofType { kind name ofType { kind name ofType { kind name ofType {
		kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } } } }`

// Introspect answers IntrospectionQuery for schema without a database, as the response body
// ({"data": {"__schema": ...}}). It answers even when no exposed schema enables introspection: then every
// type is shown, which is the API the role can call; when some schemas enable it, the others stay hidden as
// they are from clients.
func Introspect(ctx context.Context, schema *gqlschema.Schema) ([]byte, error) {
	shown := *schema
	shown.Introspection = true
	c := compile(ctx, &shown, planning{introWorkers: runtime.GOMAXPROCS(0)}, Request{Query: IntrospectionQuery})
	if c.response == nil {
		return nil, errors.New("introspection: the request needed the database")
	}
	// An answer without errors is known without reading it: decoding the whole answer to look for its errors
	// took as long as making it at 5,000 tables.
	if c.errors == nil && bytes.HasPrefix(c.response, []byte(`{"data": {`)) {
		return c.response, nil
	}
	var body struct {
		Errors []struct {
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(c.response, &body); err != nil {
		return nil, fmt.Errorf("introspection: %w", err)
	}
	if len(body.Errors) > 0 {
		return nil, fmt.Errorf("introspection: %s", body.Errors[0].Message)
	}
	return c.response, nil
}
