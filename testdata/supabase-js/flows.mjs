// Drives pgreflect's /auth/v1 with the real supabase-js client, as an app would. Run by
// internal/authapi/supabasejs_test.go:
//
//   node [--experimental-websocket] flows.mjs <scenario>   < input.json
//
// supabase-js 2.119 throws at createClient on Node 20 for want of a global WebSocket (it asks for Node 22);
// Node 20's --experimental-websocket flag provides one, so the Go test passes it when Node is older than 22.
//
// The input (JSON on stdin) carries the API URL, the anon key, the redirect target and, per scenario, the
// ID tokens to present. The result is printed as one line `RESULT <json>` on stdout; the Go test asserts on
// it. Nothing here asserts: this script only records what the client saw.
import { createClient } from '@supabase/supabase-js'

const scenario = process.argv[2]
const input = JSON.parse(await readStdin())

function readStdin() {
  return new Promise((resolve, reject) => {
    let s = ''
    process.stdin.setEncoding('utf8')
    process.stdin.on('data', (c) => (s += c))
    process.stdin.on('end', () => resolve(s))
    process.stdin.on('error', reject)
  })
}

// memoryStorage is a plain key-value store, so the test can look at what the client keeps (PKCE verifier).
function memoryStorage() {
  const m = new Map()
  return {
    map: m,
    getItem: (k) => (m.has(k) ? m.get(k) : null),
    setItem: (k, v) => void m.set(k, v),
    removeItem: (k) => void m.delete(k),
  }
}

function newClient(flowType, storage = memoryStorage()) {
  const client = createClient(input.url, input.anonKey, {
    auth: { flowType, storage, persistSession: true, autoRefreshToken: false, detectSessionInUrl: false },
  })
  return { client, storage }
}

function errInfo(e) {
  if (!e) return null
  return { name: e.name, code: e.code ?? null, status: e.status ?? null, message: e.message }
}

// result keeps what the test needs from a { data, error } answer.
function result({ data, error }) {
  return { error: errInfo(error), session: data?.session ?? null, user: data?.user ?? null }
}

// follow walks the redirect chain of a browser navigation (no apikey header, as a browser sends none) until
// it is sent to the app's redirect target, which is not fetched. Each hop is recorded.
async function follow(start, target) {
  const hops = []
  let url = start
  for (let i = 0; i < 10; i++) {
    const res = await fetch(url, { redirect: 'manual' })
    const location = res.headers.get('location')
    const hop = { url, status: res.status, location }
    hops.push(hop)
    if (res.status < 300 || res.status > 399 || !location) {
      hop.body = await res.text()
      return { hops, final: null }
    }
    await res.arrayBuffer()
    const next = new URL(location, url)
    if (next.href.startsWith(target)) return { hops, final: next }
    url = next.href
  }
  return { hops, final: null }
}

function urlParts(u) {
  if (!u) return null
  return {
    href: u.href,
    base: u.origin + u.pathname,
    query: Object.fromEntries(u.searchParams),
    fragmentKeys: u.hash ? [...new URLSearchParams(u.hash.slice(1)).keys()] : [],
    fragment: u.hash ? Object.fromEntries(new URLSearchParams(u.hash.slice(1))) : {},
  }
}

function queryParams() {
  return input.offline ? { access_type: 'offline', prompt: 'consent' } : undefined
}

// lifecycle runs what an app does with a signed-in client and records each answer.
async function lifecycle(client, out) {
  const first = (await client.auth.getSession()).data.session
  out.getSession = result(await client.auth.getSession())
  out.getUser = result(await client.auth.getUser())
  out.refresh = result(await client.auth.refreshSession())
  // The client saves the rotated token; presenting the old one again right away is within the reuse interval.
  out.refreshReuse = result(await client.auth.refreshSession({ refresh_token: first.refresh_token }))
  // Work on with the session the client holds now.
  out.getUserAfterRefresh = result(await client.auth.getUser())
  const before = (await client.auth.getSession()).data.session
  out.signOut = { error: errInfo((await client.auth.signOut({ scope: input.signOutScope ?? 'global' })).error) }
  out.sessionAfterSignOut = (await client.auth.getSession()).data.session
  // The access token is still unexpired, but its session is gone on the server.
  out.getUserAfterSignOut = result(await client.auth.getUser(before.access_token))
  out.refreshAfterSignOut = result(await client.auth.refreshSession({ refresh_token: before.refresh_token }))
}

