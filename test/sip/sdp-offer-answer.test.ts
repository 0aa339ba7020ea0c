import { parse } from 'sdp-transform'
import t from 'tap'
import { answerOffer, createOffer, type LocalMedia, readAnswer } from '../../transports/sip/media/sdp-offer-answer.js'

const LOCAL: LocalMedia = { address: '203.0.113.5', port: 40000, sessionId: '4242', sessionVersion: 1 }

/** An offer shaped like a desk phone's: several codecs, telephone-event at 101, session-level c=. */
function offer(lines: { media?: string; extra?: string[]; connection?: string; session?: string[] } = {}): string {
  return [
    'v=0',
    'o=phone 8000 8000 IN IP4 198.51.100.7',
    's=call',
    `c=IN IP4 ${lines.connection ?? '198.51.100.7'}`,
    't=0 0',
    ...(lines.session ?? []),
    lines.media ?? 'm=audio 5004 RTP/AVP 9 0 8 101',
    'a=rtpmap:9 G722/8000',
    'a=rtpmap:0 PCMU/8000',
    'a=rtpmap:8 PCMA/8000',
    'a=rtpmap:101 telephone-event/8000',
    'a=fmtp:101 0-16',
    ...(lines.extra ?? []),
    '',
  ].join('\r\n')
}

t.test('answers an offer: first G.711 in the offerer order, telephone-event kept, ptime 20, our address', async (t) => {
  const result = answerOffer(offer(), LOCAL)
  if (!result.ok) throw new Error(result.reason)
  t.same(result.audio, {
    codec: 'PCMU',
    payloadType: 0,
    telephoneEventPayloadType: 101,
    remoteAddress: '198.51.100.7',
    remotePort: 5004,
    remotePtime: undefined,
    remoteDirection: 'sendrecv',
    held: false,
  })
  t.match(result.answer, /^v=0\r\n/)
  const answer = parse(result.answer)
  t.same(answer.origin, { username: 'voxgate', sessionId: 4242, sessionVersion: 1, netType: 'IN', ipVer: 4, address: '203.0.113.5' })
  t.equal(answer.connection?.ip, '203.0.113.5')
  const m = answer.media[0]!
  t.same([m.port, m.payloads, m.ptime, m.direction], [40000, '0 101', 20, 'sendrecv'])
  t.same(
    m.rtp.map((r) => `${r.payload} ${r.codec}/${r.rate}`),
    ['0 PCMU/8000', '101 telephone-event/8000'],
  )
  t.same(m.fmtp, [{ payload: 101, config: '0-16' }])
})

t.test('PCMA when the offer prefers it, static payloads without rtpmap, a dynamic PCMU payload type', async (t) => {
  const pcma = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 8 0 101' }), LOCAL)
  t.equal(pcma.ok && pcma.audio.codec, 'PCMA')
  const bare = answerOffer('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 7000 RTP/AVP 8\r\n', LOCAL)
  t.same(
    bare.ok && [bare.audio.codec, bare.audio.payloadType, bare.audio.telephoneEventPayloadType],
    ['PCMA', 8, undefined],
    'no DTMF payload offered',
  )
  t.notMatch(bare.ok && bare.answer, /telephone-event/)
  const dynamic = answerOffer(
    'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=audio 7000 RTP/AVP 112 96\r\na=rtpmap:112 pcmu/8000\r\na=rtpmap:96 telephone-event/8000\r\n',
    LOCAL,
  )
  t.same(dynamic.ok && [dynamic.audio.codec, dynamic.audio.payloadType, dynamic.audio.telephoneEventPayloadType], ['PCMU', 112, 96])
  t.match(dynamic.ok && dynamic.answer, /m=audio 40000 RTP\/AVP 112 96\r\n/, 'the offerer payload numbers are kept')
})

t.test('no common codec, no audio, SRTP only, garbage: 488 with a reason and a Warning', async (t) => {
  const g729 = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 18 9' }), LOCAL)
  t.same(g729.ok ? null : [g729.status, g729.warning], [488, '305 voxgate "Incompatible media format"'])
  t.match(g729.ok ? '' : g729.reason, /no common codec/)
  const video = answerOffer('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=video 7000 RTP/AVP 31\r\n', LOCAL)
  t.same(video.ok ? null : [video.status, video.warning], [488, '304 voxgate "Media type not available"'])
  const srtp = answerOffer(offer({ media: 'm=audio 5004 RTP/SAVP 0 8' }), LOCAL)
  t.notOk(srtp.ok, 'SRTP is not offered back')
  t.notOk(answerOffer('this is not sdp', LOCAL).ok)
  t.notOk(answerOffer('', LOCAL).ok)
  t.notOk(answerOffer(offer({ media: 'm=audio 0 RTP/AVP 0' }), LOCAL).ok, 'a disabled stream')
})

t.test('other m= lines are refused with port 0, in order, the audio one answered', async (t) => {
  const sdp =
    'v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\ns=-\r\nc=IN IP4 192.0.2.1\r\nt=0 0\r\nm=video 7002 RTP/AVP 31\r\nm=audio 7000 RTP/AVP 0\r\n'
  const result = answerOffer(sdp, LOCAL)
  if (!result.ok) throw new Error(result.reason)
  const media = parse(result.answer).media
  t.same(
    media.map((m) => [m.type, m.port]),
    [
      ['video', 0],
      ['audio', 40000],
    ],
  )
})

