package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/pgreflect/pgreflect/resolve"
	"github.com/pgreflect/pgreflect/sqlgen"
)

// Publication is the publication whose tables the change feed decodes. `pgreflect setup` creates it empty; the
// feed adds the tables that live queries read, when they have a replica identity (a primary key): a
// publication of every table would make UPDATE and DELETE fail on tables without one.
const Publication = "pgreflect_live"

// FeedOptions configure the change feed.
type FeedOptions struct {
	// URL connects with the REPLICATION attribute (or as a superuser) and may add tables to the publication
	// (it owns them, or is a superuser).
	URL    string
	Logger *slog.Logger
	// Retry is the wait before reconnecting after the feed was lost; default 1s.
	Retry time.Duration
}

// RunFeed follows the database's committed changes by logical decoding (pgoutput, on a temporary slot that the
// server drops when the connection ends, even when this process is killed) and tells the hub which tables
// changed. While it is not connected, the hub polls. It returns when ctx is done.
func (h *Hub) RunFeed(ctx context.Context, opts FeedOptions) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Retry <= 0 {
		opts.Retry = time.Second
	}
	warned := ""
	for ctx.Err() == nil {
		err := h.follow(ctx, opts)
		h.SetFeed(false)
		if ctx.Err() != nil {
			return
		}
		// Changes made while the feed was away are unknown: refresh everything once.
		h.Changed(nil)
		if msg := err.Error(); msg != warned {
			opts.Logger.Warn("live queries: the change feed (logical decoding) is not available; polling instead",
				"error", err, "poll_interval", h.opts.PollInterval)
			warned = msg
		}
		select {
		case <-ctx.Done():
		case <-time.After(opts.Retry):
		}
	}
}

// follow runs one replication session until it fails.
func (h *Hub) follow(ctx context.Context, opts FeedOptions) error {
	cfg, err := pgconn.ParseConfig(opts.URL)
	if err != nil {
		return fmt.Errorf("parse the change feed's URL: %w", err)
	}
	cfg.RuntimeParams["replication"] = "database"
	cfg.RuntimeParams["application_name"] = "pgreflect live"
	// An ordinary session manages the publication's tables, and sees the slot go when the feed ends.
	sqlCfg, err := pgx.ParseConfig(opts.URL)
	if err != nil {
		return err
	}
	sqlCfg.RuntimeParams["application_name"] = "pgreflect live"
	admin, err := pgx.ConnectConfig(ctx, sqlCfg)
	if err != nil {
		return fmt.Errorf("connect to manage the publication: %w", err)
	}
	defer admin.Close(context.WithoutCancel(ctx))
	repl, err := pgconn.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("connect for logical decoding: %w", err)
	}
	slot := "pgreflect_live_" + strconv.FormatUint(rand.Uint64(), 36)
	// publishWanted shares admin: it stops, and is waited for, before the slot's end is waited for on admin.
	addCtx, stopAdding := context.WithCancel(ctx)
	var adding sync.WaitGroup
	defer func() {
		stopAdding()
		adding.Wait()
		repl.Close(context.WithoutCancel(ctx))
		waitSlotDropped(context.WithoutCancel(ctx), admin, sqlCfg, slot, repl.PID())
	}()
	published, err := publishedTables(ctx, admin)
	if err != nil {
		return err
	}

	created, err := pglogrepl.CreateReplicationSlot(ctx, repl, slot, "pgoutput",
		pglogrepl.CreateReplicationSlotOptions{Temporary: true, Mode: pglogrepl.LogicalReplication})
	if err != nil {
		return fmt.Errorf("create a temporary replication slot: %w", err)
	}
	start, err := pglogrepl.ParseLSN(created.ConsistentPoint)
	if err != nil {
		return err
	}
	if err := pglogrepl.StartReplication(ctx, repl, slot, start, pglogrepl.StartReplicationOptions{
		PluginArgs: []string{"proto_version '1'", "publication_names '" + Publication + "'"}}); err != nil {
		return fmt.Errorf("start logical decoding: %w", err)
	}
	h.cover(published)
	h.SetFeed(true)
	// What changed before the slot existed is not in it.
	h.Changed(nil)
	opts.Logger.Info("live queries follow the database's changes by logical decoding", "slot", slot, "tables", len(published))

	d := &decoder{relations: map[uint32]resolve.RelationName{}, confirmed: start}
	errCh := make(chan error, 1)
	adding.Go(func() { errCh <- h.publishWanted(addCtx, admin, opts.Logger) })
	h.want(h.uncovered())
	statusEvery := 5 * time.Second
	nextStatus := time.Now().Add(statusEvery)
	for {
		select {
		case err := <-errCh:
			return err
		default:
		}
		if time.Now().After(nextStatus) {
			if err := pglogrepl.SendStandbyStatusUpdate(ctx, repl, pglogrepl.StandbyStatusUpdate{WALWritePosition: d.confirmed}); err != nil {
				return fmt.Errorf("confirm decoded changes: %w", err)
			}
			nextStatus = time.Now().Add(statusEvery)
		}
		recvCtx, cancel := context.WithDeadline(ctx, nextStatus)
		raw, err := repl.ReceiveMessage(recvCtx)
		cancel()
		if err != nil {
			if pgconn.Timeout(err) && ctx.Err() == nil {
				continue
			}
			return fmt.Errorf("receive decoded changes: %w", err)
		}
		switch msg := raw.(type) {
		case *pgproto3.ErrorResponse:
			return pgconn.ErrorResponseToPgError(msg)
		case *pgproto3.CopyData:
			changed, reply, err := d.handle(msg.Data)
			if err != nil {
				return err
			}
			if len(changed) > 0 {
				h.changedAt(changed, d.confirmed)
			}
			if reply {
				nextStatus = time.Now()
			}
		}
	}
}

