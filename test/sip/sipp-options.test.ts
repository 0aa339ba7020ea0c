import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { silentLogger } from '../../core/log.js'
import { SipEndpoint } from '../../transports/sip/endpoint/sip-endpoint.js'
import { runSipp, sippMissing, sippScenario, type SippRun } from '../helpers/sipp.js'

/** Runs sipp's scenario once against `port` over `transport` (u1: UDP, t1: TCP); resolves with its exit code. */
function sipp(port: number, transport: 'u1' | 't1'): Promise<SippRun> {
  const args = ['-sf', sippScenario('options'), '-t', transport, '-m', '1', '-i', '127.0.0.1', '-p', '0', '-timeout', '10']
  return runSipp([...args, '-timeout_error', '-nostdin', `127.0.0.1:${port}`], { timeoutMs: 15_000 })
}

t.test('sipp sends OPTIONS over UDP and TCP and gets 200', { skip: toolSkip(sippMissing) }, async (t) => {
  const sip = await SipEndpoint.start({ host: '127.0.0.1', port: 0, publicHost: '127.0.0.1', log: silentLogger() })
  t.teardown(() => sip.close())
  for (const transport of ['u1', 't1'] as const) {
    const run = await sipp(sip.port, transport)
    // sipp exits 0 only when every call passed: here the one OPTIONS got its 200.
    t.equal(run.code, 0, `${transport}: ${run.code === 0 ? 'passed' : run.output}`)
    t.match(run.output, /Successful call\s*\|\s*0\s*\|\s*1/)
  }
})
