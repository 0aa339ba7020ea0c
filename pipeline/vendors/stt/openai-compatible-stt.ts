import type { SttOpenAiCompatibleOptions } from '../../options/openai-compatible-options.js'
import { OpenAiRealtimeSttStream } from './openai-realtime-stt.js'
import { OpenAiSegmentsSttStream } from './openai-segments-stt.js'
import type { SttStream, SttStreamOptions } from './stt-stream.js'

/** Create (and start) a `stt.openai_compatible` stream in the configured mode. */
export function createOpenAiCompatibleSttStream(options: SttOpenAiCompatibleOptions, stream: SttStreamOptions): SttStream {
  if (options.mode === 'realtime') return new OpenAiRealtimeSttStream(options, stream).start()
  return new OpenAiSegmentsSttStream(options, stream)
}
