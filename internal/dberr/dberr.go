// Package dberr tells an unavailable database from other failures, so that both APIs answer an outage with
// their one 503 and keep 500 for bugs.
package dberr

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// Unavailable reports whether err means the database could not be reached, went away or did not answer: a
// failed connect, a network error, a pool closed under the request, the server shutting down or refusing
// connections, or the request's deadline passing while it waited on the database (a server that answers
// reports its own statement timeout first).
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	if errors.As(err, &connectErr) || errors.As(err, &netErr) || errors.Is(err, puddle.ErrClosedPool) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 57P01-57P03: admin shutdown, crash shutdown, cannot connect now.
		return pgErr.Code[:2] == "08" || pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03"
	}
	return false
}

// StorableText reports whether Postgres can hold s as text: no NUL, and valid UTF-8 (what a UTF8 database,
// every one pgreflect sets up, accepts). A client's value that is not is the client's mistake, to be refused
// or passed by before it reaches the database, which would fail the statement.
func StorableText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// RefusedText reports whether err is Postgres refusing a text value it cannot hold (NUL, or bytes that are not
// characters of the database's encoding): a value the client sent, where no check caught it before.
func RefusedText(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "22021" || pgErr.Code == "22P05")
}