// waitSlotDropped waits, for a few seconds at most, until the server has dropped the temporary slot of a closed
// replication connection, which it does as the connection's backend (pid) exits: a caller that stops the feed
// and then drops the database (tests, `pgreflect stop`) would otherwise find the slot still there. The backend
// is waited for as well: one whose slot creation was cut short by the feed's end may still be creating it, which
// takes as long as the transactions running then. conn is used unless a query cut short closed it; then a
// connection of cfg.
func waitSlotDropped(ctx context.Context, conn *pgx.Conn, cfg *pgx.ConnConfig, slot string, pid uint32) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if conn.IsClosed() {
		var err error
		if conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
			return
		}
		defer conn.Close(context.WithoutCancel(ctx))
	}
	for {
		var present bool
		if err := conn.QueryRow(ctx, `select exists (select from pg_stat_activity where pid = $2)
				or exists (select from pg_replication_slots where slot_name = $1)`, slot, int64(pid)).Scan(&present); err != nil || !present {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// decoder reads pgoutput's messages: relation ids to names, and the tables of each committed transaction.
type decoder struct {
	relations map[uint32]resolve.RelationName
	pending   []resolve.RelationName
	confirmed pglogrepl.LSN
}

// handle decodes one CopyData message; it returns the tables a commit changed, and whether the server asked for
// a status update now.
func (d *decoder) handle(data []byte) ([]resolve.RelationName, bool, error) {
	if len(data) == 0 {
		return nil, false, nil
	}
	switch data[0] {
	case pglogrepl.PrimaryKeepaliveMessageByteID:
		k, err := pglogrepl.ParsePrimaryKeepaliveMessage(data[1:])
		if err != nil {
			return nil, false, fmt.Errorf("decode a keepalive: %w", err)
		}
		if len(d.pending) == 0 && k.ServerWALEnd > d.confirmed {
			// Nothing of ours is in flight: WAL up to here may be released.
			d.confirmed = k.ServerWALEnd
		}
		return nil, k.ReplyRequested, nil
	case pglogrepl.XLogDataByteID:
		x, err := pglogrepl.ParseXLogData(data[1:])
		if err != nil {
			return nil, false, fmt.Errorf("decode WAL data: %w", err)
		}
		m, err := pglogrepl.Parse(x.WALData)
		if err != nil {
			return nil, false, fmt.Errorf("decode a pgoutput message: %w", err)
		}
		switch m := m.(type) {
		case *pglogrepl.RelationMessage:
			d.relations[m.RelationID] = resolve.RelationName{Schema: m.Namespace, Name: m.RelationName}
		case *pglogrepl.InsertMessage:
			d.touch(m.RelationID)
		case *pglogrepl.UpdateMessage:
			d.touch(m.RelationID)
		case *pglogrepl.DeleteMessage:
			d.touch(m.RelationID)
		case *pglogrepl.TruncateMessage:
			for _, id := range m.RelationIDs {
				d.touch(id)
			}
		case *pglogrepl.CommitMessage:
			changed := d.pending
			d.pending = nil
			d.confirmed = m.TransactionEndLSN
			return changed, false, nil
		}
	}
	return nil, false, nil
}

func (d *decoder) touch(id uint32) {
	rel, ok := d.relations[id]
	if !ok {
		return
	}
	for _, r := range d.pending {
		if r == rel {
			return
		}
	}
	d.pending = append(d.pending, rel)
}

// publishedTables lists the publication's tables; a missing publication is an error (setup creates it).
func publishedTables(ctx context.Context, conn *pgx.Conn) ([]resolve.RelationName, error) {
	var exists bool
	if err := conn.QueryRow(ctx, `select exists (select from pg_publication where pubname = $1)`, Publication).Scan(&exists); err != nil {
		return nil, fmt.Errorf("look for publication %s: %w", Publication, err)
	}
	if !exists {
		return nil, fmt.Errorf("publication %s does not exist (pgreflect setup creates it)", Publication)
	}
	rows, err := conn.Query(ctx, `select schemaname::text, tablename::text from pg_publication_tables where pubname = $1`, Publication)
	if err != nil {
		return nil, fmt.Errorf("read publication %s: %w", Publication, err)
	}
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (resolve.RelationName, error) {
		var n resolve.RelationName
		err := r.Scan(&n.Schema, &n.Name)
		return n, err
	})
}

// publishWanted adds the tables live queries read to the publication, those with a replica identity only (the
// others would refuse UPDATE and DELETE once published); the cohorts reading them are refreshed afterwards,
// since changes made before a table was published are not decoded. Tables it cannot add stay polled. After a
// schema change it reads the publication again: a table dropped and created again under its name (or renamed,
// and another created under its name) is a table the publication does not hold, and would be neither decoded
// nor polled. So it does after a change of the publication, which may have taken a table out.
func (h *Hub) publishWanted(ctx context.Context, conn *pgx.Conn, log *slog.Logger) error {
	for {
		var rels []resolve.RelationName
		reread, schemaChanged := false, false
		select {
		case <-ctx.Done():
			return ctx.Err()
		case rels = <-h.wanted:
		case <-h.schemaChanged:
			reread, schemaChanged = true, true
		case <-h.publicationChanged:
			reread = true
		}
		if reread {
			published, err := publishedTables(ctx, conn)
			if err != nil {
				return err
			}
			h.coverOnly(published, schemaChanged)
			rels = h.uncovered()
		}
		var added []resolve.RelationName
		for _, rel := range rels {
			if h.isCovered(rel) {
				continue
			}
			ok, err := publishable(ctx, conn, rel)
			if err != nil {
				return err
			}
			if ok {
				_, err = conn.Exec(ctx, "alter publication "+sqlgen.Ident(Publication)+" add table "+sqlgen.Ident(rel.Schema)+"."+sqlgen.Ident(rel.Name))
				var pgErr *pgconn.PgError
				if errors.As(err, &pgErr) && pgErr.Code == "42710" { // already a member: added by another instance
					err = nil
				}
			}
			if !ok || err != nil {
				if err != nil && conn.IsClosed() {
					return err
				}
				log.Warn("live queries poll a table that the change feed cannot follow", "table", rel.Schema+"."+rel.Name,
					"reason", cmpErr(err, "it has no replica identity (primary key)"))
				h.refuse(rel)
				continue
			}
			added = append(added, rel)
		}
		if len(added) > 0 {
			h.cover(added)
			h.Changed(added)
		}
	}
}

func cmpErr(err error, otherwise string) string {
	if err != nil {
		return err.Error()
	}
	return otherwise
}

// publishable reports whether a table's changes can be published without breaking its updates and deletes.
func publishable(ctx context.Context, conn *pgx.Conn, rel resolve.RelationName) (bool, error) {
	var ok bool
	err := conn.QueryRow(ctx, `select c.relkind = 'r' and (c.relreplident in ('f', 'i')
			or (c.relreplident = 'd' and exists (select from pg_index i where i.indrelid = c.oid and i.indisprimary)))
		from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2`,
		rel.Schema, rel.Name).Scan(&ok)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return ok, err
}

// cover records tables the feed follows.
func (h *Hub) cover(rels []resolve.RelationName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range rels {
		h.covered[r] = true
	}
}

// coverOnly records the tables the feed follows as exactly rels, and forgets the refusals when the schema
// changed: a table may have got a primary key, or be another table under the same name.
func (h *Hub) coverOnly(rels []resolve.RelationName, schemaChanged bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	clear(h.covered)
	if schemaChanged {
		clear(h.refused)
	}
	for _, r := range rels {
		h.covered[r] = true
	}
}

// refuse records a table the feed cannot follow, so that it is not asked for again.
func (h *Hub) refuse(rel resolve.RelationName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refused[rel] = true
}

// want asks the feed to follow tables (publishWanted); when it is busy, a later refresh asks again.
func (h *Hub) want(rels []resolve.RelationName) {
	if len(rels) == 0 {
		return
	}
	select {
	case h.wanted <- rels:
	default:
	}
}

func (h *Hub) isCovered(rel resolve.RelationName) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.covered[rel] || h.refused[rel]
}

// uncoveredLocked lists the tables of the cohort that the feed neither follows nor was refused.
func (h *Hub) uncoveredLocked(c *cohort) []resolve.RelationName {
	var out []resolve.RelationName
	for _, r := range c.reads.Relations {
		if !h.covered[r] && !h.refused[r] {
			out = append(out, r)
		}
	}
	return out
}

// uncovered lists the tables cohorts read that the feed neither follows nor was refused.
func (h *Hub) uncovered() []resolve.RelationName {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []resolve.RelationName
	for _, c := range h.cohorts {
		for _, r := range h.uncoveredLocked(c) {
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// followedLocked reports whether the feed tells every change that may change the cohort's answer.
func (h *Hub) followedLocked(c *cohort) bool {
	if !h.feed || !c.known || c.reads.All {
		return false
	}
	for _, r := range c.reads.Relations {
		if !h.covered[r] {
			return false
		}
	}
	return true
}
