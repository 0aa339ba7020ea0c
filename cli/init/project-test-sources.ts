// The example project's own tests (node:test, standard library only): `npm test` in the generated folder.
// String.raw literals: no backticks or ${ inside them.

const SERVER_TEST_JS = String.raw`import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createAgentServer } from '../server.js'
import { sign, verifySignature } from '../signature.js'

const secret = 'whsec_test_secret'

async function withServer(fn, reply) {
  const server = createAgentServer({ secret, log: () => undefined, ...(reply && { reply }) })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = 'http://127.0.0.1:' + server.address().port + '/api/agent'
  try {
    await fn(url)
  } finally {
    server.close()
  }
}

function post(url, event, signature) {
  const body = JSON.stringify(event)
  return fetch(url, { method: 'POST', headers: { 'service-signature': signature ?? sign(body, secret) }, body })
}

function events(text) {
  return text
    .split('\n\n')
    .filter((block) => block.startsWith('data: '))
    .map((block) => JSON.parse(block.slice('data: '.length)))
}

const message = (text, turn_id = 't1') => ({ type: 'message', text, turn_id, session_id: 's', conversation_id: 'c' })

test('a signed message gets an SSE echo for its turn', async () => {
  await withServer(async (url) => {
    const res = await post(url, message('hello there'))
    assert.equal(res.status, 200)
    assert.match(res.headers.get('content-type'), /text\/event-stream/)
    assert.deepEqual(events(await res.text()), [
      { type: 'response.tts', content: 'You said: hello there.', turn_id: 't1' },
      { type: 'response.end', turn_id: 't1' },
    ])
  })
})

test('session.start is answered with a welcome; goodbye ends the call', async () => {
  await withServer(async (url) => {
    const welcome = events(await (await post(url, { type: 'session.start', turn_id: 'w1', session_id: 's', conversation_id: 'c' })).text())
    assert.equal(welcome[0].type, 'response.tts')
    assert.equal(welcome[0].turn_id, 'w1')
    assert.equal(welcome.at(-1).type, 'response.end')
    const bye = events(await (await post(url, message('ok, bye now', 't2'))).text())
    assert.deepEqual(bye, [{ type: 'response.hangup', content: 'Goodbye!', turn_id: 't2' }])
  })
})

test('a data event gets a plain JSON reply', async () => {
  await withServer(async (url) => {
    const res = await post(url, { type: 'data', data: { cart: 2 }, turn_id: 'd1', session_id: 's', conversation_id: 'c' })
    assert.match(res.headers.get('content-type'), /application\/json/)
    assert.deepEqual(await res.json(), { type: 'response.data', content: { received: { cart: 2 } }, turn_id: 'd1' })
  })
})

test('an async reply and a streamed one (an LLM) are spoken; the stream in whole words', async () => {
  const slow = async (event) => {
    await new Promise((resolve) => setTimeout(resolve, 20))
    return 'Thought about ' + event.text
  }
  await withServer(async (url) => {
    assert.deepEqual(events(await (await post(url, message('it'))).text()), [
      { type: 'response.tts', content: 'Thought about it', turn_id: 't1' },
      { type: 'response.end', turn_id: 't1' },
    ])
  }, slow)
  async function* tokens() {
    for (const t of ['Hel', 'lo th', 'ere, fr', 'iend']) {
      await new Promise((resolve) => setTimeout(resolve, 5))
      yield t
    }
  }
  await withServer(async (url) => {
    const got = events(await (await post(url, message('hi'))).text())
    assert.deepEqual(got, [
      { type: 'response.tts', content: 'Hello ', turn_id: 't1' },
      { type: 'response.tts', content: 'there, ', turn_id: 't1' },
      { type: 'response.tts', content: 'friend', turn_id: 't1' },
      { type: 'response.end', turn_id: 't1' },
    ])
  }, () => tokens())
})

test('a failing reply is a 500 before any event, response.error after', async () => {
  await withServer(async (url) => {
    assert.equal((await post(url, message('x'))).status, 500)
  }, async () => {
    throw new Error('no')
  })
  async function* breaks() {
    yield 'Half a '
    throw new Error('the LLM went away')
  }
  await withServer(async (url) => {
    const got = events(await (await post(url, message('x'))).text())
    assert.deepEqual(got.map((e) => e.type), ['response.tts', 'response.error'])
  }, () => breaks())
})

test('unsigned, wrongly signed, tampered and stale requests are refused with 401', async () => {
  await withServer(async (url) => {
    const event = message('x')
    const body = JSON.stringify(event)
    assert.equal((await fetch(url, { method: 'POST', body })).status, 401)
    assert.equal((await post(url, event, sign(body, 'another-secret'))).status, 401)
    assert.equal((await post(url, event, sign(body + ' ', secret))).status, 401)
    assert.equal((await post(url, event, sign(body, secret, Math.floor(Date.now() / 1000) - 3600))).status, 401)
    assert.equal((await post(url, event, 't=1,v1=zz')).status, 401)
  })
})

test('the signature is the HMAC of the exact bytes, with any of several v1 values', () => {
  const raw = Buffer.from('{"text":"caf\u00e9"}', 'utf8')
  const now = 1_700_000_000
  const good = sign(raw, secret, now)
  assert.deepEqual(verifySignature(raw, good, secret, now), { ok: true })
  assert.deepEqual(verifySignature(raw, 't=' + now + ',v1=' + '0'.repeat(64) + ',' + good.split(',')[1], secret, now), { ok: true })
  assert.equal(verifySignature(raw, good, secret, now + 301).ok, false)
  assert.equal(verifySignature(Buffer.concat([raw, Buffer.from(' ')]), good, secret, now).ok, false)
})
`

const LLM_TEST_JS = String.raw`import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { streamChat } from '../llm.js'

test('streamChat streams the deltas of an OpenAI-compatible chat completion', async () => {
  let request
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      request = { url: req.url, auth: req.headers.authorization, body: JSON.parse(body) }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      for (const content of ['Hi', ' there', '!']) {
        res.write('data: ' + JSON.stringify({ choices: [{ delta: { content } }] }) + '\n\n')
      }
      res.end('data: [DONE]\n\n')
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
  try {
    const env = { LLM_BASE_URL: 'http://127.0.0.1:' + server.address().port + '/v1', LLM_API_KEY: 'sk-test', LLM_MODEL: 'm' }
    const pieces = []
    for await (const piece of streamChat([{ role: 'user', content: 'hello' }], { env })) pieces.push(piece)
    assert.deepEqual(pieces, ['Hi', ' there', '!'])
    assert.equal(request.url, '/v1/chat/completions')
    assert.equal(request.auth, 'Bearer sk-test')
    assert.deepEqual(request.body, { model: 'm', messages: [{ role: 'user', content: 'hello' }], stream: true })
  } finally {
    server.close()
  }
})
`

/** test/server.test.js and test/llm.test.js. */
export const TEST_SOURCE_FILES: Record<string, string> = {
  'test/server.test.js': SERVER_TEST_JS,
  'test/llm.test.js': LLM_TEST_JS,
}
