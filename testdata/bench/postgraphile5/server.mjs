// PostGraphile v5 (Grafast) for `make bench` (internal/devtools/benchcmp), set up as its documentation suggests for
// production: the Amber preset, the connection-filter plugin (filters on related rows for Q8, as pgreflect's
// relatedFilter extension), grafserv on Node's own HTTP server, no GraphiQL, no watch mode, no explain, and one
// process. Settings come from the environment so that no secret is on a command line.
//
// v5 leaves JWT verification to the server (its "JWT guide": verify the token yourself, hand the claims over in
// preset.grafast.context's pgSettings). This does what server.js does for v4: the token is verified with the
// project secret and audience, the role comes from its role claim (anon without a token), and the claims go to
// request.jwt.claims, which Supabase-style policies read through auth.uid(); v4 also sets jwt.claims.*, which
// nothing in the benchmark's policies reads, so v5 is spared that work.
import { createServer } from "node:http";
import jwt from "jsonwebtoken";
import { postgraphile } from "postgraphile";
import { makePgService } from "postgraphile/adaptors/pg";
import { grafserv } from "postgraphile/grafserv/node";
import { printSchema } from "postgraphile/graphql";
import { PostGraphileAmberPreset } from "postgraphile/presets/amber";
import { PostGraphileConnectionFilterPreset } from "postgraphile-plugin-connection-filter";

const { BENCH_DATABASE_URL, BENCH_JWT_SECRET, BENCH_PORT } = process.env;
if (!BENCH_DATABASE_URL || !BENCH_JWT_SECRET || !BENCH_PORT) {
  console.error("server.mjs needs BENCH_DATABASE_URL, BENCH_JWT_SECRET and BENCH_PORT");
  process.exit(2);
}

// An error whose status grafserv sends as the HTTP status (401, as v4 answers a bad token).
function unauthorized(message) {
  return Object.assign(new Error(message), { statusCode: 401, safeMessage: true });
}

function pgSettingsFor(authorization) {
  if (!authorization) return { role: "anon" };
  if (!authorization.startsWith("Bearer ")) throw unauthorized("Authorization header must be Bearer <JWT>");
  let claims;
  try {
    claims = jwt.verify(authorization.slice(7), BENCH_JWT_SECRET, {
      algorithms: ["HS256"],
      audience: "authenticated",
    });
  } catch (err) {
    throw unauthorized(`invalid JWT: ${err.message}`);
  }
  return { role: claims.role || "anon", "request.jwt.claims": JSON.stringify(claims) };
}

const preset = {
  extends: [PostGraphileAmberPreset, PostGraphileConnectionFilterPreset],
  pgServices: [makePgService({ connectionString: BENCH_DATABASE_URL, schemas: ["public"] })],
  schema: { connectionFilterRelations: true },
  grafserv: {
    host: "127.0.0.1",
    port: Number(BENCH_PORT),
    graphqlPath: "/graphql/v1",
    graphiql: false,
    graphiqlOnGraphQLGET: false,
    watch: false,
    websockets: false,
  },
  grafast: {
    explain: false,
    context(requestContext) {
      return { pgSettings: pgSettingsFor(requestContext.node?.req?.headers?.authorization) };
    },
  },
};

const pgl = postgraphile(preset);
// --print-schema writes the generated schema as SDL and exits: schema.graphql beside this file, which
// internal/devtools/benchcmp's tests validate the v5 documents against without Node.
if (process.argv[2] === "--print-schema") {
  process.stdout.write(printSchema(await pgl.getSchema()) + "\n");
  await pgl.release();
  process.exit(0);
}
const serv = pgl.createServ(grafserv);
const server = createServer();
// Node closes a keep-alive connection after 5 s idle by default; the load generator (Go's client) keeps idle
// connections for a minute and may reuse one just as Node closes it (a reset between the checks and the warm-up).
// Servers behind a load balancer set this above the balancer's idle timeout, as here above the client's.
server.keepAliveTimeout = 100_000;
server.headersTimeout = 101_000;
server.on("error", (err) => {
  console.error(err);
  process.exit(1);
});
await serv.addTo(server);
server.listen(Number(BENCH_PORT), "127.0.0.1", () => {
  console.log(`PostGraphile ${process.version} listening on 127.0.0.1:${BENCH_PORT}`);
});
for (const signal of ["SIGTERM", "SIGINT"]) {
  process.on(signal, () => {
    server.close();
    Promise.resolve(pgl.release()).finally(() => process.exit(0));
  });
}
