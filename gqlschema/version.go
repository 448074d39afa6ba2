package gqlschema

import (
	"fmt"
	"strings"
)

// Version is the pg_graphql release line whose behaviour the generated schema follows. A project pins one
// (config.toml [graphql] version, or the management API) so that upgrading pgreflect never changes its API
// by itself, the way a database keeps its installed_version of the extension until the owner upgrades it.
type Version string

// The versions pgreflect can follow, oldest first.
const (
	// V15 is pg_graphql 1.5 (1.5.12): introspection always on, no <x>ByPk root fields, aggregates opt-in.
	V15 Version = "1.5"
	// V16 is pg_graphql 1.6 (1.6.1): introspection opt-in per schema, <x>ByPk root fields.
	V16 Version = "1.6"
)

// Versions lists the supported versions, oldest first.
var Versions = []Version{V15, V16}

// NewestVersion is the default_version of pg_available_extensions: what a new project starts with.
const NewestVersion = V16

// ParseVersion accepts a supported version, also written with its patch level ("1.5.12") or a leading "v".
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if parts := strings.SplitN(t, ".", 3); len(parts) == 3 {
		t = parts[0] + "." + parts[1]
	}
	for _, v := range Versions {
		if string(v) == t {
			return v, nil
		}
	}
	return "", fmt.Errorf("unsupported pg_graphql version %q: supported are %s", s, versionList())
}

func versionList() string {
	names := make([]string, len(Versions))
	for i, v := range Versions {
		names[i] = string(v)
	}
	return strings.Join(names, ", ")
}

// introspectionOptIn reports whether introspection needs the schema directive (1.6) rather than always
// answering with every type (1.5).
func (v Version) introspectionOptIn() bool { return v != V15 }

// byPk reports whether the <x>ByPk root fields exist (since 1.6.0).
func (v Version) byPk() bool { return v != V15 }
