import t from 'tap'
import { randomBytes } from 'node:crypto'
import { openSecret, parseSecretKey, sealSecret } from '../../core/secret-box.js'

// Sealed secrets (SIP trunk passwords): AES-256-GCM, a fresh IV each time, and nothing opens that was altered.
const key = randomBytes(32)

t.test('a sealed secret opens under its key, unicode included, and differs each time', async (t) => {
  for (const plain of ['s3cret-password', 'pässwörd ✓', '']) {
    const sealed = sealSecret(key, plain)
    t.match(sealed, /^v1\.[\w-]+\.[\w-]+\.[\w-]*$/)
    t.equal(openSecret(key, sealed), plain)
  }
  t.not(sealSecret(key, 'same'), sealSecret(key, 'same'))
})

t.test('another key, an altered part or a foreign value does not open', async (t) => {
  const sealed = sealSecret(key, 'outbound-secret')
  t.throws(() => openSecret(randomBytes(32), sealed))
  const [v, iv, tag, body] = sealed.split('.') as [string, string, string, string]
  const flip = (s: string) => (s[0] === 'A' ? `B${s.slice(1)}` : `A${s.slice(1)}`)
  t.throws(() => openSecret(key, [v, iv, tag, flip(body)].join('.')), 'ciphertext')
  t.throws(() => openSecret(key, [v, iv, flip(tag), body].join('.')), 'tag')
  t.throws(() => openSecret(key, [v, flip(iv), tag, body].join('.')), 'iv')
  t.throws(() => openSecret(key, ['v2', iv, tag, body].join('.')), /not a sealed secret/)
  t.throws(() => openSecret(key, 'outbound-secret'), /not a sealed secret/)
})

t.test('a key is 32 bytes, in hex or base64', async (t) => {
  t.same(parseSecretKey('0f'.repeat(32)), Buffer.alloc(32, 15))
  t.same(parseSecretKey(` ${Buffer.alloc(32, 9).toString('base64')}\n`), Buffer.alloc(32, 9))
  t.same(parseSecretKey(Buffer.alloc(32, 250).toString('base64url')), Buffer.alloc(32, 250))
  t.throws(() => parseSecretKey('0f'.repeat(31)), /must be 32 bytes/)
  t.throws(() => parseSecretKey(Buffer.alloc(16).toString('base64')), /must be 32 bytes/)
})
