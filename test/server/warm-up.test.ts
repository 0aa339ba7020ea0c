import { Writable } from 'node:stream'
import t from 'tap'
import { createLogger } from '../../core/log.js'
import { warmUpSpeech } from '../../server/warm-up.js'

t.test('the warm-up loads the VAD with its convolutions folded and says so in the start-up log', async (t) => {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>)
      done()
    },
  })
  const result = await warmUpSpeech(createLogger('info', {}, sink))
  t.type(result.vadMs, 'number', 'the VAD model loaded')
  const loaded = lines.find((l) => l.msg === 'speech models loaded')
  t.ok(loaded, 'one line when the models are loaded')
  t.equal(loaded?.vad_folded_convs, 12, "all of the shipped model's convolutions run as matrix products")
  t.equal(loaded?.vad_ms, Math.round(result.vadMs ?? Number.NaN))
})
