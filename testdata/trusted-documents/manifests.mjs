// Writes the trusted-document manifests of one small app with the tools apps use: graphql-codegen's client
// preset (persistedDocuments: persisted-documents.json, SHA-256 of each document) and relay-compiler
// (persistConfig: persisted_queries.json). Input (stdin, JSON): {schema: SDL text, dir: an empty directory}.
// Prints RESULT {"codegen": path, "relay": path}.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generate } from '@graphql-codegen/cli';
import { preset as clientPreset } from '@graphql-codegen/client-preset';

const input = JSON.parse(readFileSync(0, 'utf8'));
const here = dirname(fileURLToPath(import.meta.url));
const dir = input.dir;
writeFileSync(join(dir, 'schema.graphql'), input.schema);

// graphql-codegen: documents in graphql() calls, as the client preset's apps write them.
mkdirSync(join(dir, 'codegen'), { recursive: true });
writeFileSync(join(dir, 'codegen', 'app.ts'), `
import { graphql } from './gql';
export const Tasks = graphql(\`
  query Tasks {
    todoCollection(orderBy: [{ id: AscNullsLast }]) {
      edges { node { task } }
    }
  }
\`);
`);
await generate({
  cwd: dir,
  schema: join(dir, 'schema.graphql'),
  documents: [join(dir, 'codegen', '*.ts')],
  generates: { [join(dir, 'codegen', 'gql') + '/']: { preset: clientPreset, presetConfig: { persistedDocuments: true } } },
  silent: true,
}, true);

// relay-compiler: documents in graphql tags, the persisted query file its persistConfig writes.
mkdirSync(join(dir, 'relay', 'src', '__generated__'), { recursive: true });
writeFileSync(join(dir, 'relay', 'src', 'App.js'), `
import { graphql } from 'react-relay';
export const query = graphql\`
  query AppTasksQuery {
    todoCollection(orderBy: [{ id: AscNullsLast }]) {
      edges { node { task } }
    }
  }
\`;
`);
writeFileSync(join(dir, 'relay', 'relay.config.json'), JSON.stringify({
  src: './src',
  schema: '../schema.graphql',
  language: 'javascript',
  artifactDirectory: './src/__generated__',
  persistConfig: { file: './persisted_queries.json', algorithm: 'SHA256' },
  // pg_graphql's Node interface has nodeId, not id (Supabase's Relay guide sets the same).
  schemaConfig: { nodeInterfaceIdField: 'nodeId' },
}));
writeFileSync(join(dir, 'relay', 'persisted_queries.json'), '{}'); // relay-compiler adds to an existing file
execFileSync(join(here, 'node_modules', '.bin', 'relay-compiler'), [], { cwd: join(dir, 'relay'), stdio: ['ignore', 'inherit', 'inherit'] });

console.log('RESULT ' + JSON.stringify({
  codegen: join(dir, 'codegen', 'gql', 'persisted-documents.json'),
  relay: join(dir, 'relay', 'persisted_queries.json'),
}));
