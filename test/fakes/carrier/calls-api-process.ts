/**
 * The fake Calls API in a process of its own (run with tsx as a child), for tests that time the carrier's side:
 * arrival times measured here are not delayed by the gateway under test sharing an event loop with them.
 * Prints `LISTENING <baseUrl> <accountSid>`; `GET /__arrivals` answers the create requests' arrival times
 * (performance.now() ms of this process, in arrival order). Env: FAKE_AUTH_TOKEN, FAKE_OUTCOME (busy, no-answer,
 * failed, manual, or `mix`: by the callee's last digit, 0-2 busy, 3-7 no-answer, 8-9 failed), FAKE_STEP_MS (pause
 * between a call's progress steps, default 5). `GET /__calls` answers what a campaign bench checks: the arrivals,
 * the most calls live at once, and the numbers dialled while an earlier call to them was still live.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { isFinal } from './fake-call.js'
import { FakeCallsApi } from './fake-calls-api.js'

const outcome = (process.env.FAKE_OUTCOME ?? 'busy') as 'busy' | 'no-answer' | 'failed' | 'manual' | 'mix'
const api = await FakeCallsApi.start({
  authToken: process.env.FAKE_AUTH_TOKEN,
  stepMs: Number(process.env.FAKE_STEP_MS ?? 5),
  outcome: { kind: outcome === 'mix' ? 'busy' : outcome },
})
let mostLive = 0
const doubles: string[] = []
if (outcome === 'mix') {
  api.outcomeFor = (to) => {
    // The call being created is already listed: live counts it.
    const live = [...api.calls.values()].filter((c) => !isFinal(c.status))
    mostLive = Math.max(mostLive, live.length)
    if (live.filter((c) => c.params.to === to).length > 1) doubles.push(to)
    const digit = Number(to.at(-1))
    return { kind: digit <= 2 ? 'busy' : digit <= 7 ? 'no-answer' : 'failed' }
  }
}
const control = createServer((req, res) => {
  if (req.url === '/__calls') {
    const arrivals = api.requests.filter((r) => r.path.endsWith('/Calls.json')).map((r) => r.at)
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ arrivals, mostLive, doubles, calls: api.calls.size }))
    return
  }
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
