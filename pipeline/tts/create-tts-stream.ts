import type { PluginOf } from '../config/plugins-schema.js'
import type { TtsStream, TtsStreamOptions } from './tts-stream.js'
import { createVendorATtsStream } from './vendor-a-tts.js'

/** A validated `tts.vendor_a` plugin entry (`tts.local` has its own factory). */
export type VendorTtsPluginConfig = PluginOf<'tts.vendor_a'>

/**
 * Open a text-to-speech stream for the configured vendor. It connects in the background; text pushed meanwhile is
 * held; connection problems arrive as `error` events, never as exceptions.
 */
export function createTtsStream(config: VendorTtsPluginConfig, options: TtsStreamOptions): TtsStream {
  return createVendorATtsStream(config.options, options)
}
