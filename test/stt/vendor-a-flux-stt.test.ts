import t from 'tap'
import { sttVendorAOptionsSchema } from '../../pipeline/options/stt-options.js'
import { createSttStream } from '../../pipeline/vendor-streams/open-vendor.js'
import type { SttEvent } from '../../pipeline/stt/stt-stream.js'
import { startFakeDeepgram } from '../fakes/deepgram/fake-deepgram.js'
import { EventReader, FAST_TRANSPORT, audioBytes } from './stream-helpers.js'

const KEY = 'dg-flux-key'

t.test('flux: query, turn events, ForceEndTurn, Error, CloseStream', async (t) => {
  const fake = await startFakeDeepgram({ apiKey: KEY })
  t.teardown(() => fake.close())
  const options = sttVendorAOptionsSchema.parse({ model_id: 'flux', keyterms: ['voxgate'] })
  const stream = createSttStream(
    { use: 'stt.vendor_a', options },
    { format: 'pcm_16000', endpoint: { url: fake.url, apiKey: KEY }, transport: FAST_TRANSPORT },
  )
  t.teardown(() => stream.close())
  const reader = new EventReader<SttEvent>(stream)
  const conn = await fake.connection(0)
  t.equal(conn.request.url, '/v2/listen?model=flux-general-en&encoding=linear16&sample_rate=16000&keyterm=voxgate')
  t.equal(conn.request.headers.authorization, `Token ${KEY}`)

  stream.pushAudio(audioBytes(640, 3))
  await conn.waitForAudioBytes(640)
  t.same(conn.audio, audioBytes(640, 3))

  conn.sendTurnInfo('StartOfTurn', 'hi')
  conn.sendTurnInfo('Update', 'hi there')
  conn.sendTurnInfo('Update', 'hi there')
  conn.sendTurnInfo('EagerEndOfTurn', 'hi there')
  conn.sendTurnInfo('TurnResumed', 'hi there')
  conn.sendTurnInfo('EndOfTurn', 'hi there friend')
  await reader.waitForType('end_of_turn')
  t.same(reader.events, [
    { type: 'speech_started' },
    { type: 'interim', text: 'hi' },
    { type: 'interim', text: 'hi there' },
    { type: 'final', text: 'hi there friend' },
    { type: 'end_of_turn', text: 'hi there friend' },
  ])

  conn.pendingTranscript = 'forced end'
  stream.finalize()
  t.same(await reader.waitForType('end_of_turn', 2000, 5), { type: 'end_of_turn', text: 'forced end' })
  t.same(conn.controls, ['ForceEndTurn'])

  conn.sendFluxError('INTERNAL_SERVER_ERROR', 'something broke')
  t.match(await reader.waitForType('error'), { code: 'vendor_error', fatal: false, vendorCode: 'INTERNAL_SERVER_ERROR' })
  await reader.waitForType('reconnected')
  const second = await fake.connection(1)
  t.equal(second.request.url, conn.request.url)

  await stream.close()
  t.same(second.controls, ['CloseStream'])
  await reader.ended
})
