package authapi

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// The management API pushes a manifest (all or none) and lists the trusted documents, behind the
// management token like the rest of it.
func TestManagementTrustedDocuments(t *testing.T) {
	testManagementTrustedDocuments(t, newWorld(t, nil))
}

// As on managed Postgres, the auth service's role is no superuser: a login role that owns schema auth (given
// it before the setup, docs/deploy.md). The setup's grants let it push and list the trusted documents.
func TestManagementTrustedDocumentsAsNonSuperuser(t *testing.T) {
	role := "auth_admin_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	w := newWorldAs(t, nil, func(conn *pgx.Conn, dbURL string) string {
		if _, err := conn.Exec(t.Context(), `create role `+role+` login nosuperuser nocreaterole nocreatedb;
			create schema auth authorization `+role); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// After the world's pool is closed (cleanups run last first): the role's objects go with the database.
			c, err := pgx.Connect(context.Background(), dbURL)
			if err != nil {
				return
			}
			defer c.Close(context.Background())
			c.Exec(context.Background(), `drop owned by `+role)
			c.Exec(context.Background(), `drop role `+role)
		})
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.User(role)
		return u.String()
	})
	var super bool
	if err := w.pool.QueryRow(t.Context(), `select rolsuper from pg_roles where rolname = current_user`).Scan(&super); err != nil || super {
		t.Fatalf("the auth service's role is a superuser (%v): the test proves nothing", err)
	}
	testManagementTrustedDocuments(t, w)
	// It may add documents, never change or remove one: a client built against a document keeps running it.
	for _, q := range []string{`update pgreflect.trusted_documents set document = '{ __schema { types { name } } }'`,
		`delete from pgreflect.trusted_documents`} {
		if _, err := w.pool.Exec(t.Context(), q); err == nil || !strings.Contains(err.Error(), "permission denied") {
			t.Errorf("%s as the auth service's role: %v, want permission denied", q, err)
		}
	}
}

func testManagementTrustedDocuments(t *testing.T, w *world) {
	url := w.inst.apiURL + "/v1/projects/" + tRef + "/graphql/documents"
	token := map[string]string{"Authorization": "Bearer " + tMgmtToken}
	apollo := `{"format":"apollo-persisted-query-manifest","version":1,"operations":[
		{"id":"a1","name":"A","type":"query","body":"query A { __typename }"},
		{"id":"b2","name":"B","type":"query","body":"query B { __typename }"}]}`
	if r := w.do(http.MethodPost, url, apollo, nil); r.status != http.StatusUnauthorized {
		t.Errorf("without the token: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, apollo, token); r.status != http.StatusCreated || r.body["added"] != float64(2) || r.body["pushed"] != float64(2) {
		t.Fatalf("push: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, `{"a1": "query A { other: __typename }", "c3": "{ c: __typename }"}`, token); r.status != http.StatusBadRequest ||
		!strings.Contains(r.str("message"), `document "a1": the document id is already trusted with another text`) {
		t.Errorf("an id reused: %d %s", r.status, r.raw)
	}
	if r := w.do(http.MethodPost, url, `["not a manifest"]`, token); r.status != http.StatusBadRequest || !strings.Contains(r.str("message"), "manifest") {
		t.Errorf("not a manifest: %d %s", r.status, r.raw)
	}
	r := w.do(http.MethodGet, url, nil, token)
	if r.status != http.StatusOK || len(r.body) != 2 || r.str("a1") != "query A { __typename }" || r.str("b2") != "query B { __typename }" {
		t.Errorf("list (c3 of the refused push must not be there): %d %s", r.status, r.raw)
	}
}
