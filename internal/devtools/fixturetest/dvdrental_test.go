package fixturetest

import "testing"

func TestDVDRental(t *testing.T) {
	run(t, fixture{
		name:          "dvdrental",
		schemaCallers: []string{"anon"},
		requests: []request{
			// Many-to-many through film_actor, an enum with mapped values, an array, a domain, a tsvector.
			{caller: "anon", query: `{ filmCollection(first: 2, orderBy: [{title: AscNullsLast}]) { pageInfo { hasNextPage endCursor } edges { node { title releaseYear rating specialFeatures fulltext rentalRate language { name } filmActorCollection { edges { node { actor { fullName } } } } } } } }`},
			{caller: "anon", query: `query($after: Cursor) { filmCollection(first: 2, after: $after, orderBy: [{title: AscNullsLast}]) { edges { node { title } } } }`, variables: `{"after": "WyJBQ0UgR09MREZJTkdFUiJd"}`},
			{caller: "anon", query: `{ filmCollection(filter: {rating: {in: [PG_13, NC_17]}}) { edges { node { title rating } } } }`},
			{caller: "anon", query: `{ filmCollection(filter: {specialFeatures: {contains: ["Trailers"]}, length: {lt: 60}}) { edges { node { title length specialFeatures } } } }`},
			{caller: "anon", query: `{ filmCollection(filter: {or: [{title: {ilike: "%holes%"}}, {and: [{rentalRate: {gte: "2.99"}}, {replacementCost: {gt: "20"}}]}]}) { edges { node { title rentalRate replacementCost } } } }`},
			// The partitioned payments are one collection, with totalCount, aggregates and relationships.
			{caller: "anon", query: `{ paymentCollection(orderBy: [{paymentDate: AscNullsLast}]) { totalCount aggregate { count sum { amount } avg { amount } max { paymentDate } } edges { node { paymentId amount paymentDate customer { lastName } rental { inventory { film { title } } } } } } }`},
			{caller: "anon", query: `{ customerByPk(customerId: 2) { firstName activebool createDate paymentCollection(filter: {paymentDate: {gte: "2007-03-10T00:00:00"}}) { edges { node { amount } } } rentalCollection(orderBy: [{rentalDate: DescNullsLast}]) { edges { node { rentalDate returnDate } } } } }`},
			// Views and the materialized view, with the directive's foreign key back to film.
			{caller: "anon", query: `{ filmListCollection(filter: {category: {eq: "Action"}}, orderBy: [{fid: AscNullsLast}]) { edges { node { fid title category price rating film { title } } } } filmByPk(filmId: 3) { listing { category } } }`},
			{caller: "anon", query: `{ actorInfoCollection(orderBy: [{actorId: AscNullsLast}], first: 3) { edges { node { firstName lastName filmTitles } } } salesByCategoryCollection(orderBy: [{totalSales: DescNullsLast}]) { edges { node { category totalSales } } } }`},
			// Functions: a scalar, a set of films, a computed field; the one taking an enum is not exposed.
			{caller: "anon", query: `{ getCustomerBalance(pCustomerId: 1, pEffectiveDate: "2007-02-28T00:00:00") filmsInCategory(categoryName: "Documentary", orderBy: [{title: DescNullsLast}]) { edges { node { title } } } }`},
			{caller: "anon", query: `{ filmsRated(rating: G) { edges { node { title } } } }`},
			{caller: "anon", query: `{ actorCollection(filter: {lastName: {startsWith: "D"}}) { edges { node { actorId fullName } } } }`},
			// Writes: an insert routed to its partition, a volatile function as a mutation, an enum value that
			// is not one, and a domain check.
			{caller: "service_role", query: `mutation { insertIntoPaymentCollection(objects: [{customerId: 3, rentalId: 5, amount: "1.50", paymentDate: "2007-04-20T10:00:00"}]) { affectedCount records { paymentId amount customer { firstName } } } }`},
			{caller: "service_role", query: `mutation { returnRental(pRentalId: 4, pAt: "2007-03-25T12:00:00") { rentalId returnDate customer { lastName } } }`},
			{caller: "service_role", query: `mutation { updateFilmCollection(set: {rating: PG_13}, filter: {title: {eq: "ACE GOLDFINGER"}}) { records { title rating } } }`},
			{caller: "service_role", query: `mutation { updateFilmCollection(set: {rating: PG-13}, filter: {filmId: {eq: 2}}) { affectedCount } }`},
			{caller: "service_role", query: `mutation { updateFilmCollection(set: {releaseYear: 1800}, filter: {filmId: {eq: 2}}) { affectedCount } }`},
			{caller: "service_role", query: `{ paymentCollection(filter: {customerId: {eq: 3}}) { totalCount aggregate { sum { amount } } } filmByPk(filmId: 2) { rating releaseYear } }`},
		},
	})
}
