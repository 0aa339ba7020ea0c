/**
 * HttpExchange against a real local server: closing an exchange whose reply was read to its end aborts nothing
 * (an abort there cost every turn an error with its stack); closing one mid-reply ends the request.
 */
import t from 'tap'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { type FetchLike, globalFetch, HttpExchange } from '../../pipeline/agent/http-exchange.js'

const LIMITS = { firstByteMs: 5_000, totalMs: 10_000, maxBytes: 64 * 1024 }

t.test('close() aborts the request only while the reply is still open', async (t) => {
  const open: ServerResponse[] = []
  const closedEarly: string[] = []
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' })
    if (req.url === '/whole') {
      res.end('data: done\n\n')
      return
    }
    res.write('data: first\n\n')
    open.push(res)
    res.on('close', () => {
      if (!res.writableFinished) closedEarly.push(req.url ?? '')
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  t.teardown(() => {
    for (const res of open) res.destroy()
    return new Promise<void>((r) => server.close(() => r()))
  })
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const signals: AbortSignal[] = []
  const seeing: FetchLike = (input, init) => {
    if (init.signal) signals.push(init.signal)
    return globalFetch(input, init)
  }

  const whole = new HttpExchange(seeing, LIMITS, { signal: new AbortController().signal })
  t.equal(await whole.readAll(await whole.send(`${base}/whole`, { method: 'POST', body: '{}' })), 'data: done\n\n')
  whole.close()
  t.equal(signals[0]?.aborted, false, 'a reply read to its end: nothing aborted')

  const partial = new HttpExchange(seeing, LIMITS, { signal: new AbortController().signal })
  const response = await partial.send(`${base}/open`, { method: 'POST', body: '{}' })
  for await (const chunk of partial.text(response)) {
    t.equal(chunk, 'data: first\n\n')
    break
  }
  partial.close()
  t.equal(signals[1]?.aborted, true, 'a reply still open: the request is aborted')
  await t.resolveMatch(
    new Promise((resolve) => {
      const poll = (): void => (closedEarly.length > 0 ? resolve(closedEarly) : void setTimeout(poll, 5))
      poll()
    }),
    ['/open'],
    'and the server sees the connection end mid-reply',
  )
})
