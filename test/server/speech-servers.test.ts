import { createServer } from 'node:net'
import { Writable } from 'node:stream'
import t from 'tap'
import { createLogger } from '../../core/log.js'
import { loadConfig } from '../../server/config.js'
import { checkSpeechServers } from '../../server/speech-servers.js'
import { startFakeOpenAiSpeech } from '../fakes/openai-speech/fake-openai-speech.js'

function memoryLog() {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  return { lines, log: createLogger('info', {}, sink) }
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const port = (server.address() as { port: number }).port
  await new Promise<void>((r) => server.close(() => r()))
  return port
}

t.test('a speech server of our own that does not answer at start-up is one warning naming it, not a failure', async (t) => {
  const fake = await startFakeOpenAiSpeech({ apiKey: 'sk-secret-key' })
  t.teardown(() => fake.close())
  const port = await closedPort()
  const config = loadConfig({
    STT_OPENAI_COMPATIBLE_URL: `http://127.0.0.1:${port}/v1`,
    TTS_OPENAI_COMPATIBLE_URL: fake.baseUrl,
    TTS_OPENAI_COMPATIBLE_API_KEY: 'sk-secret-key',
  })
  const { lines, log } = memoryLog()
  const problems = await checkSpeechServers(config.vendors, log)
  t.strictSame(problems, [{ id: 'stt.openai_compatible', url: `http://127.0.0.1:${port}/v1`, cause: 'ECONNREFUSED' }])
  const warnings = lines.filter((l) => l.level === 40)
  t.equal(warnings.length, 1, 'reported once')
  t.match(warnings[0], { plugin: 'stt.openai_compatible', msg: /does not answer \(ECONNREFUSED\); calls will try it again/ })
  t.notMatch(JSON.stringify(lines), /sk-secret-key/, 'no key in the log')
})

t.test('nothing configured, nothing checked', async (t) => {
  const { lines, log } = memoryLog()
  t.strictSame(await checkSpeechServers(loadConfig({}).vendors, log), [])
  t.strictSame(lines, [])
})
