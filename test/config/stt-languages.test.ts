import t from 'tap'
import { NOVA3_LANGUAGES } from '../../pipeline/options/stt-options.js'
import { configWithPlugin, errorsOf, validOf } from './fixtures/config-fixtures.js'

const nova = (language: unknown) => configWithPlugin('stt.vendor_a', { model_id: 'nova-3', language })
const flux = (language: unknown) => configWithPlugin('stt.vendor_a', { model_id: 'flux', language })

t.test('nova-3 accepts exactly the SPEC list', async (t) => {
  t.equal(NOVA3_LANGUAGES.length, 46)
  for (const language of NOVA3_LANGUAGES) {
    t.match(validOf(nova(language)).plugins[0], { use: 'stt.vendor_a', options: { language } }, language)
  }
})

t.test('nova-3 rejects other languages', async (t) => {
  const message = `plugins[0].options.language must be one of ${NOVA3_LANGUAGES.join(', ')}`
  for (const language of ['zh', 'en-us', 'EN', 'es-ES', '', 'auto']) {
    t.strictSame(errorsOf(nova(language)), [message], JSON.stringify(language))
  }
  t.strictSame(errorsOf(nova(7)), [message])
})

t.test('nova-3 is the default model and multi the default language', async (t) => {
  t.match(validOf(configWithPlugin('stt.vendor_a', { language: 'pt-BR' })).plugins[0], {
    options: { model_id: 'nova-3', language: 'pt-BR' },
  })
  t.match(validOf(configWithPlugin('stt.vendor_a', { model_id: 'nova-3' })).plugins[0], { options: { language: 'multi' } })
})

t.test('flux is English only', async (t) => {
  t.match(validOf(flux('en')).plugins[0], { options: { model_id: 'flux', language: 'en' } })
  t.match(validOf(configWithPlugin('stt.vendor_a', { model_id: 'flux', keyterms: ['a'] })).plugins[0], {
    options: { language: 'en', keyterms: ['a'] },
  })
  for (const language of ['multi', 'en-US', 'de']) {
    t.strictSame(errorsOf(flux(language)), ['plugins[0].options.language must be en'], language)
  }
})

t.test('unknown model', async (t) => {
  t.strictSame(errorsOf(configWithPlugin('stt.vendor_a', { model_id: 'nova-2' })), [
    'plugins[0].options.model_id must be one of nova-3, flux',
  ])
})

t.test('stt.vendor_b speech models', async (t) => {
  t.match(validOf(configWithPlugin('stt.vendor_b', { speech_model: 'universal-streaming-multilingual', word_boost: ['x'] })).plugins[0], {
    options: { speech_model: 'universal-streaming-multilingual', word_boost: ['x'] },
  })
  t.strictSame(errorsOf(configWithPlugin('stt.vendor_b', { speech_model: 'best' })), [
    'plugins[0].options.speech_model must be one of universal-streaming-english, universal-streaming-multilingual',
  ])
})
