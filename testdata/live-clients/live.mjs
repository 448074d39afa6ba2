// Subscribes to a live list of todos with one of the clients people use, adds a todo over HTTP, and waits until
// the subscription pushes the list with it. Input (stdin, JSON): {client, httpURL, wsURL, anonKey, token, task}.
// Prints RESULT {"first": [...tasks], "updated": [...tasks]}.
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { createClient } from 'graphql-ws';

const input = JSON.parse(readFileSync(0, 'utf8'));
const query = 'subscription { todoCollection(orderBy: [{id: AscNullsLast}]) { edges { node { task } } } }';
const connectionParams = { apikey: input.anonKey, Authorization: `Bearer ${input.token}` };

const timer = setTimeout(() => {
  console.error('timed out');
  process.exit(2);
}, 30000);

const tasks = (data) => data.todoCollection.edges.map((e) => e.node.task);

let first = null;
let done;
const finished = new Promise((resolve) => { done = resolve; });

async function insert() {
  const res = await fetch(input.httpURL, {
    method: 'POST',
    headers: { 'content-type': 'application/json', apikey: input.anonKey, authorization: `Bearer ${input.token}` },
    body: JSON.stringify({ query: `mutation($t: String!) { insertIntotodoCollection(objects: [{task: $t}]) { affectedCount } }`, variables: { t: input.task } }),
  });
  const body = await res.json();
  if (body.errors) throw new Error(JSON.stringify(body.errors));
}

function onData(data) {
  const list = tasks(data);
  if (first === null) {
    first = list;
    insert().catch((e) => { console.error(e); process.exit(3); });
  } else if (list.includes(input.task)) {
    done({ first, updated: list });
  }
}

function onError(err) {
  console.error('subscription error', err);
  process.exit(4);
}

let close = () => {};
switch (input.client) {
  case 'graphql-ws': {
    const client = createClient({ url: input.wsURL, webSocketImpl: WebSocket, connectionParams });
    const stop = client.subscribe({ query }, { next: (r) => (r.errors ? onError(r.errors) : onData(r.data)), error: onError, complete: () => {} });
    close = () => { stop(); return client.dispose(); };
    break;
  }
  case 'apollo': {
    const { ApolloClient, InMemoryCache, gql } = await import('@apollo/client');
    const { GraphQLWsLink } = await import('@apollo/client/link/subscriptions');
    const ws = createClient({ url: input.wsURL, webSocketImpl: WebSocket, connectionParams: () => connectionParams });
    const client = new ApolloClient({ link: new GraphQLWsLink(ws), cache: new InMemoryCache() });
    const sub = client.subscribe({ query: gql(query) }).subscribe({ next: (r) => (r.error ? onError(r.error) : onData(r.data)), error: onError });
    close = () => { sub.unsubscribe(); return ws.dispose(); };
    break;
  }
  case 'urql': {
    const { Client, subscriptionExchange, fetchExchange } = await import('@urql/core');
    const ws = createClient({ url: input.wsURL, webSocketImpl: WebSocket, connectionParams });
    const client = new Client({
      url: input.httpURL,
      fetchOptions: { headers: { apikey: input.anonKey, authorization: `Bearer ${input.token}` } },
      exchanges: [
        subscriptionExchange({
          forwardSubscription(request) {
            const op = { ...request, query: request.query || '' };
            return { subscribe: (sink) => ({ unsubscribe: ws.subscribe(op, sink) }) };
          },
        }),
        fetchExchange,
      ],
    });
    const sub = client.subscription(query, {}).subscribe((r) => (r.error ? onError(r.error) : onData(r.data)));
    close = () => { sub.unsubscribe(); return ws.dispose(); };
    break;
  }
  case 'graphql-sse': {
    const { createClient: createSSEClient } = await import('graphql-sse');
    const client = createSSEClient({ url: input.httpURL, headers: { apikey: input.anonKey, authorization: `Bearer ${input.token}` } });
    const stop = client.subscribe({ query }, { next: (r) => (r.errors ? onError(r.errors) : onData(r.data)), error: onError, complete: () => {} });
    close = () => { stop(); client.dispose(); };
    break;
  }
  default:
    console.error('unknown client', input.client);
    process.exit(5);
}

const result = await finished;
await close();
clearTimeout(timer);
console.log('RESULT ' + JSON.stringify(result));
process.exit(0);
