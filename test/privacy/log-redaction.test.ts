import t from 'tap'
import { Writable } from 'node:stream'
import { createLogger } from '../../core/log.js'
import { privacyLogOptions, redactLogValue } from '../../server/log-redaction.js'

/** A process logger as `voxgate serve` builds it, writing to memory at debug level. */
function capture() {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean))
      done()
    },
  })
  return { log: createLogger('debug', privacyLogOptions(), sink), lines }
}

t.test('card numbers and SSNs are redacted from messages, fields, nested fields and errors at every level', async (t) => {
  const { log, lines } = capture()
  const child = log.child({ session_id: 'sess_1' })
  child.debug({ text: 'my card is 4111 1111 1111 1111' }, 'heard')
  child.info({ nested: { deeper: ['ssn 123-45-6789'] } }, 'card 5555 5555 5555 4444 in the message')
  child.warn({ err: new Error('backend said: card four one one one one one one one one one one one one one one one') }, 'failed')
  child.error('plain 4111-1111-1111-1111')
  t.equal(lines.length, 4)
  const all = lines.join('\n')
  t.notMatch(all, /4111|5555|6789|one one one one/, 'no digit of either')
  t.match(all, /\[card\]/)
  t.match(all, /\[ssn\]/)
  const first = JSON.parse(lines[0] as string)
  t.equal(first.session_id, 'sess_1', 'fields of the child stay')
  t.equal(first.text, 'my card is [card]')
  const third = JSON.parse(lines[2] as string)
  t.match(third.err.message, /backend said: card \[card\]/, 'an error keeps its shape, redacted')
})

t.test('what is not sensitive is left alone', async (t) => {
  t.strictSame(
    redactLogValue({ n: 4111111111111111, phone: '+14155550100', id: 'CA0123456789abcdef', at: 'order 123456789' }),
    { n: 4111111111111111, phone: '+14155550100', id: 'CA0123456789abcdef', at: 'order 123456789' },
    'numbers, phone numbers, ids and order numbers',
  )
})

t.test('SRTP keys: an SDP with a=crypto lines and negotiated key fields are logged without the keys', async (t) => {
  const { log, lines } = capture()
  const key = 'WVNfX19zZW1jdGwgKCkgewkyMjA7fQp9CnVubGVz'
  log.debug({ sdp: `m=audio 4000 RTP/SAVP 0\r\na=crypto:1 AES_CM_128_HMAC_SHA1_80 inline:${key}|2^20\r\n` }, 'offer')
  log.info({ audio: { codec: 'PCMU', srtp: { suite: 'AES_CM_128_HMAC_SHA1_80', local: Buffer.from(key, 'base64') } } }, 'negotiated')
  log.warn({ keySalt: Buffer.from(key, 'base64') }, `quoted a=crypto:2 AES_CM_128_HMAC_SHA1_32 inline:${key}`)
  const all = lines.join('\n')
  t.notMatch(all, key)
  t.notMatch(all, Buffer.from(key, 'base64').toString('hex'))
  t.match(all, /inline:\[redacted\]\|2\^20/)
  t.equal(JSON.parse(lines[1]!).audio.codec, 'PCMU', 'the rest of the line stays')
})
