/**
 * The fake Calls API in a process of its own (run with tsx as a child), for tests that time the carrier's side:
 * arrival times measured here are not delayed by the gateway under test sharing an event loop with them.
 * Prints `LISTENING <baseUrl> <accountSid>`; `GET /__arrivals` answers the create requests' arrival times
 * (performance.now() ms of this process, in arrival order). Env: FAKE_AUTH_TOKEN, FAKE_OUTCOME (busy, no-answer,
 * failed, manual).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { FakeCallsApi } from './fake-calls-api.js'

const outcome = (process.env.FAKE_OUTCOME ?? 'busy') as 'busy' | 'no-answer' | 'failed' | 'manual'
const api = await FakeCallsApi.start({ authToken: process.env.FAKE_AUTH_TOKEN, stepMs: 5, outcome: { kind: outcome } })
const control = createServer((req, res) => {
  if (req.url !== '/__arrivals') {
    res.writeHead(404).end()
    return
  }
  const arrivals = api.requests.filter((r) => r.path.endsWith('/Calls.json')).map((r) => r.at)
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(arrivals))
})
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve))
const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}`
process.stdout.write(`LISTENING ${api.baseUrl} ${api.accountSid} ${controlUrl}\n`)
process.on('SIGTERM', () => {
  control.close()
  void api.close().then(() => process.exit(0))
})