t.test('hold and unhold from a re-INVITE offer (RFC 3264 section 8.4)', async (t) => {
  const cases: [string, Parameters<typeof offer>[0], boolean, string][] = [
    ['sendonly', { extra: ['a=sendonly'] }, true, 'recvonly'],
    ['inactive', { extra: ['a=inactive'] }, true, 'inactive'],
    ['c=0.0.0.0 (RFC 2543 style)', { connection: '0.0.0.0' }, true, 'sendrecv'],
    ['session-level sendonly', { session: ['a=sendonly'] }, true, 'recvonly'],
    ['recvonly: the peer only listens, not a hold of the caller', { extra: ['a=recvonly'] }, false, 'sendonly'],
    ['sendrecv again: unhold', { extra: ['a=sendrecv'] }, false, 'sendrecv'],
    ['no attribute: sendrecv', {}, false, 'sendrecv'],
  ]
  for (const [title, lines, held, answered] of cases) {
    const result = answerOffer(offer(lines), { ...LOCAL, sessionVersion: 2 })
    if (!result.ok) throw new Error(result.reason)
    t.equal(result.audio.held, held, `${title}: held=${held}`)
    t.equal(parse(result.answer).media[0]!.direction, answered, `${title}: answered ${answered}`)
    t.equal(parse(result.answer).origin.sessionVersion, 2, 'the caller-supplied version')
  }
})

t.test('outbound: our offer, then the answer is read', async (t) => {
  const ours = parse(createOffer(LOCAL))
  const m = ours.media[0]!
  t.same([m.type, m.port, m.protocol, m.payloads, m.ptime, m.direction], ['audio', 40000, 'RTP/AVP', '0 8 101', 20, 'sendrecv'])
  t.same(m.fmtp, [{ payload: 101, config: '0-16' }])
  t.equal(parse(createOffer(LOCAL, 'sendonly')).media[0]!.direction, 'sendonly', 'we can hold too')

  const answer = readAnswer(
    'v=0\r\no=- 2 2 IN IP4 192.0.2.9\r\ns=-\r\nt=0 0\r\nm=audio 9000 RTP/AVP 8 101\r\nc=IN IP4 192.0.2.10\r\na=rtpmap:101 telephone-event/8000\r\na=ptime:20\r\n',
  )
  t.same(
    answer.ok && [
      answer.audio.codec,
      answer.audio.telephoneEventPayloadType,
      answer.audio.remoteAddress,
      answer.audio.remotePort,
      answer.audio.remotePtime,
    ],
    ['PCMA', 101, '192.0.2.10', 9000, 20],
  )
  const refused = readAnswer('v=0\r\no=- 2 2 IN IP4 192.0.2.9\r\ns=-\r\nc=IN IP4 192.0.2.9\r\nt=0 0\r\nm=audio 0 RTP/AVP 0\r\n')
  t.same(refused, { ok: false, reason: 'the answer has no RTP/AVP audio stream' })
  const wrong = readAnswer('v=0\r\no=- 2 2 IN IP4 192.0.2.9\r\ns=-\r\nc=IN IP4 192.0.2.9\r\nt=0 0\r\nm=audio 9000 RTP/AVP 18\r\n')
  t.same(wrong, { ok: false, reason: 'the answer accepts none of the offered codecs' })
})

t.test('comfort noise (RFC 3389): taken when offered and allowed, static 13 or a dynamic CN/8000', async (t) => {
  const withCn = { ...LOCAL, comfortNoise: true }
  const answered = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 0 101 13' }), withCn)
  t.ok(answered.ok)
  if (!answered.ok) return
  t.equal(answered.audio.comfortNoisePayloadType, 13)
  const m = parse(answered.answer).media[0]!
  t.equal(m.payloads, '0 101 13')
  t.ok(
    m.rtp.some((r) => r.payload === 13 && r.codec === 'CN' && r.rate === 8000),
    'a=rtpmap:13 CN/8000 in the answer',
  )

  const dynamic = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 0 101 118', extra: ['a=rtpmap:118 CN/8000'] }), withCn)
  t.equal(dynamic.ok && dynamic.audio.comfortNoisePayloadType, 118, 'a dynamic CN payload type')
  const wide = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 0 101 118', extra: ['a=rtpmap:118 CN/16000'] }), withCn)
  t.equal(wide.ok && wide.audio.comfortNoisePayloadType, undefined, 'CN at another rate is not ours')
  const off = answerOffer(offer({ media: 'm=audio 5004 RTP/AVP 0 101 13' }), LOCAL)
  t.ok(
    off.ok && off.audio.comfortNoisePayloadType === undefined && parse(off.answer).media[0]!.payloads === '0 101',
    'switched off: not answered',
  )
  const none = answerOffer(offer(), withCn)
  t.ok(none.ok && none.audio.comfortNoisePayloadType === undefined, 'not offered: steady silence')

  const ours = parse(createOffer(withCn)).media[0]!
  t.equal(ours.payloads, '0 8 101 13', 'our offer lists CN last')
  const answer = 'v=0\r\no=- 2 2 IN IP4 192.0.2.9\r\ns=-\r\nc=IN IP4 192.0.2.9\r\nt=0 0\r\nm=audio 9000 RTP/AVP 0 13\r\n'
  const read = readAnswer(answer, undefined, withCn)
  t.equal(read.ok && read.audio.comfortNoisePayloadType, 13, 'an answer that kept CN')
  const unasked = readAnswer(answer, undefined, LOCAL)
  t.equal(unasked.ok && unasked.audio.comfortNoisePayloadType, undefined, 'CN in an answer to an offer without it is ignored')
})
