package httpapi

import (
	"net/http"
	"slices"
)

// SetSearchPath changes the API's search path (the exposed schemas, then the extra ones) for the requests
// that start from now on: the management API stores new exposed schemas and applies them here
// (internal/apisettings). The schemas of a new search path load as those of any role and search path do.
func (s *Server) SetSearchPath(path []string) {
	if len(path) == 0 {
		path = []string{"public"} // as New's default
	}
	path = slices.Clone(path)
	s.exposed.Store(&path)
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
