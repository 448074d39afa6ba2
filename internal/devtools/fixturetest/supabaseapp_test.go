package fixturetest

import "testing"

const (
	ada   = "11111111-1111-4111-8111-111111111111"
	alan  = "22222222-2222-4222-8222-222222222222"
	grace = "33333333-3333-4333-8333-333333333333"
)

func TestSupabaseApp(t *testing.T) {
	run(t, fixture{
		name:          "supabase-app",
		authTables:    true,
		schemaCallers: []string{"anon", ada, "service_role"},
		requests: []request{
			// Profiles were made by the sign-up trigger; everyone may read them, with the computed field.
			{caller: "anon", query: `{ profilesCollection(orderBy: [{username: AscNullsLast}]) { edges { node { username fullName displayName avatarUrl } } } }`},
			// auth.users is not on the search path: user_id is a plain UUID, with no relationship.
			{caller: "anon", query: `{ todosCollection { edges { node { id task } } } }`},
			{caller: ada, query: `{ todosCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id task priority isComplete insertedAt } } } }`},
			{caller: alan, query: `{ todosCollection { edges { node { id task priority } } } }`},
			{caller: "service_role", query: `{ todosCollection(filter: {priority: {eq: high}}, orderBy: [{id: DescNullsLast}]) { edges { node { id userId task } } } }`},
			// Inserts: user_id defaults to auth.uid(); a row for someone else breaks the policy; anon may not.
			{caller: alan, query: `mutation($t: String!) { insertIntoTodosCollection(objects: [{task: $t, priority: low}]) { affectedCount records { id userId task priority isComplete } } }`, variables: `{"t": "Build the bombe"}`},
			{caller: alan, query: `mutation { insertIntoTodosCollection(objects: [{task: "Not mine", userId: "` + ada + `"}]) { affectedCount } }`},
			{caller: "anon", query: `mutation { insertIntoTodosCollection(objects: [{task: "Anonymous"}]) { affectedCount } }`},
			// A check constraint is Postgres' error, and nothing is written.
			{caller: ada, query: `mutation { insertIntoTodosCollection(objects: [{task: "ok"}]) { affectedCount } }`},
			// Updates and deletes reach only the caller's rows.
			{caller: ada, query: `mutation { updateTodosCollection(set: {isComplete: true}, atMost: 5) { affectedCount records { id isComplete } } }`},
			{caller: alan, query: `mutation { deleteFromTodosCollection(filter: {id: {eq: 1}}) { affectedCount } }`},
			{caller: "service_role", query: `{ todosCollection(orderBy: [{id: AscNullsLast}]) { edges { node { id userId isComplete } } } }`},
			{caller: ada, query: `mutation { updateProfilesCollection(set: {website: "https://ada.example.com"}, filter: {username: {in: ["ada", "alan"]}}) { affectedCount records { username website } } }`},
			// Channels and messages through the membership helper.
			{caller: grace, query: `{ channelsCollection { totalCount edges { node { slug messages: messagesCollection { edges { node { message author { username } } } } } } } }`},
			{caller: ada, query: `{ channelsCollection(orderBy: [{slug: AscNullsLast}]) { totalCount edges { node { slug createdBy channelMembersCollection { edges { node { user { username } } } } } } } }`},
			{caller: "anon", query: `{ channelsCollection { totalCount } messagesCollection { edges { node { id } } } }`},
			{caller: ada, query: `{ isMemberOf(channel: "2") alan: profilesByPk(id: "` + alan + `") { username messages { edges { node { message channel { slug } } } } } }`},
			{caller: grace, query: `mutation { ok: insertIntoMessagesCollection(objects: [{message: "Hello from Grace", channelId: "1"}]) { records { message author { username } channel { slug } } } }`},
			{caller: grace, query: `mutation { insertIntoMessagesCollection(objects: [{message: "Let me in", channelId: "2"}]) { affectedCount } }`},
			{caller: "service_role", query: `{ messagesCollection(last: 2) { pageInfo { hasPreviousPage hasNextPage } edges { node { message } } } }`},
		},
	})
}
