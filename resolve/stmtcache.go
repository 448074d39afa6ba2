package resolve

import (
	"math/rand/v2"
	"strconv"

	"github.com/jackc/pgx/v5/pgconn"
)

const statementCacheKey = "pgreflect.statements"

// maxPreparedPerConn bounds the statements kept prepared on one connection (each holds a plan in the backend).
const maxPreparedPerConn = 256

// statementCache maps (role, SQL text) to the statement prepared for it on one connection: its name and the
// description of its parameters and result columns, so that running it again sends neither a Describe nor
// makes Postgres send the row description again (as pgx's own statement cache does). Names
// are never reused, so a deallocation lost to an aborted pipeline leaves only an unused statement behind, and
// they are unique to the connection: behind a transaction pooler (where the unnamed mode belongs, but a
// misconfigured server may still run this one) a backend may hold statements other clients prepared, and a
// name of theirs taken for ours would run their statement. With unique names the worst is a statement that
// does not exist, which runPipeline answers by preparing again.
type statementCache struct {
	names  map[preparedKey]*pgconn.StatementDescription
	order  []preparedKey // least recently prepared first
	prefix string
	next   int
}

type preparedKey struct{ role, sql string }

// preparation is a statement being prepared in the current pipeline.
type preparation struct{ role, sql, name string }

func statementsOf(pc *pgconn.PgConn) *statementCache {
	data := pc.CustomData()
	c, ok := data[statementCacheKey].(*statementCache)
	if !ok {
		c = &statementCache{names: map[preparedKey]*pgconn.StatementDescription{}, prefix: "pgreflect_" + strconv.FormatUint(rand.Uint64(), 36) + "_"}
		data[statementCacheKey] = c
	}
	return c
}

// forgetStatements drops the record of what is prepared, after the server lost its prepared statements
// (DISCARD ALL, a pooler handing us another backend); names stay unused.
func forgetStatements(pc *pgconn.PgConn) {
	c := statementsOf(pc)
	c.names, c.order = map[preparedKey]*pgconn.StatementDescription{}, nil
}

func (c *statementCache) lookup(role, sql string) (*pgconn.StatementDescription, bool) {
	sd, ok := c.names[preparedKey{role, sql}]
	return sd, ok
}

func (c *statementCache) newName() string {
	c.next++
	return c.prefix + strconv.Itoa(c.next)
}

// add records a statement the server has prepared, with the description it answered (which pgx leaves
// unnamed in a pipeline).
func (c *statementCache) add(p preparation, sd *pgconn.StatementDescription) {
	k := preparedKey{p.role, p.sql}
	sd.Name, sd.SQL = p.name, p.sql
	c.names[k] = sd
	c.order = append(c.order, k)
}

// evict makes room for incoming new statements and returns the names to deallocate.
func (c *statementCache) evict(incoming int) []string {
	var names []string
	for len(c.order)+incoming > maxPreparedPerConn && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		names = append(names, c.names[k].Name)
		delete(c.names, k)
	}
	return names
}

func findPreparation(ps []preparation, role, sql string) (string, bool) {
	for _, p := range ps {
		if p.role == role && p.sql == sql {
			return p.name, true
		}
	}
	return "", false
}
