package resolve

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/pgreflect/pgreflect/reflect"
)

// TestWriteExtensionsInvisibleWhenOff: with neither directive nor server setting, introspection shows none of
// the upsert and nestedInsert types, arguments and fields; the server setting alone turns them all on.
func TestWriteExtensionsInvisibleWhenOff(t *testing.T) {
	fixture := strings.Replace(nestedFixture, `'@graphql({"inflect_names": true})'`, `'@graphql({"inflect_names": true, "introspection": true})'`, 1)
	fixture = strings.ReplaceAll(fixture, `comment on table blog is '@graphql({"features": ["nestedInsert"]})';`, "")
	fixture = strings.ReplaceAll(fixture, `comment on table post is '@graphql({"features": ["nestedInsert"]})';`, "")
	d := newTestDB(t, fixture+`create unique index on blog(name);`)
	query := `{ __schema { types { name inputFields { name } enumValues { name } fields { name args { name } } } } }`
	off := d.query(query)
	if !strings.Contains(off, `"name": "insertIntoBlogCollection"`) || strings.Contains(off, `"errors"`) {
		t.Fatalf("introspection: %s", off)
	}
	// What pg_graphql shows: the insert takes objects alone and its inputs hold columns alone.
	want := map[string]string{
		"types OnConflict, Constraint, UpdateColumn": "",
		"insertIntoBlogCollection":                   "objects",
		"insertIntoPostCollection":                   "objects",
		"BlogInsertInput":                            "ownerId name",
		"PostInsertInput":                            "blogId authorId title",
	}
	if got := introspectedWrites(t, off); !equalMaps(got, want) {
		t.Errorf("features off:\n got %v\nwant %v", got, want)
	}
	// The server setting turns them on for every table.
	d.engine = NewEngine(Options{Features: reflect.NewFeatureSet(reflect.FeatureUpsert, reflect.FeatureNestedInsert)})
	want = map[string]string{
		"types OnConflict, Constraint, UpdateColumn": "BlogConstraint BlogOnConflict BlogUpdateColumn",
		"insertIntoBlogCollection":                   "objects onConflict",
		"insertIntoPostCollection":                   "objects",
		"BlogInsertInput":                            "ownerId name postCollection",
		"PostInsertInput":                            "blogId authorId title blog commentCollection",
	}
	if got := introspectedWrites(t, d.query(query)); !equalMaps(got, want) {
		t.Errorf("features on:\n got %v\nwant %v", got, want)
	}
	// Turning them off again answers byte for byte as before.
	d.engine = NewEngine(Options{})
	if again := d.query(query); again != off {
		t.Errorf("features off again differs:\n%s\n%s", again, off)
	}
}

// introspectedWrites sums up what the write extensions change in an introspection response: the names of
// the extension's types, the arguments of the inserts and the fields of the insert inputs.
func introspectedWrites(t *testing.T, body string) map[string]string {
	t.Helper()
	var resp struct {
		Data struct {
			Schema struct {
				Types []struct {
					Name        string
					InputFields []struct{ Name string }
					Fields      []struct {
						Name string
						Args []struct{ Name string }
					}
				}
			} `json:"__schema"`
		}
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	out := map[string]string{}
	var ext []string
	for _, typ := range resp.Data.Schema.Types {
		for _, suffix := range []string{"OnConflict", "Constraint", "UpdateColumn"} {
			if strings.HasSuffix(typ.Name, suffix) {
				ext = append(ext, typ.Name)
			}
		}
		if typ.Name == "BlogInsertInput" || typ.Name == "PostInsertInput" {
			var names []string
			for _, f := range typ.InputFields {
				names = append(names, f.Name)
			}
			out[typ.Name] = strings.Join(names, " ")
		}
		for _, f := range typ.Fields {
			if f.Name == "insertIntoBlogCollection" || f.Name == "insertIntoPostCollection" {
				var names []string
				for _, a := range f.Args {
					names = append(names, a.Name)
				}
				out[f.Name] = strings.Join(names, " ")
			}
		}
	}
	sort.Strings(ext)
	out["types OnConflict, Constraint, UpdateColumn"] = strings.Join(ext, " ")
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestWriteExtensionsOneRoundTrip: an upsert and a nested insert of a post with two comments are each one
// statement, sent in one round trip with the session's prelude.
func TestWriteExtensionsOneRoundTrip(t *testing.T) {
	d := newTestDB(t, nestedFixture+`
		create unique index on post(title);
		create policy own_update on post for update to authenticated using (author_id = auth.uid());
		grant update on post to authenticated;
		comment on table post is '@graphql({"features": ["nestedInsert", "upsert"]})';
		insert into post(blog_id, author_id, title) values (1, '22222222-2222-2222-2222-222222222222', 'first');`)
	ctx := context.Background()
	conn, counter := countedConn(t, d)
	engine := NewEngine(Options{})
	session := Session{Role: "authenticated", Claims: bob, SearchPath: []string{"public"}}
	for _, tc := range []struct{ query, want string }{
		{`mutation { insertIntoPostCollection(objects: [{title: "first", blogId: 1}], onConflict: {constraint: post_title_idx, updateColumns: [blogId]}) { affectedCount } }`,
			`{"data": {"insertIntoPostCollection": {"affectedCount": 1}}}`},
		{`mutation { insertIntoPostCollection(objects: [{title: "second", blogId: 1, commentCollection: [{body: "a"}, {body: "b"}]}]) { affectedCount records { title } } }`,
			`{"data": {"insertIntoPostCollection": {"records": [{"title": "second"}], "affectedCount": 1}}}`},
	} {
		engine.ExecuteAs(ctx, conn, session, Request{Query: `{ __typename }`})
		before := counter.roundTrips()
		got := string(engine.ExecuteAs(ctx, conn, session, Request{Query: tc.query}))
		if trips := counter.roundTrips() - before; trips != 1 {
			t.Errorf("%d round trips for %s", trips, tc.query)
		}
		if got != tc.want {
			t.Errorf("got  %s\nwant %s", got, tc.want)
		}
	}
	if got := d.scalar("select count(*) from comment c join post p on p.id = c.post_id where p.title = 'second'"); got != "2" {
		t.Errorf("comments written: %s", got)
	}
}
