import { execFile, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { silentLogger } from '../../core/log.js'
import { SipEndpoint } from '../../transports/sip/sip-endpoint.js'

const SCENARIO = fileURLToPath(new URL('./fixtures/sipp/options.xml', import.meta.url))
const sippMissing = spawnSync('sipp', ['-v']).error !== undefined

/** Runs sipp's scenario once against `port` over `transport` (u1: UDP, t1: TCP); resolves with its exit code. */
function sipp(port: number, transport: 'u1' | 't1'): Promise<{ code: number; output: string }> {
  const args = ['-sf', SCENARIO, '-t', transport, '-m', '1', '-i', '127.0.0.1', '-p', '0', '-timeout', '10', '-timeout_error', '-nostdin']
  return new Promise((resolve) => {
    execFile('sipp', [...args, `127.0.0.1:${port}`], { timeout: 15_000 }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1
      resolve({ code, output: `${stdout}\n${stderr}`.slice(-2000) })
    })
  })
}

t.test(
  'sipp sends OPTIONS over UDP and TCP and gets 200',
  { skip: sippMissing ? 'sipp is not installed (apt-get install sip-tester; .ci/run installs it)' : false },
  async (t) => {
    const sip = await SipEndpoint.start({ host: '127.0.0.1', port: 0, publicHost: '127.0.0.1', log: silentLogger() })
    t.teardown(() => sip.close())
    for (const transport of ['u1', 't1'] as const) {
      const run = await sipp(sip.port, transport)
      // sipp exits 0 only when every call passed: here the one OPTIONS got its 200.
      t.equal(run.code, 0, `${transport}: ${run.code === 0 ? 'passed' : run.output}`)
      t.match(run.output, /Successful call\s*\|\s*0\s*\|\s*1/)
    }
  },
)