const scenarios = {
  async pkce() {
    const out = {}
    const { client, storage } = newClient('pkce')
    const { data, error } = await client.auth.signInWithOAuth({
      provider: 'google',
      options: { redirectTo: input.redirectTo, skipBrowserRedirect: true, queryParams: queryParams() },
    })
    out.signInWithOAuth = { error: errInfo(error), url: data?.url ?? null }
    if (error) return out
    out.verifierKeysBefore = [...storage.map.keys()].filter((k) => k.includes('code-verifier'))
    const { hops, final } = await follow(data.url, input.redirectTo)
    out.hops = hops
    out.final = urlParts(final)
    const code = final?.searchParams.get('code')
    if (!code) return out
    out.exchange = result(await client.auth.exchangeCodeForSession(code))
    if (out.exchange.error) return out
    // A second client that somehow learnt the code but not the verifier is refused before anything is sent.
    out.exchangeWithoutVerifier = result(await newClient('pkce').client.auth.exchangeCodeForSession(code))
    await lifecycle(client, out)
    return out
  },

  async implicit() {
    const out = {}
    const { client } = newClient('implicit')
    const { data, error } = await client.auth.signInWithOAuth({
      provider: 'google',
      options: { redirectTo: input.redirectTo, skipBrowserRedirect: true, queryParams: queryParams() },
    })
    out.signInWithOAuth = { error: errInfo(error), url: data?.url ?? null }
    if (error) return out
    const { hops, final } = await follow(data.url, input.redirectTo)
    out.hops = hops
    out.final = urlParts(final)
    const f = out.final?.fragment
    if (!f?.access_token) return out
    // _getSessionFromURL needs a browser; in Node the app parses the fragment and calls setSession.
    out.setSession = result(await client.auth.setSession({ access_token: f.access_token, refresh_token: f.refresh_token }))
    if (out.setSession.error) return out
    await lifecycle(client, out)
    return out
  },

  // idtoken presents each of input.attempts with signInWithIdToken on a fresh client; the attempt named
  // input.lifecycle (if any) then goes through the whole session lifecycle.
  async idtoken() {
    const out = { attempts: {} }
    for (const a of input.attempts) {
      const { client } = newClient('pkce')
      const creds = { provider: a.provider ?? 'google', token: a.token }
      if (a.nonce) creds.nonce = a.nonce
      if (a.accessToken) creds.access_token = a.accessToken
      const r = (out.attempts[a.name] = result(await client.auth.signInWithIdToken(creds)))
      if (a.name === input.lifecycle && !r.error) {
        out.lifecycle = {}
        await lifecycle(client, out.lifecycle)
      }
    }
    return out
  },

  // adminUsers lists users as a server-side app does with the service_role key (auth.admin.listUsers), page
  // by page, and once with the anon key, which must be refused.
  async adminUsers() {
    const admin = createClient(input.url, input.serviceRoleKey, { auth: { persistSession: false, autoRefreshToken: false } })
    const page = async (client, params) => {
      const { data, error } = await client.auth.admin.listUsers(params)
      return { error: errInfo(error), emails: (data?.users ?? []).map((u) => u.email),
        identities: (data?.users ?? []).map((u) => (u.identities ?? []).map((i) => i.provider + ':' + i.id)),
        aud: data?.aud ?? null, nextPage: data?.nextPage ?? null, lastPage: data?.lastPage ?? null, total: data?.total ?? null }
    }
    const anon = newClient('pkce').client
    return {
      all: await page(admin),
      first: await page(admin, { page: 1, perPage: 2 }),
      second: await page(admin, { page: 2, perPage: 2 }),
      anon: await page(anon),
    }
  },

  // errors records the error answers an app sees for requests the server must refuse.
  async errors() {
    const out = {}
    const { client } = newClient('pkce')
    out.refreshUnknown = result(await client.auth.refreshSession({ refresh_token: 'abcdefghijkl' }))
    out.refreshMalformed = result(await client.auth.refreshSession({ refresh_token: 'short' }))
    out.getUserBadJWT = result(await client.auth.getUser('not-a-jwt'))
    // A pkce client refuses to exchange without a stored verifier; an implicit one sends an empty verifier,
    // which is what a server sees from an app whose flow started in another browser.
    out.exchangeNoVerifier = result(
      await newClient('implicit').client.auth.exchangeCodeForSession('00000000-0000-4000-8000-000000000000'),
    )
    return out
  },
}

const run = scenarios[scenario]
if (!run) {
  console.error(`unknown scenario ${scenario}`)
  process.exit(2)
}
const out = await run()
process.stdout.write('RESULT ' + JSON.stringify(out) + '\n')
// Let the client's timers (none with autoRefreshToken off) not hold the process.
process.exit(0)
