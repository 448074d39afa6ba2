// Drives @supabase/ssr's server client against cookies, so that client/webauth_test.go can check that
// client.WebAuth and a supabase-js server app of the same site read each other's cookies. Run as
//
//   node [--experimental-websocket] ssr.mjs <scenario>   < input.json
//
// Input: {url, anonKey, redirectTo, cookies: [{name, value}], flowIds}; flowIds turns on supabase-js's
// experimental sb_flow_id parameter (per-flow verifier cookies named in the redirect). Scenarios:
//   signin  signInWithOAuth (PKCE) and report the provider URL and the cookies @supabase/ssr set;
//   read    getSession and getUser from the given cookies.
// The result is one line `RESULT <json>`; nothing here asserts.
import { createServerClient } from '@supabase/ssr'

const scenario = process.argv[2]
const input = JSON.parse(await new Promise((resolve, reject) => {
  let s = ''
  process.stdin.setEncoding('utf8')
  process.stdin.on('data', (c) => (s += c))
  process.stdin.on('end', () => resolve(s))
  process.stdin.on('error', reject)
}))

const jar = new Map((input.cookies || []).map((c) => [c.name, c.value]))
const set = []
const supabase = createServerClient(input.url, input.anonKey, {
  auth: input.flowIds ? { experimental: { appendPkceFlowIdToRedirects: true } } : {},
  cookies: {
    getAll: () => [...jar].map(([name, value]) => ({ name, value })),
    setAll: (cookies) => {
      for (const c of cookies) {
        set.push({ name: c.name, value: c.value, maxAge: c.options?.maxAge ?? null })
        if (c.value === '' || c.options?.maxAge === 0) jar.delete(c.name)
        else jar.set(c.name, c.value)
      }
    },
  },
})

const out = {}
const err = (e) => (e ? { name: e.name, code: e.code ?? null, status: e.status ?? null, message: e.message } : null)
if (scenario === 'signin') {
  const { data, error } = await supabase.auth.signInWithOAuth({
    provider: 'google',
    options: { redirectTo: input.redirectTo, skipBrowserRedirect: true },
  })
  out.url = data?.url ?? null
  out.error = err(error)
} else if (scenario === 'read') {
  const s = await supabase.auth.getSession()
  out.session = s.data.session
  out.sessionError = err(s.error)
  const u = await supabase.auth.getUser()
  out.user = u.data.user
  out.userError = err(u.error)
} else {
  throw new Error('unknown scenario ' + scenario)
}
// Give @supabase/ssr's deferred cookie writes a turn before reporting them.
await new Promise((r) => setTimeout(r, 50))
out.cookies = [...jar].map(([name, value]) => ({ name, value }))
out.set = set
// Exit once the line is written: a pipe is written asynchronously, and the client's timers would keep Node up.
process.stdout.write('RESULT ' + JSON.stringify(out) + '\n', () => process.exit(0))
