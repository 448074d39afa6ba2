package resolve

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// replicaCatchUpTimeout bounds the wait for a replica to replay a schema change before its schema is reloaded
// anyway; the wait then starts over, so that the schema is reloaded again once the replica has caught up.
const replicaCatchUpTimeout = 10 * time.Second

// replicaRetry is how soon the follower tries again to read the primary's WAL position after it failed.
const replicaRetry = time.Second

// replicaFollower reloads the replicas' schemas after a schema change, once each replica has replayed the
// primary's WAL up to where it was when the change was announced. The announcement comes from the primary
// (NOTIFY is not delivered on a standby); reloading at once would let the next query read the old catalog on a
// replica that lags, and keep that schema until the next change.
type replicaFollower struct {
	primary  *pgxpool.Pool
	replicas []*Engine
	changed  chan struct{}
	log      *slog.Logger
}

func newReplicaFollower(primary *pgxpool.Pool, replicas []*Engine, log *slog.Logger) *replicaFollower {
	return &replicaFollower{primary: primary, replicas: replicas, changed: make(chan struct{}, 1), log: log}
}

// changedSchema records a change; run handles it. Changes that come while one is handled are handled together.
func (f *replicaFollower) changedSchema() {
	select {
	case f.changed <- struct{}{}:
	default:
	}
}

func (f *replicaFollower) run(ctx context.Context) {
	failing := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.changed:
		}
		var lsn string
		// The insert position, not pg_current_wal_lsn: that is where WAL has been written to, which may not yet
		// include the change's commit record (with synchronous_commit off, for one).
		if err := f.primary.QueryRow(ctx, "select pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
			if ctx.Err() != nil {
				return
			}
			if !failing {
				f.log.Warn("schema change: read the primary's WAL position; reloading the replicas' schemas now and "+
					"again until it answers", "error", err, "retry", replicaRetry)
			}
			failing = true
			// A replica that lags may load the old catalog again now: the change is handled again, until the
			// primary says where its WAL is and each replica has replayed that far.
			forgetAll(f.replicas)
			select {
			case <-ctx.Done():
				return
			case <-time.After(replicaRetry):
				f.changedSchema()
			}
			continue
		}
		failing = false
		var wg sync.WaitGroup
		for i, r := range f.replicas {
			wg.Go(func() {
				if err := waitForReplay(ctx, r.opts.Pool, lsn); err != nil && ctx.Err() == nil {
					f.log.Warn("schema change: replica has not caught up; reloading its schema now and again later",
						"replica", i+1, "lsn", lsn, "error", err)
					f.changedSchema()
				}
				r.forget()
			})
		}
		wg.Wait()
	}
}

// forgetAll drops every replica's schemas without waiting for it to replay the change: when nothing waits (the
// engine is not started) or there is nothing to wait for (the primary's WAL position could not be read).
func forgetAll(replicas []*Engine) {
	for _, r := range replicas {
		r.forget()
	}
}

// waitForReplay waits until the server of pool has replayed the WAL up to lsn (at once on a server that is
// not a standby), for at most replicaCatchUpTimeout; it returns the last failure when the time is up.
func waitForReplay(ctx context.Context, pool *pgxpool.Pool, lsn string) error {
	ctx, cancel := context.WithTimeout(ctx, replicaCatchUpTimeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		var done bool
		err := pool.QueryRow(ctx, "select coalesce(pg_last_wal_replay_lsn() >= $1::pg_lsn, true)", lsn).Scan(&done)
		if err == nil && done {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return err
		case <-tick.C:
		}
	}
}
