/**
 * Starts the fake Calls API in a process of its own (calls-api-process.ts, whose env it is given: FAKE_AUTH_TOKEN,
 * FAKE_OUTCOME, FAKE_STEP_MS) and waits for its `LISTENING <baseUrl> <accountSid> <controlUrl>` line. Used where the
 * carrier's arrival times must not share an event loop with the gateway under test (pacing tests, the campaign bench).
 */
import { spawn } from 'node:child_process'
import { nodeScript } from '../../helpers/node-script.js'

/** The running fake: where its Calls API and its control endpoints are, and how to stop it. */
export interface CallsApiChild {
  readonly baseUrl: string
  readonly accountSid: string
  readonly controlUrl: string
  kill(): void
}

export async function startCallsApiProcess(env: Record<string, string>): Promise<CallsApiChild> {
  const proc = spawn(process.execPath, nodeScript(new URL('./calls-api-process.ts', import.meta.url)), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [baseUrl, accountSid, controlUrl] = await new Promise<string[]>((resolve, reject) => {
    let out = ''
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /LISTENING (\S+) (\S+) (\S+)/.exec(out)
      if (m) resolve([m[1]!, m[2]!, m[3]!])
    })
    proc.once('exit', (code) => reject(new Error(`fake carrier exited with ${code}`)))
  })
  return { baseUrl: baseUrl!, accountSid: accountSid!, controlUrl: controlUrl!, kill: () => proc.kill('SIGTERM') }
}
