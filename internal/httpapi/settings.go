package httpapi

import (
	"net/http"
	"slices"
	"sync"
)

// SetSearchPath changes the API's search path (the exposed schemas, then the extra ones) for the requests
// that start from now on: the management API stores new exposed schemas and applies them here
// (internal/apisettings). The schemas of a new search path load as those of any role and search path do.
// Subscriptions hold the search path they started with, so a change ends them: the WebSockets are closed with
// 1013 and the event streams end without complete, after which each protocol's clients reconnect, under the
// new search path. A schema taken out of the API is then out of reach of what was open as well.
func (s *Server) SetSearchPath(path []string) {
	if len(path) == 0 {
		path = []string{"public"} // as New's default
	}
	path = slices.Clone(path)
	before := s.opts.SearchPath
	if old := s.exposed.Swap(&path); old != nil {
		before = *old
	}
	if !slices.Equal(before, path) {
		s.sockets.closeAll(wsReasonSearchPathChanged)
		s.searchPathChanged.fire()
	}
}

// changeSignal tells whoever waits on it of a change: each change closes the channel they hold.
type changeSignal struct {
	mu sync.Mutex
	ch chan struct{}
}

// wait returns a channel closed at the next change.
func (c *changeSignal) wait() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch == nil {
		c.ch = make(chan struct{})
	}
	return c.ch
}

func (c *changeSignal) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ch != nil {
		close(c.ch)
		c.ch = nil
	}
}

// searchPath is the API's search path: the one last set, else Options.SearchPath.
func (s *Server) searchPath() []string {
	if p := s.exposed.Load(); p != nil {
		return *p
	}
	return s.opts.SearchPath
}

// MountManagement serves the management API (/v1/) with h: the management handler is built once the server
// is, as its routes apply settings to it. Call it before serving.
func (s *Server) MountManagement(h http.Handler) {
	s.mux.Handle("/v1/", h)
}
