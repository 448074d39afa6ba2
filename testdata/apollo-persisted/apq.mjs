// Runs one query through Apollo Client's persisted-query link with hashed queries over GET, twice: a client
// against the first server (the hash misses, the link sends the document), then a fresh client against the
// second server (the hash alone, the document known from the shared store). Input (stdin, JSON):
// {firstURL, secondURL, anonKey}. Prints RESULT {"first": [...tasks], "second": [...tasks], "requests": [...]}
// with what each HTTP request was (method, status, Cache-Control, whether it carried the document and the hash).
import { readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { ApolloClient, ApolloLink, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';

const input = JSON.parse(readFileSync(0, 'utf8'));
const query = gql`
  query Tasks {
    todoCollection(orderBy: [{ id: AscNullsLast }]) {
      edges {
        node {
          task
        }
      }
    }
  }
`;

const requests = [];
async function recordingFetch(url, options) {
  const res = await fetch(url, options);
  const sent = options.method === 'GET' ? decodeURIComponent(String(url)) : String(options.body);
  requests.push({
    method: options.method,
    status: String(res.status),
    cacheControl: res.headers.get('cache-control') ?? '',
    hasQuery: options.method === 'GET' ? new URL(url).searchParams.has('query') : JSON.parse(options.body).query !== undefined,
    hasHash: sent.includes('sha256Hash'),
  });
  return res;
}

async function tasks(uri) {
  const persisted = new PersistedQueryLink({
    sha256: (text) => createHash('sha256').update(text).digest('hex'),
    useGETForHashedQueries: true,
  });
  const http = new HttpLink({ uri, headers: { apikey: input.anonKey }, fetch: recordingFetch });
  const client = new ApolloClient({ link: ApolloLink.from([persisted, http]), cache: new InMemoryCache() });
  const { data, error } = await client.query({ query, fetchPolicy: 'network-only' });
  if (error) throw error;
  return data.todoCollection.edges.map((e) => e.node.task);
}

const first = await tasks(input.firstURL);
const second = await tasks(input.secondURL);
console.log('RESULT ' + JSON.stringify({ first, second, requests }));
