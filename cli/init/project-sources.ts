// The example project of `voxgate init`: its server, signature check and .env reader. Each file is a String.raw
// literal (no backticks or ${ inside them). The project uses Node's standard library only, so `npm install` needs
// nothing from the network (its one dev dependency, the voxgate CLI, is a link to the checkout init ran from).
import { AGENT_SOURCE_FILES } from './project-agent-sources.js'
import { TEST_SOURCE_FILES } from './project-test-sources.js'

const SERVER_JS = String.raw`// A voxgate agent backend: voxgate POSTs each event of a call to /api/agent, signed with the agent's webhook
// secret, and speaks what this server answers (Server-Sent Events). Node's standard library only.
import { createServer } from 'node:http'
import { pathToFileURL } from 'node:url'
import { loadEnv } from './env.js'
import { verifySignature } from './signature.js'
import { replyTo } from './agent.js'

/** Webhook bodies are small JSON objects; anything bigger is refused. */
const MAX_BODY_BYTES = 1024 * 1024

/**
 * The HTTP server: POST /api/agent (signed), GET / (a liveness check). reply(event, { signal }) is agent.js's
 * replyTo unless a test passes another.
 */
export function createAgentServer({ secret, path = '/api/agent', reply = replyTo, log = console.log }) {
  return createServer((req, res) => {
    const url = new URL(req.url || '/', 'http://localhost')
    if (req.method === 'GET' && url.pathname === '/') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('voxgate agent backend: POST ' + path + '\n')
      return
    }
    if (url.pathname !== path) return sendJson(res, 404, { error: 'not found' })
    if (req.method !== 'POST') return sendJson(res, 405, { error: 'use POST' })
    const chunks = []
    let size = 0
    let tooBig = false
    req.on('data', (chunk) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) tooBig = true
      else chunks.push(chunk)
    })
    req.on('end', () => {
      if (tooBig) return sendJson(res, 413, { error: 'body too large' })
      // The signature covers the exact bytes received: check them before parsing anything.
      const raw = Buffer.concat(chunks)
      const check = verifySignature(raw, req.headers['service-signature'], secret)
      if (!check.ok) {
        log('refused an unsigned or badly signed request: ' + check.reason)
        return sendJson(res, 401, { error: 'invalid signature: ' + check.reason })
      }
      let event
      try {
        event = JSON.parse(raw.toString('utf8'))
      } catch {
        return sendJson(res, 400, { error: 'body is not JSON' })
      }
      log('<- ' + event.type + (event.text ? ': ' + event.text : ''))
      answer(event, res, reply, log).catch((err) => {
        log('reply failed: ' + (err && err.stack ? err.stack : err))
        if (!res.headersSent) sendJson(res, 500, { error: 'the agent failed' })
        else res.end()
      })
    })
  })
}

/**
 * Turns what reply() gave into voxgate's answer: a JSON body for data and lifecycle events, else a stream of
 * Server-Sent Events (response.tts pieces, then response.end or response.hangup), every event with the turn_id.
 */
async function answer(event, res, reply, log) {
  const turn_id = event.turn_id
  // voxgate cancels the request when the caller interrupts: the signal tells reply() to stop (pass it to fetch).
  const controller = new AbortController()
  res.on('close', () => {
    if (!res.writableFinished) controller.abort()
  })
  const result = await reply(event, { signal: controller.signal })
  if (controller.signal.aborted) return res.end()

  if (event.type !== 'message' && event.type !== 'session.start') {
    // data: a plain JSON reply (its content reaches the browser client); lifecycle events: an acknowledgement.
    if (result && typeof result === 'object' && 'data' in result) {
      return sendJson(res, 200, { type: 'response.data', content: result.data, turn_id })
    }
    if (typeof result === 'string') return sendJson(res, 200, { type: 'response.tts', content: result, turn_id })
    return sendJson(res, 200, {})
  }
  // A welcome with nothing to say is acknowledged: the agent does not speak first.
  if (result == null && event.type === 'session.start') return sendJson(res, 200, {})

  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
  const send = (e) => {
    if (e.type === 'response.tts' || e.type === 'response.hangup') log('-> ' + e.content)
    res.write('data: ' + JSON.stringify(e) + '\n\n')
  }
  if (result && typeof result === 'object' && typeof result.hangup === 'string') {
    send({ type: 'response.hangup', content: result.hangup, turn_id })
    return res.end()
  }
  if (result && typeof result === 'object' && 'data' in result) {
    send({ type: 'response.data', content: result.data, turn_id })
  } else if (typeof result === 'string') {
    if (result !== '') send({ type: 'response.tts', content: result, turn_id })
  } else if (result != null && (Symbol.asyncIterator in result || Symbol.iterator in result)) {
    // A stream of text (an LLM's tokens): spoken in whole words as it comes, never half a word at a time.
    let pending = ''
    try {
      for await (const piece of result) {
        if (controller.signal.aborted) return res.end()
        pending += String(piece)
        const cut = Math.max(pending.lastIndexOf(' '), pending.lastIndexOf('\n')) + 1
        if (cut > 0) {
          send({ type: 'response.tts', content: pending.slice(0, cut), turn_id })
          pending = pending.slice(cut)
        }
      }
    } catch (err) {
      if (controller.signal.aborted) return res.end()
      log('reply stream failed: ' + (err && err.message ? err.message : err))
      send({ type: 'response.error', error: 'the agent failed mid-reply', turn_id })
      return res.end()
    }
    if (pending !== '') send({ type: 'response.tts', content: pending, turn_id })
  }
  send({ type: 'response.end', turn_id })
  res.end()
}

function sendJson(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body))
}

// npm start: configuration from the environment and .env (VOXGATE_WEBHOOK_SECRET, PORT).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const env = loadEnv(new URL('./.env', import.meta.url))
  const secret = env.VOXGATE_WEBHOOK_SECRET
  if (!secret) {
    console.error('VOXGATE_WEBHOOK_SECRET is not set (see .env)')
    process.exit(1)
  }
  const port = Number(env.PORT || 3000)
  const server = createAgentServer({ secret })
  server.on('error', (err) => {
    if (err.code === 'EADDRINUSE') console.error('port ' + port + ' is already in use: stop what runs there, or set another PORT in .env')
    else console.error('cannot listen on port ' + port + ': ' + err.message)
    process.exit(1)
  })
  server.listen(port, () => {
    console.log('agent backend on http://localhost:' + port + '/api/agent (agent ' + (env.VOXGATE_AGENT_ID || '?') + ')')
    console.log('next: npx voxgate tunnel in this folder (another terminal), then talk to your agent')
  })
}
`

