/**
 * What a warm transfer needs of a SIP call's transport: raw audio played outside the pipeline's turns, cut into
 * 20 ms frames for the pacer (A-law on a PCMA call), `onPlayed` when the last frame left, a full pacer refused
 * without leaving anyone waiting; and the peer's `Allow`, which decides REFER or a bridge for a cold transfer.
 */
import t from 'tap'
import { decodeAlaw } from '../../pipeline/audio/g711-alaw.js'
import { decodeMulaw, encodeMulaw } from '../../pipeline/audio/g711-mulaw.js'
import type { RtpMedia } from '../../transports/sip/media/rtp-media.js'
import { SipCallTransport } from '../../transports/sip/calls/sip-call-transport.js'
import { allowedMethods } from '../../transports/sip/message/sip-message.js'

/** A pacer that holds `room` frames and sends when told. */
function fakeMedia(room: number) {
  const queued: { frame: Buffer; sent?: (() => void) | undefined }[] = []
  const media = {
    enqueue(frame: Buffer, sent?: () => void): boolean {
      if (queued.length >= room) return false
      queued.push({ frame, sent })
      return true
    },
    clear: () => queued.splice(0).length,
    held: [] as string[],
    pause() {
      this.held.push('pause')
    },
    resume() {
      this.held.push('resume')
    },
  }
  const sendAll = () => {
    for (const q of queued.splice(0)) q.sent?.()
  }
  return { media: media as unknown as RtpMedia, queued, sendAll, held: media.held }
}

const noEvents = { onSessionEnded: () => undefined }
const ramp = Buffer.from(encodeMulaw(Int16Array.from({ length: 400 }, (_, i) => (i - 200) * 40)))

t.test('play cuts mu-law into 20 ms frames, pads the last with silence, and reports once the last one left', async (t) => {
  const { media, queued, sendAll } = fakeMedia(100)
  const transport = new SipCallTransport(media, 'PCMU', noEvents)
  let played = 0
  t.equal(
    transport.play(ramp, () => played++),
    true,
  )
  t.same(
    queued.map((q) => q.frame.length),
    [160, 160, 160],
  )
  t.same(queued[0]?.frame, ramp.subarray(0, 160), 'PCMU passes through untouched')
  t.ok(
    queued[2]?.frame.subarray(80).every((b) => b === 0xff),
    'the last frame is padded with mu-law silence',
  )
  t.equal(played, 0, 'not before it left')
  sendAll()
  t.equal(played, 1)
})

t.test('on a PCMA call the frames are A-law of the same audio', async (t) => {
  const { media, queued } = fakeMedia(100)
  new SipCallTransport(media, 'PCMA', noEvents).play(ramp.subarray(0, 160))
  const back = decodeAlaw(queued[0]!.frame)
  const want = decodeMulaw(ramp.subarray(0, 160))
  t.ok(
    back.every((s, i) => Math.abs(s - want[i]!) <= Math.max(64, Math.abs(want[i]!) / 16)),
    'within G.711 quantisation',
  )
})

t.test('a full pacer: false, the drop counted, and onPlayed still called', async (t) => {
  const { media, queued } = fakeMedia(2)
  const transport = new SipCallTransport(media, 'PCMU', noEvents)
  let played = 0
  t.equal(
    transport.play(ramp, () => played++),
    false,
  )
  t.equal(queued.length, 2)
  t.equal(played, 1, 'nobody waits for frames that were never queued')
  t.equal(transport.droppedFrames, 1)
})

t.test("pause_playback and resume_playback hold the pacer's queue; clear_playback drops it", async (t) => {
  const { media, queued, held } = fakeMedia(100)
  const transport = new SipCallTransport(media, 'PCMU', noEvents)
  transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 1, audio: ramp, durationMs: 50 })
  transport.deliver({ type: 'pause_playback', turnId: 'a1' })
  transport.deliver({ type: 'audio', turnId: 'a1', chunkId: 2, audio: ramp, durationMs: 50 })
  t.same(held, ['pause'], 'the pacer is paused')
  t.equal(queued.length, 6, 'nothing dropped, and audio that comes meanwhile queues behind')
  transport.deliver({ type: 'resume_playback', turnId: 'a1' })
  t.same(held, ['pause', 'resume'])
  transport.deliver({ type: 'clear_playback', turnId: 'a1' })
  t.equal(queued.length, 0, 'a barge-in drops the queue')
})

t.test('the peer Allow: listed methods upper-cased, none without the header', async (t) => {
  const transport = new SipCallTransport(fakeMedia(1).media, 'PCMU', noEvents, ['INVITE', 'REFER'])
  t.same(transport.peerAllows, ['INVITE', 'REFER'])
  const headers = (value?: string) => ({ headers: value === undefined ? [] : [{ name: 'Allow', value }] })
  t.same(allowedMethods(headers('INVITE, ACK,bye , refer')), ['INVITE', 'ACK', 'BYE', 'REFER'])
  t.equal(allowedMethods(headers()), undefined, 'no Allow: nothing is known')
  t.same(allowedMethods(headers('')), [], 'an empty Allow: nothing allowed')
  t.same(allowedMethods(headers('INVITE, X-1, <bad>')), ['INVITE'], 'only plain method names are kept')
})
