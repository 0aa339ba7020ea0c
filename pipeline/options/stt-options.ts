import { z } from 'zod'
import { integerBetween, isPlainObject, nonNegativeInteger, numberBetween, termList } from './rules.js'

/** Languages `stt.vendor_a` accepts with model_id `nova-3`, exactly as listed in the SPEC. */
export const NOVA3_LANGUAGES = [
  'multi',
  'bg',
  'ca',
  'cs',
  'da',
  'da-DK',
  'nl',
  'en',
  'en-US',
  'en-AU',
  'en-GB',
  'en-IN',
  'en-NZ',
  'et',
  'fi',
  'nl-BE',
  'fr',
  'fr-CA',
  'de',
  'de-CH',
  'el',
  'hi',
  'hu',
  'id',
  'it',
  'ja',
  'ko',
  'ko-KR',
  'lv',
  'lt',
  'ms',
  'no',
  'pl',
  'pt',
  'pt-BR',
  'pt-PT',
  'ro',
  'ru',
  'sk',
  'es',
  'es-419',
  'sv',
  'sv-SE',
  'tr',
  'uk',
  'vi',
] as const

/** One of {@link NOVA3_LANGUAGES}. */
export type Nova3Language = (typeof NOVA3_LANGUAGES)[number]

const nova3Options = z.strictObject({
  model_id: z.literal('nova-3'),
  language: z.enum(NOVA3_LANGUAGES).default('multi'),
  keyterms: termList().optional(),
  // Beyond the SPEC: the vendor's `endpointing` and `utterance_end_ms` query parameters.
  endpointing_ms: integerBetween(10, 5000).default(300),
  utterance_end_ms: integerBetween(1000, 5000).default(1000),
})

const fluxOptions = z.strictObject({
  model_id: z.literal('flux'),
  language: z.literal('en').default('en'),
  keyterms: termList().optional(),
})

/** Options of `stt.vendor_a`; `model_id` defaults to `nova-3` and selects the option set. */
export const sttVendorAOptionsSchema = z
  .preprocess(
    (value) => (isPlainObject(value) && value.model_id === undefined ? { ...value, model_id: 'nova-3' } : value),
    z.discriminatedUnion('model_id', [nova3Options, fluxOptions]),
  )
  .prefault({})

/** Options of `stt.vendor_a` after defaults are filled. */
export type SttVendorAOptions = z.output<typeof sttVendorAOptionsSchema>

/** Options of `stt.vendor_b` (Universal-Streaming). */
export const sttVendorBOptionsSchema = z
  .strictObject({
    speech_model: z.enum(['universal-streaming-english', 'universal-streaming-multilingual']).default('universal-streaming-english'),
    word_boost: termList().optional(),
    end_of_turn_confidence_threshold: numberBetween(0, 1).default(0.4),
    min_end_of_turn_silence_when_confident: nonNegativeInteger().default(400),
    max_turn_silence: nonNegativeInteger().default(1280),
  })
  .prefault({})

/** Options of `stt.vendor_b` after defaults are filled. */
export type SttVendorBOptions = z.output<typeof sttVendorBOptionsSchema>
