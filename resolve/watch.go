package resolve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgreflect/pgreflect/internal/dbsetup"
	"github.com/pgreflect/pgreflect/reflect"
)

// WatchOptions say how Start follows schema changes.
type WatchOptions struct {
	// Poll, when set, reads the schema version at this interval instead of LISTENing for its announcements,
	// which do not come through a pooler in transaction mode.
	Poll time.Duration
	// PollTimeout bounds one read of the schema version, the wait for a connection included: a server that does
	// not answer fails that read and the next one tries again. Default 10s.
	PollTimeout time.Duration
	// Also, when set, is told of every change after the engine has dropped what the change made stale (a
	// subscription hub that refreshes its subscriptions then, a counter of reloads).
	Also reflect.Invalidator
}

// watchStartTimeout bounds Start's wait for the watch to run.
const watchStartTimeout = 10 * time.Second

// Start follows the schema changes that pgreflect's setup announces on the primary (Options.Pool), until Close:
// each change drops the schemas and compiled requests it makes stale, and each read replica's once the replica
// has replayed it (a replica that lags would otherwise load the old catalog again and keep it until the next
// change). It returns once the watch runs (LISTEN is active, or a first read of the schema version succeeded
// when polling), or an error after 10s or when ctx ends first. An engine that is not started reloads only when
// it is told to (Invalidate).
func (e *Engine) Start(ctx context.Context, w WatchOptions) error {
	if e.opts.Pool == nil {
		return errors.New("resolve: Start needs Options.Pool")
	}
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	if e.stopWatch != nil {
		return errors.New("resolve: the engine is started already")
	}
	watchCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e.stopWatch = cancel
	if len(e.replicas) > 0 {
		follower := newReplicaFollower(e.opts.Pool, e.replicas, e.opts.Logger)
		e.follower.Store(follower)
		e.watchers.Go(func() { follower.run(watchCtx) })
	}
	var changes reflect.Invalidator = e
	if w.Also != nil {
		changes = fanout{e, w.Also}
	}
	ready := make(chan struct{})
	logf := func(format string, args ...any) { e.opts.Logger.Warn(fmt.Sprintf(format, args...)) }
	if w.Poll > 0 {
		timeout := cmp.Or(w.PollTimeout, 10*time.Second)
		version := func(ctx context.Context) (int64, error) {
			ctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			var v int64
			err := e.opts.Pool.QueryRow(ctx, dbsetup.SchemaVersionQuery).Scan(&v)
			return v, err
		}
		e.watchers.Go(func() { reflect.Poll(watchCtx, version, w.Poll, changes, ready, logf) })
	} else {
		connect := func(ctx context.Context) (*pgx.Conn, error) {
			return pgx.ConnectConfig(ctx, e.opts.Pool.Config().ConnConfig.Copy())
		}
		e.watchers.Go(func() { reflect.Watch(watchCtx, connect, dbsetup.NotifyChannel, changes, ready, logf) })
	}
	select {
	case <-ready:
		return nil
	case <-time.After(watchStartTimeout):
		e.closeLocked()
		return errors.New("resolve: the schema watch could not start within 10s (LISTEN, or a first read of the schema version when polling)")
	case <-ctx.Done():
		e.closeLocked()
		return ctx.Err()
	}
}

// Close stops what Start started; the engine still answers, and reloads only when told to (Invalidate).
func (e *Engine) Close() {
	e.watchMu.Lock()
	defer e.watchMu.Unlock()
	e.closeLocked()
}

func (e *Engine) closeLocked() {
	if e.stopWatch == nil {
		return
	}
	e.stopWatch()
	e.watchers.Wait()
	e.stopWatch = nil
	e.follower.Store(nil)
}

// replicasChanged tells the replicas of a schema change: through the follower, which waits for each to replay
// it, while the engine is started; at once otherwise, since nothing would wait.
func (e *Engine) replicasChanged() {
	if f := e.follower.Load(); f != nil {
		f.changedSchema()
		return
	}
	forgetAll(e.replicas)
}

// fanout tells several caches of each change.
type fanout []reflect.Invalidator

func (f fanout) Invalidate() {
	for _, c := range f {
		c.Invalidate()
	}
}

func (f fanout) InvalidatePrivileges() {
	for _, c := range f {
		reflect.InvalidatePrivileges(c)
	}
}

func (f fanout) InvalidateRelations(relations []uint32) {
	for _, c := range f {
		reflect.InvalidateRelations(c, relations)
	}
}

func (f fanout) PublicationsChanged() {
	for _, c := range f {
		reflect.PublicationsChanged(c)
	}
}
