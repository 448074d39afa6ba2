package apisettings

import (
	"fmt"
	"strings"
)

// The management API's texts of the API settings: every 400 a client reads is made here
// (TestMessagesLiveInTheCatalogue), in the shape of the auth settings' ({"message": "Invalid value for
// <field>: <reason>"}).

// BadRequest is a client's mistake, answered with 400 and its message.
type BadRequest struct {
	Field  string
	Reason string
}

func (e *BadRequest) Error() string {
	if len(e.Field) == 0 {
		return e.Reason
	}
	return fmt.Sprintf("Invalid value for %s: %s", e.Field, e.Reason)
}

// The fields of the bodies.
const (
	versionField = "version"
	schemasField = "db_schema"
)

// badField is a bad value of a field.
func badField(field, reason string) *BadRequest { return &BadRequest{Field: field, Reason: reason} }

// errNotAnObject answers a body that is not the JSON object of the route.
func errNotAnObject() *BadRequest { return &BadRequest{Reason: "Request body must be a JSON object"} }

const (
	reasonRequired  = "required"
	reasonNoSchema  = "names no schema"
	reasonNotStored = "not a setting stored over supabase/config.toml"
)

func reasonTooManySchemas(n int) string { return fmt.Sprintf("more than %d schemas", n) }

// reasonInvalidSchemaName: Postgres cuts longer names to 63 bytes, which would expose another schema than the
// one named.
func reasonInvalidSchemaName(name string) string {
	return fmt.Sprintf("%q is not a valid schema name", name)
}

func reasonNoSuchSchemas(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return fmt.Sprintf("no schema named %s in the database", strings.Join(q, ", "))
}