const SIGNATURE_JS = String.raw`import { createHmac, timingSafeEqual } from 'node:crypto'

/** How far a signature's timestamp may be from now, in seconds (the recommended five minutes). */
export const TOLERANCE_SECONDS = 300

/**
 * Checks service-signature, "t=<unix seconds>,v1=<hex HMAC-SHA256 of '<t>.<raw body>'>" keyed with the agent's
 * webhook secret: the HMAC of the exact bytes received (a Buffer; a string is taken as UTF-8), compared in
 * constant time with each v1 of the header; timestamps more than five minutes away are refused (replays).
 */
export function verifySignature(rawBody, header, secret, nowSeconds = Math.floor(Date.now() / 1000)) {
  if (typeof header !== 'string' || header === '') return { ok: false, reason: 'missing service-signature header' }
  let t
  const given = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 1) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't' && /^\d+$/.test(value)) t = value
    else if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) given.push(Buffer.from(value, 'hex'))
  }
  if (t === undefined || given.length === 0) return { ok: false, reason: 'malformed service-signature header' }
  if (Math.abs(nowSeconds - Number(t)) > TOLERANCE_SECONDS) return { ok: false, reason: 'timestamp outside the tolerance' }
  const expected = createHmac('sha256', secret).update(t + '.').update(rawBody).digest()
  if (!given.some((g) => timingSafeEqual(g, expected))) return { ok: false, reason: 'signature mismatch' }
  return { ok: true }
}

/** Signs a body as voxgate does (for tests and local experiments). */
export function sign(rawBody, secret, t = Math.floor(Date.now() / 1000)) {
  return 't=' + t + ',v1=' + createHmac('sha256', secret).update(t + '.').update(rawBody).digest('hex')
}
`

const ENV_JS = String.raw`import { readFileSync } from 'node:fs'

/** process.env over the NAME=value lines of a .env file (when there is one); process.env wins. */
export function loadEnv(file) {
  const out = {}
  let text = ''
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    text = ''
  }
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(raw)
    if (!m || raw.trim().startsWith('#')) continue
    out[m[1]] = m[2].replace(/^(['"])(.*)\1$/, '$2')
  }
  return { ...out, ...process.env }
}
`

/** The example project's source files (path -> text), besides package.json, README and .env. */
export const SOURCE_FILES: Record<string, string> = {
  'server.js': SERVER_JS,
  'signature.js': SIGNATURE_JS,
  'env.js': ENV_JS,
  ...AGENT_SOURCE_FILES,
  ...TEST_SOURCE_FILES,
}
