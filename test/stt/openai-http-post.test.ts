import { createServer, type Socket } from 'node:net'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { postToSpeechServer } from '../../pipeline/vendors/stt/openai-http-post.js'

/**
 * A raw HTTP/1.1 server: each connection answers its first request `{"n": <connection>}` with keep-alive; on the
 * first connection a second request is met by a reset, as when a server closes an idle connection as a request
 * goes out on it. Bodies are checked whole.
 */
async function server(t: Test) {
  const bodies: string[] = []
  const sockets: Socket[] = []
  const srv = createServer((socket: Socket) => {
    sockets.push(socket)
    const n = sockets.length
    let answered = 0
    let data = ''
    socket.on('data', (chunk) => {
      data += chunk.toString('latin1')
      const end = data.indexOf('\r\n\r\n')
      if (end < 0) return
      const length = Number(/content-length: (\d+)/i.exec(data.slice(0, end))?.[1] ?? 0)
      if (data.length < end + 4 + length) return
      bodies.push(data.slice(end + 4, end + 4 + length))
      data = data.slice(end + 4 + length)
      if (n === 1 && answered === 1) return void socket.resetAndDestroy()
      answered++
      const body = JSON.stringify({ n })
      socket.write(`HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`)
    })
  })
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  t.teardown(() => {
    for (const socket of sockets) socket.destroy()
    return new Promise<void>((r) => srv.close(() => r()))
  })
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1/audio/transcriptions`, bodies }
}

async function text(body: AsyncIterable<Buffer>): Promise<string> {
  let out = ''
  for await (const chunk of body) out += chunk.toString()
  return out
}

t.test('pieces are sent as one body; a kept-alive connection reset by the server is retried once on a new one', async (t) => {
  const { url, bodies } = await server(t)
  const signal = new AbortController().signal
  const first = await postToSpeechServer(url, { 'content-type': 'text/plain' }, [Buffer.from('RIFF'), Buffer.from('-data')], signal)
  t.strictSame([first.status, first.contentType, await text(first.body)], [200, 'application/json', '{"n":1}'])
  const second = await postToSpeechServer(url, { 'content-type': 'text/plain' }, Buffer.from('again'), signal)
  t.equal(await text(second.body), '{"n":2}', 'answered on a second connection')
  t.strictSame(bodies, ['RIFF-data', 'again', 'again'], 'the reset request was sent again, whole')
})

t.test('a refused connection and an aborted request reject with their cause', async (t) => {
  await t.rejects(postToSpeechServer('http://127.0.0.1:1/v1', {}, Buffer.alloc(0), new AbortController().signal), { code: 'ECONNREFUSED' })
  await t.rejects(postToSpeechServer('ftp://127.0.0.1/v1', {}, Buffer.alloc(0), new AbortController().signal), /unsupported protocol/)
  await t.rejects(postToSpeechServer('http://127.0.0.1:1/v1', {}, Buffer.alloc(0), AbortSignal.abort()), { name: 'AbortError' })
})
