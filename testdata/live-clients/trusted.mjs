// Subscribes by trusted document with the clients people use: graphql-ws by documentId and by the hash of
// Apollo's protocol in extensions (both with "query": "", which graphql-ws requires to be a string), graphql-sse
// by documentId, and graphql-ws with a document that is not trusted. Input (stdin, JSON): {httpURL, wsURL,
// anonKey, documentId, hash, untrusted}. Prints RESULT {"byId": [...tasks], "byHash": [...tasks],
// "sseById": [...tasks], "refused": [...errors]}.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';
import { createClient as createSSEClient } from 'graphql-sse';

const input = JSON.parse(readFileSync(0, 'utf8'));

const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(2);
}, 30000);

const tasks = (data) => data.todoCollection.edges.map((e) => e.node.task);

// first resolves with the tasks of a subscription's first answer, or with the errors it ends with.
function first(client, payload) {
  return new Promise((resolve, reject) => {
    let stop = () => {};
    stop = client.subscribe(payload, {
      next: (r) => {
        stop();
        resolve(r.errors ? { errors: r.errors } : { tasks: tasks(r.data) });
      },
      error: (err) => resolve({ errors: Array.isArray(err) ? err : [String(err)] }),
      complete: () => {},
    });
  });
}

const ws = createClient({ url: input.wsURL, webSocketImpl: WebSocket, connectionParams: { apikey: input.anonKey } });
const sse = createSSEClient({ url: input.httpURL, headers: { apikey: input.anonKey } });
const byId = await first(ws, { query: '', documentId: input.documentId });
const byHash = await first(ws, { query: '', extensions: { persistedQuery: { version: 1, sha256Hash: input.hash } } });
const sseById = await first(sse, { query: '', documentId: input.documentId });
const refused = await first(ws, { query: input.untrusted });
await ws.dispose();
sse.dispose();
clearTimeout(timer);
console.log('RESULT ' + JSON.stringify({ byId: byId.tasks ?? byId.errors, byHash: byHash.tasks ?? byHash.errors,
  sseById: sseById.tasks ?? sseById.errors, refused: refused.errors ?? refused.tasks }));
process.exit(0);
