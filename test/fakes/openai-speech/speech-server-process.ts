/**
 * The speech fake (fake-openai-speech.ts) in a process of its own (run with tsx as a child), for the latency bench:
 * its parsing, its timers and its answers do not share an event loop with the gateway code being timed. Prints
 * `LISTENING <baseUrl> <controlUrl>`. Env: FAKE_MS_PER_CHAR, FAKE_CHUNK_MS, FAKE_CHUNK_INTERVAL_MS (speech audio, as
 * the fake's options). Control: `POST /__script` {text, delayMs, firstByteMs} sets how transcriptions are answered
 * and how long speech waits before its first byte; `GET /__timings` answers the server's own time of each request
 * since the last call (ms, in arrival order) and forgets them: for a transcription, whole body in to last answer
 * byte written; for speech, whole body in to first audio byte written.
 */
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { startFakeOpenAiSpeech } from './fake-openai-speech.js'

const env = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]))
const fake = await startFakeOpenAiSpeech({
  ...(env('FAKE_MS_PER_CHAR') !== undefined && { msPerChar: env('FAKE_MS_PER_CHAR') }),
  ...(env('FAKE_CHUNK_MS') !== undefined && { chunkMs: env('FAKE_CHUNK_MS') }),
  ...(env('FAKE_CHUNK_INTERVAL_MS') !== undefined && { chunkIntervalMs: env('FAKE_CHUNK_INTERVAL_MS') }),
})

async function json(req: IncomingMessage): Promise<{ text?: string; delayMs?: number; firstByteMs?: number }> {
  const chunks: Buffer[] = []
  for await (const c of req) chunks.push(c as Buffer)
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { text?: string; delayMs?: number; firstByteMs?: number }
}

const control = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/__script') {
    void json(req).then(
      (script) => {
        fake.transcribe = () => ({ text: script.text ?? 'hello', delayMs: script.delayMs ?? 0 })
        fake.options.firstByteMs = script.firstByteMs ?? 0
        res.writeHead(204).end()
      },
      (error: unknown) => res.writeHead(400).end(String(error)),
    )
    return
  }
  if (req.method === 'GET' && req.url === '/__timings') {
    const transcriptions = fake.transcriptions.map((r) => (r.writtenAt ?? Number.NaN) - r.receivedAt)
    const speech = fake.speech.map((r) => (r.firstByteAt ?? Number.NaN) - r.receivedAt)
    fake.transcriptions.length = 0
    fake.speech.length = 0
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ transcriptions, speech }))
    return
  }
  res.writeHead(404).end()
})
await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve))
process.stdout.write(`LISTENING ${fake.baseUrl} http://127.0.0.1:${(control.address() as AddressInfo).port}\n`)
process.on('SIGTERM', () => {
  control.close()
  void fake.close().then(() => process.exit(0))
})
