// PostGraphile v4 for `make bench` (internal/devtools/benchcmp), configured the way its documentation suggests for
// production: JWT verified with the project secret, anon as the default role, the role from the JWT's role
// claim, no GraphiQL, no query log. Settings come from the environment so that no secret is on a command line.
//
// PostGraphile exposes the claims as jwt.claims.*; Supabase-style policies read request.jwt.claims through
// auth.uid(), so the verified token's claims are handed over under that name too. PostGraphile refuses
// pgDefaultRole beside a pgSettings function, so the function supplies the default role (anon) itself.
'use strict';
const http = require('http');
const jwt = require('jsonwebtoken');
const { postgraphile } = require('postgraphile');
const ConnectionFilterPlugin = require('postgraphile-plugin-connection-filter');

const { BENCH_DATABASE_URL, BENCH_JWT_SECRET, BENCH_PORT } = process.env;
if (!BENCH_DATABASE_URL || !BENCH_JWT_SECRET || !BENCH_PORT) {
  console.error('server.js needs BENCH_DATABASE_URL, BENCH_JWT_SECRET and BENCH_PORT');
  process.exit(2);
}

const middleware = postgraphile(BENCH_DATABASE_URL, 'public', {
  appendPlugins: [ConnectionFilterPlugin],
  // Filters on related rows (Q8), as pgreflect's relatedFilter extension.
  graphileBuildOptions: { connectionFilterRelations: true },
  jwtSecret: BENCH_JWT_SECRET,
  jwtVerifyOptions: { audience: 'authenticated' },
  graphiql: false,
  disableQueryLog: true,
  retryOnInitFail: false,
  graphqlRoute: '/graphql/v1',
  // PostGraphile verifies the token with jwtSecret before these settings are applied.
  pgSettings: (req) => {
    const h = req.headers.authorization || '';
    if (!h.startsWith('Bearer ')) return { role: 'anon' };
    const claims = jwt.decode(h.slice(7)) || {};
    return { role: claims.role || 'anon', 'request.jwt.claims': JSON.stringify(claims) };
  },
});

const server = http.createServer(middleware);
// Node closes a keep-alive connection after 5 s idle by default; the load generator (Go's client) keeps idle
// connections for a minute and may reuse one just as Node closes it (a reset between the checks and the
// warm-up). As for PostGraphile v5 (../postgraphile5/server.mjs): above the client's idle timeout.
server.keepAliveTimeout = 100_000;
server.headersTimeout = 101_000;
server.listen(Number(BENCH_PORT), '127.0.0.1', () => {
  console.log(`PostGraphile listening on 127.0.0.1:${BENCH_PORT}`);
});
