import t from 'tap'
import { SpeechCache } from '../../pipeline/vendors/tts/speech-cache.js'

const voice = { voice: 'en-us', rate: 175 }

function samples(n: number, fill = 1): Int16Array {
  return new Int16Array(n).fill(fill)
}

t.test('a kept sentence comes back; format, voice, rate and text each make their own entry', async (t) => {
  const cache = new SpeechCache()
  const audio = samples(800, 7)
  cache.set('pcm_16000', voice, 'Hello.', audio)
  t.equal(cache.get('pcm_16000', voice, 'Hello.'), audio, 'the same sentence in the same format and voice')
  t.equal(cache.get('ulaw_8000', voice, 'Hello.'), undefined, 'another format')
  t.equal(cache.get('pcm_16000', { ...voice, voice: 'de' }, 'Hello.'), undefined, 'another voice')
  t.equal(cache.get('pcm_16000', { ...voice, rate: 200 }, 'Hello.'), undefined, 'another rate')
  t.equal(cache.get('pcm_16000', voice, 'Hello!'), undefined, 'another text')
  t.equal(cache.bytes, 1600)
})

t.test('bounded by bytes: the least recently used goes first', async (t) => {
  const cache = new SpeechCache(4000, 4000)
  cache.set('pcm_16000', voice, 'a', samples(1000))
  cache.set('pcm_16000', voice, 'b', samples(500))
  t.ok(cache.get('pcm_16000', voice, 'a'), 'a used again: b is now the oldest')
  cache.set('pcm_16000', voice, 'c', samples(600))
  t.equal(cache.bytes, 2000 + 1000 + 1200 - 1000, 'b dropped to make room')
  t.equal(cache.get('pcm_16000', voice, 'b'), undefined)
  t.ok(cache.get('pcm_16000', voice, 'a'))
  t.ok(cache.get('pcm_16000', voice, 'c'))
  t.ok(cache.bytes <= 4000)
  t.equal(cache.size, 2)
})

t.test('a sentence too long to keep is not kept and drops nothing', async (t) => {
  const cache = new SpeechCache(10_000, 2000)
  cache.set('pcm_16000', voice, 'short', samples(100))
  cache.set('pcm_16000', voice, 'long', samples(1001))
  t.equal(cache.get('pcm_16000', voice, 'long'), undefined)
  t.ok(cache.get('pcm_16000', voice, 'short'))
  t.equal(cache.bytes, 200)
})

t.test('setting a sentence again replaces it without counting it twice', async (t) => {
  const cache = new SpeechCache()
  cache.set('pcm_16000', voice, 'a', samples(100))
  const newer = samples(300)
  cache.set('pcm_16000', voice, 'a', newer)
  t.equal(cache.get('pcm_16000', voice, 'a'), newer)
  t.equal(cache.bytes, 600)
  t.equal(cache.size, 1)
})
