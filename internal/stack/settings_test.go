package stack_test

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/internal/devtools/testenv"
	"github.com/pgreflect/pgreflect/internal/stack"
)

const (
	inPublic = `{ itemCollection { edges { node { name } } } }`
	inAPI    = `{ widgetCollection { edges { node { label } } } }`
)

// exposes says whether the server's anon API shows the table of schema public (item) or of schema api (widget).
func exposes(t *testing.T, s *server) (public, api bool) {
	t.Helper()
	p, _ := s.graphql(t, inPublic)
	a, _ := s.graphql(t, inAPI)
	return strings.Contains(p, `"name": "one"`), strings.Contains(a, `"label": "w"`)
}

// The exposed schemas are changed through the management API (Supabase's PATCH /v1/projects/{ref}/postgrest):
// this instance answers from the new schema at once, another one within its poll interval, a restart keeps
// them and says by name that they beat supabase/config.toml, and a reset brings the file's back.
func TestExposedSchemasThroughTheManagementAPI(t *testing.T) {
	dbURL, _ := testenv.SetupDB(t, `create table item (id int primary key, name text);
		insert into item values (1, 'one'); grant select on item to anon;
		create schema api; grant usage on schema api to anon;
		create table api.widget (id int primary key, label text); insert into api.widget values (1, 'w');
		grant select on api.widget to anon`)
	a := startServer(t, dbURL, "1.6")
	defer a.stop()
	b := startServer(t, dbURL, "1.6")
	defer b.stop()
	if pub, api := exposes(t, a); !pub || api {
		t.Fatalf("before: public %v, api %v", pub, api)
	}
	if status, out := a.managementAt(t, http.MethodGet, "/postgrest", "", mgmtToken); status != 200 || out["db_schema"] != "public" {
		t.Errorf("GET postgrest: %d %v", status, out)
	}

	// Without the management token: refused, and nothing changes. The API keys are no management token.
	for _, token := range []string{"", a.anon, "sbp_0000000000000000000000000000000000000000"} {
		if status, _ := a.managementAt(t, http.MethodPatch, "/postgrest", `{"db_schema": "api"}`, token); status != http.StatusUnauthorized {
			t.Errorf("PATCH with token %.12q: %d, want 401", token, status)
		}
	}
	// Bad input: a clear 400 in the management API's shape.
	for body, want := range map[string]string{
		`{"db_schema": "api, nope"}`:                       `Invalid value for db_schema: no schema named "nope" in the database`,
		`{"db_schema": " , "}`:                             "Invalid value for db_schema: names no schema",
		`{"db_schema": "` + strings.Repeat("x", 64) + `"}`: "is not a valid schema name",
		`{"db_schema": 7}`:                                 "Request body must be a JSON object",
		`not json`:                                         "Request body must be a JSON object",
	} {
		if status, out := a.managementAt(t, http.MethodPatch, "/postgrest", body, mgmtToken); status != 400 || !strings.Contains(out["message"].(string), want) {
			t.Errorf("PATCH %s: %d %v, want 400 %q", body, status, out, want)
		}
	}
	if pub, api := exposes(t, a); !pub || api {
		t.Fatalf("after refused changes: public %v, api %v", pub, api)
	}

	status, out := a.managementAt(t, http.MethodPatch, "/postgrest", `{"db_schema": "api", "max_rows": 1000}`, mgmtToken)
	if status != 200 || out["db_schema"] != "api" {
		t.Fatalf("PATCH db_schema api: %d %v", status, out)
	}
	if pub, api := exposes(t, a); pub || !api { // at once on this instance
		t.Errorf("right after the PATCH: public %v, api %v", pub, api)
	}
	testenv.Eventually(t, 10*stack.SettingsPollInterval, func() string {
		if pub, api := exposes(t, b); pub || !api {
			return "the other instance does not follow yet"
		}
		return ""
	})
	if status, out := a.managementAt(t, http.MethodGet, "/postgrest/overrides", "", mgmtToken); status != 200 ||
		!strings.Contains(toJSON(out), `"field":"db_schema","file":"public","file_key":"--schemas","stored":"api"`) {
		t.Errorf("GET overrides: %d %s", status, toJSON(out))
	}

	// A restart as `start` (the search path from config.toml) keeps the stored schemas and says that they beat
	// the file's.
	logs := &testenv.SyncBuffer{}
	c := startServerWith(t, dbURL, "1.6", nil, slog.New(slog.NewTextHandler(logs, nil)))
	// (config.toml's extra_search_path, public and extensions, follows the exposed schemas: public stays.)
	if pub, api := exposes(t, c); !pub || !api {
		t.Errorf("after a restart: public %v, api %v", pub, api)
	}
	c.stop()
	for _, want := range []string{"overrides supabase/config.toml", "setting=db_schema", `config.toml="[api] schemas"`, "stored=api", "file=public"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the start's log lacks %q:\n%s", want, logs.String())
		}
	}

	// Reset: the file's schemas apply again, here at once and there within the poll interval.
	if status, out := a.managementAt(t, http.MethodDelete, "/postgrest/overrides/db_schema", "", mgmtToken); status != 200 || out["db_schema"] != "public" {
		t.Errorf("DELETE override: %d %v", status, out)
	}
	if status, _ := a.managementAt(t, http.MethodDelete, "/postgrest/overrides/max_rows", "", mgmtToken); status != 400 {
		t.Errorf("DELETE an unknown override: %d, want 400", status)
	}
	if pub, api := exposes(t, a); !pub || api {
		t.Errorf("after the reset: public %v, api %v", pub, api)
	}
	testenv.Eventually(t, 10*stack.SettingsPollInterval, func() string {
		if pub, api := exposes(t, b); !pub || api {
			return "the other instance does not follow the reset yet"
		}
		return ""
	})
	if status, out := a.managementAt(t, http.MethodGet, "/postgrest/overrides", "", mgmtToken); status != 200 || toJSON(out) != `{"overrides":[]}` {
		t.Errorf("GET overrides after the reset: %d %s", status, toJSON(out))
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
