import type { PluginOf } from '../config/plugins-schema.js'
import type { SttStream, SttStreamOptions } from './stt-stream.js'
import { createVendorASttStream } from './vendor-a-stt.js'
import { createVendorBSttStream } from './vendor-b-stt.js'

/** A validated `stt.*` plugin entry of the pipeline configuration. */
export type SttPluginConfig = PluginOf<'stt.vendor_a'> | PluginOf<'stt.vendor_b'>

/**
 * Open a speech-to-text stream for the configured vendor. It connects in the background (audio pushed meanwhile is
 * buffered); connection problems arrive as `error` events, never as exceptions.
 */
export function createSttStream(config: SttPluginConfig, options: SttStreamOptions): SttStream {
  switch (config.use) {
    case 'stt.vendor_a':
      return createVendorASttStream(config.options, options)
    case 'stt.vendor_b':
      return createVendorBSttStream(config.options, options)
  }
}
