package gqlschema

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

var validName = regexp.MustCompile(`^[_A-Za-z][_0-9A-Za-z]*$`)

// IsValidName reports whether s is a legal GraphQL name.
func IsValidName(s string) bool { return validName.MatchString(s) }

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
