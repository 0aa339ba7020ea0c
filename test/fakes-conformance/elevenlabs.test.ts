// ElevenLabs multi-context text-to-speech: the documented response messages, replayed to our tts.vendor_a adapter.
import t from 'tap'
import { ttsVendorAOptionsSchema } from '../../pipeline/options/tts-options.js'
import type { TtsEvent } from '../../pipeline/vendors/tts/tts-stream.js'
import { createTtsStream } from '../../pipeline/vendors/open-vendor.js'
import { EventReader, FAST_TRANSPORT } from '../stt/stream-helpers.js'
import { readFixture, startReplaySocket } from './replay-socket.js'

interface Fixture {
  multiAudio: { audio: string; contextId: string }
  multiFinal: object
}

t.test('AudioOutputMulti becomes the audio bytes of its context, FinalOutputMulti its done', async (t) => {
  const fixture = readFixture<Fixture>('elevenlabs/websocket-responses.json')
  const socket = await startReplaySocket()
  t.teardown(() => socket.close())
  const stream = createTtsStream(
    { use: 'tts.vendor_a', options: ttsVendorAOptionsSchema.parse({ voice_id: 'voice123', model_id: 'eleven_flash_v2_5' }) },
    { outputFormat: 'ulaw_8000', endpoint: { url: socket.url, apiKey: 'k' }, transport: FAST_TRANSPORT },
  )
  t.teardown(() => stream.close())
  const reader = new EventReader<TtsEvent>(stream)
  const conn = await socket.connection(0)
  const contextId = fixture.multiAudio.contextId
  stream.pushText(contextId, 'Hello world')
  stream.flush(contextId)
  await conn.waitForMessage((m) => m.close_context === true)

  conn.send(JSON.stringify(fixture.multiAudio))
  conn.send(JSON.stringify(fixture.multiFinal))
  await reader.waitForType('done')
  t.same(reader.events, [
    // The example's base64 decodes to these bytes; the alignment beside it is not audio and changes nothing.
    { type: 'audio', contextId, audio: Buffer.from('curious minds think alike :)') },
    { type: 'done', contextId },
  ])
})
