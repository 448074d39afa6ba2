package fixturetest

import "testing"

const (
	wile = "bbbbbbbb-0000-4000-8000-000000000001" // owner of acme
	road = "bbbbbbbb-0000-4000-8000-000000000002" // member of acme, viewer of globex
	hank = "bbbbbbbb-0000-4000-8000-000000000003" // owner of globex
)

func TestSaaS(t *testing.T) {
	run(t, fixture{
		name:          "saas",
		searchPath:    []string{"app", "billing"},
		schemaCallers: []string{"anon", road, "service_role"},
		requests: []request{
			// anon sees only the pricing table of billing (max_rows 2 on that schema).
			{caller: "anon", query: `{ plansCollection(orderBy: [{monthlyPrice: AscNullsLast}]) { pageInfo { hasNextPage } edges { node { id name monthlyPrice seats features } } } }`},
			{caller: "anon", query: `{ organizationsCollection { edges { node { id } } } }`},
			// Tenancy: each user sees the organizations they belong to, across schemas.
			{caller: road, query: `{ organizationsCollection(orderBy: [{slug: AscNullsLast}]) { edges { node { slug name settings membersCollection(orderBy: [{email: AscNullsLast}]) { edges { node { email role } } } subscriptions { status plan { name } } } } } }`},
			{caller: wile, query: `{ organizationsCollection { edges { node { slug subscriptions { status currentPeriodEnd plan { name } invoicesCollection(orderBy: [{issuedOn: DescNullsLast}]) { edges { node { number total paid } } } billingEventCollection { edges { node { type } } } } eventsCollection { edges { node { kind payload } } } } } } }`},
			{caller: hank, query: `{ projectsCollection { edges { node { key name planName tasksCollection { edges { node { title state tags estimate assignee { email role } } } } } } } }`},
			{caller: road, query: `{ myOpenTasks(orderBy: [{id: AscNullsLast}]) { edges { node { title state dueOn project { key } } } } }`},
			{caller: road, query: `{ tasksCollection(filter: {tags: {overlaps: ["urgent", "build"]}}) { edges { node { title organizationId } } } membersByPk(organizationId: "aaaaaaaa-0000-4000-8000-000000000002", userId: "` + road + `") { role assignedTasks { edges { node { title } } } } }`},
			// Writes follow the member's role: a member adds tasks to acme, a viewer may not add to globex,
			// only an owner or admin renames the organization, and nobody but the service deletes one.
			{caller: road, query: `mutation { insertIntoTasksCollection(objects: [{projectId: "2", organizationId: "aaaaaaaa-0000-4000-8000-000000000001", assigneeId: "` + road + `", title: "Paint the tunnel", tags: ["art"], estimate: "3 hours"}]) { affectedCount records { id title state tags estimate assignee { email } } } }`},
			{caller: road, query: `mutation { insertIntoTasksCollection(objects: [{projectId: "3", organizationId: "aaaaaaaa-0000-4000-8000-000000000002", title: "Peek at the dome"}]) { affectedCount } }`},
			{caller: road, query: `mutation { updateOrganizationsCollection(set: {name: "Road Corp"}) { affectedCount } }`},
			{caller: wile, query: `mutation { updateOrganizationsCollection(set: {name: "ACME Corporation"}, filter: {slug: {eq: "acme"}}) { affectedCount records { slug name } } }`},
			{caller: wile, query: `mutation { deleteFromOrganizationsCollection(filter: {slug: {eq: "acme"}}) { affectedCount } }`},
			// Members read billing but do not write it, and see no billing events (no policy).
			{caller: wile, query: `mutation { updateInvoicesCollection(set: {paid: true}, filter: {number: {eq: "INV-0003"}}) { affectedCount } }`},
			{caller: hank, query: `{ billingEventCollection { edges { node { type } } } invoicesCollection { edges { node { number } } } }`},
			// The service role sees every tenant, pages through billing's max_rows, and writes billing.
			{caller: "service_role", query: `{ invoicesCollection(orderBy: [{number: AscNullsLast}]) { pageInfo { hasNextPage endCursor } edges { node { number total subscription { organization { slug } } } } } }`},
			{caller: "service_role", query: `mutation { updateInvoicesCollection(set: {paid: true}, filter: {number: {eq: "INV-0003"}}) { affectedCount records { number paid } } }`},
			// Node ids name the schema; a row another tenant owns is null for a member.
			{caller: "anon", query: `{ node(nodeId: "WyJiaWxsaW5nIiwgInBsYW5zIiwgInRlYW0iXQ==") { nodeId ... on Plans { name seats } } }`},
			{caller: hank, query: `{ task: node(nodeId: "WyJhcHAiLCAidGFza3MiLCAxXQ==") { ... on Tasks { title } } member: node(nodeId: "WyJhcHAiLCAibWVtYmVycyIsICJhYWFhYWFhYS0wMDAwLTQwMDAtODAwMC0wMDAwMDAwMDAwMDEiLCAiYmJiYmJiYmItMDAwMC00MDAwLTgwMDAtMDAwMDAwMDAwMDAyIl0=") { ... on Members { email } } }`},
			{caller: wile, query: `{ task: node(nodeId: "WyJhcHAiLCAidGFza3MiLCAxXQ==") { ... on Tasks { title assignee { nodeId email } } } }`},
			{caller: "service_role", query: `{ tasksCollection(orderBy: [{id: DescNullsLast}], first: 2) { edges { node { id title project { organization { name } } } } } }`},
		},
	})
}
