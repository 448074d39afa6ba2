package reflect

import (
	"context"
	"time"
)

// Poll invalidates cache whenever the value version returns changes, asking every interval until ctx ends. It
// is Watch for a connection that cannot LISTEN: through a pooler in transaction mode a LISTEN stays on a
// server session the pooler hands to others, so no announcement would arrive. ready, if not nil, is closed
// after the first successful read; logf receives failures (logged once until a read succeeds again, since a
// database that is away would otherwise log at every interval).
func Poll(ctx context.Context, version func(context.Context) (int64, error), interval time.Duration, cache Invalidator,
	ready chan<- struct{}, logf func(format string, args ...any)) {
	var last int64
	known, failing := false, false
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		v, err := version(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			if !failing {
				logf("schema poll: %v (retrying every %s)", err, interval)
			}
			failing = true
		default:
			// A failed read may have hidden changes, as a lost LISTEN connection may.
			if !known || v != last || failing {
				cache.Invalidate()
			}
			last, known, failing = v, true, false
			if ready != nil {
				close(ready)
				ready = nil
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}
