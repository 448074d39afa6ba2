// Command go-pkce is a server-side Go web application that signs its users in with the PKCE redirect flow
// (service.md 5.4.2) through package client's WebAuth: a sign-in link, the callback route, the session in
// cookies, and a protected page that shows the user and their own to-dos of the demo schema, read and
// written with GraphQL as the user, so row level security keeps everyone to their own rows.
//
//	eval "$(bin/pgreflect status --workdir examples -o env | sed 's/^/export /')"
//	go run ./examples/go-pkce   # http://127.0.0.1:3000
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/pgreflect/pgreflect/client"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "address to serve the app on")
	apiURL := flag.String("api-url", os.Getenv("API_URL"), "the project's API URL (default $API_URL)")
	anonKey := flag.String("anon-key", os.Getenv("ANON_KEY"), "the project's anon key (default $ANON_KEY)")
	local := flag.Bool("local", true, "local development: redirect on the request's origin, ignore X-Forwarded-Host")
	flag.Parse()
	if *apiURL == "" || *anonKey == "" {
		log.Fatal("set -api-url and -anon-key, or API_URL and ANON_KEY: eval \"$(bin/pgreflect status --workdir examples -o env | sed 's/^/export /')\"")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := &http.Server{Addr: *addr, Handler: newApp(*apiURL, *anonKey, *local), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Shutdown(context.Background())
	}()
	fmt.Printf("go-pkce example on http://%s\n", *addr)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// newApp is the whole application. Its forms POST with the session cookies, which are SameSite=Lax: another
// site's form cannot send them.
func newApp(apiURL, anonKey string, local bool) http.Handler {
	auth := client.NewWebAuth(apiURL, anonKey, client.WebAuthOptions{Local: local})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		render(w, homePage, auth.RequestClient(r).Auth.Session())
	})
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		auth.SignIn(w, r, "google", client.AuthorizeOptions{RedirectTo: "/auth/callback?next=/private"})
	})
	mux.Handle("GET /auth/callback", auth.Callback())
	mux.HandleFunc("GET "+client.AuthCodeErrorPath, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		render(w, errorPage, nil)
	})
	mux.HandleFunc("GET /private", func(w http.ResponseWriter, r *http.Request) {
		c := auth.RequestClient(r)
		if c.Auth.Session() == nil {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		user, err := c.Auth.User(r.Context())
		if err != nil {
			serverError(w, "read the user", err)
			return
		}
		var data struct {
			TodoCollection struct {
				Edges []struct{ Node struct{ Task string } }
			}
		}
		if err := c.GraphQL(r.Context(), `{ todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }`, nil, &data); err != nil {
			serverError(w, "read the to-dos", err)
			return
		}
		var tasks []string
		for _, e := range data.TodoCollection.Edges {
			tasks = append(tasks, e.Node.Task)
		}
		render(w, privatePage, map[string]any{"Email": user.Email, "Tasks": tasks})
	})
	mux.HandleFunc("POST /private/todos", func(w http.ResponseWriter, r *http.Request) {
		c := auth.RequestClient(r)
		if c.Auth.Session() == nil {
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		if task := r.FormValue("task"); task != "" {
			// user_id defaults to auth.uid(): the row is the signed-in user's.
			err := c.GraphQL(r.Context(), `mutation($task: String!) { insertIntotodoCollection(objects: [{task: $task}]) { affectedCount } }`,
				map[string]any{"task": task}, nil)
			if err != nil {
				serverError(w, "add the to-do", err)
				return
			}
		}
		http.Redirect(w, r, "/private", http.StatusSeeOther)
	})
	mux.HandleFunc("POST /logout", func(w http.ResponseWriter, r *http.Request) {
		if err := auth.SignOut(w, r, "local"); err != nil {
			serverError(w, "sign out", err)
			return
		}
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})
	return auth.Middleware(mux)
}

// serverError logs the cause and shows the user a generic message.
func serverError(w http.ResponseWriter, what string, err error) {
	log.Printf("could not %s: %v", what, err)
	http.Error(w, "Something went wrong; try again.", http.StatusBadGateway)
}

func render(w http.ResponseWriter, t *template.Template, data any) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := t.Execute(w, data); err != nil {
		log.Printf("render %s: %v", t.Name(), err)
	}
}

var layout = `<!doctype html><html><head><meta charset="utf-8"><title>pgreflect PKCE example</title>
<style>body{font:16px system-ui,sans-serif;max-width:40em;margin:3em auto}</style></head><body>
<h1>pgreflect: sign-in with the PKCE flow</h1>{{template "body" .}}</body></html>`

func page(name, body string) *template.Template {
	return template.Must(template.Must(template.New(name).Parse(layout)).New("body").Parse(body)).Lookup(name)
}

var (
	homePage = page("home", `{{if .}}<p>Signed in as {{.User.Email}}. <a href="/private">Your to-dos</a></p>
{{else}}<p><a id="sign-in" href="/login">Sign in with Google</a></p>{{end}}`)
	errorPage   = page("error", `<p id="error">Sign-in failed: the code was missing or could not be exchanged. <a href="/">Try again</a></p>`)
	privatePage = page("private", `<p>Signed in as <b id="email">{{.Email}}</b></p>
<h2>Your to-dos</h2>
<ul id="todos">{{range .Tasks}}<li>{{.}}</li>{{else}}<li class="none">none yet</li>{{end}}</ul>
<form method="post" action="/private/todos"><input name="task" id="task" placeholder="a new to-do" required>
<button id="add">Add</button></form>
<form method="post" action="/logout"><button id="sign-out">Sign out</button></form>`)
)
