package gqlschema

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsValidName reports whether s is a legal GraphQL name: /^[_A-Za-z][_0-9A-Za-z]*$/. A loop, not that regular
// expression: a schema build asks for every column's name of every role, and the regular expression was a
// sixth of a build at 5,000 tables.
func IsValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// base is pg_graphql's inflection: upper-case every character that follows a non-alphanumeric one (the first
// counts as such), then drop underscores. Nothing is lower-cased. Without inflection names stay verbatim.
func base(name string, inflect bool) string {
	if !inflect {
		return name
	}
	var b strings.Builder
	prevAlnum := false
	for _, r := range name {
		if !prevAlnum {
			r = unicode.ToUpper(r)
		}
		prevAlnum = unicode.IsLetter(r) || unicode.IsDigit(r)
		if r != '_' {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// InflectedField is the field name pg_graphql's inflection gives a SQL name: original_language_id ->
// originalLanguageId.
func InflectedField(sql string) string { return lcfirst(base(sql, true)) }

// lcfirst lower-cases the first character only.
func lcfirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	if n == 0 {
		return s
	}
	return string(unicode.ToLower(r)) + s[n:]
}
