/**
 * Starts the speech fake in a process of its own (speech-server-process.ts, whose env it is given) and waits for its
 * `LISTENING <baseUrl> <controlUrl>` line. Used where the server's work must not be counted as the gateway's (the
 * self-hosted speech latency bench).
 */
import { spawn } from 'node:child_process'
import { nodeScript } from '../../helpers/node-script.js'

/** How the child answers: transcription text and delay, and the wait before speech's first byte. */
export interface SpeechScript {
  text?: string
  delayMs?: number
  firstByteMs?: number
}

/** The server's own time per request (ms), in arrival order, as the child measured it. */
export interface SpeechTimings {
  transcriptions: number[]
  speech: number[]
}

/** The running child: its base URL (ending in `/v1`), its control calls, and how to stop it. */
export interface SpeechServerChild {
  readonly baseUrl: string
  script(script: SpeechScript): Promise<void>
  /** The timings since the last call (the child forgets them). */
  timings(): Promise<SpeechTimings>
  kill(): void
}

export async function startSpeechServerProcess(env: Record<string, string> = {}): Promise<SpeechServerChild> {
  const proc = spawn(process.execPath, nodeScript(new URL('./speech-server-process.ts', import.meta.url)), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const [baseUrl, controlUrl] = await new Promise<string[]>((resolve, reject) => {
    let out = ''
    proc.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /LISTENING (\S+) (\S+)/.exec(out)
      if (m) resolve([m[1]!, m[2]!])
    })
    proc.once('exit', (code) => reject(new Error(`speech fake exited with ${code}`)))
  })
  return {
    baseUrl: baseUrl!,
    script: async (script) => {
      const response = await fetch(`${controlUrl}/__script`, { method: 'POST', body: JSON.stringify(script) })
      if (!response.ok) throw new Error(`speech fake refused the script: HTTP ${response.status}`)
    },
    timings: async () => (await (await fetch(`${controlUrl}/__timings`)).json()) as SpeechTimings,
    kill: () => proc.kill('SIGTERM'),
  }
}
