/** Silero v5 voice activity detection: shared batched model runner and per-call streams. */
export {
  SILERO_STATE_SIZE,
  SileroModel,
  VadModelError,
  defaultSileroModelPath,
  sharedSileroModel,
  sileroContextSamples,
  sileroFrameSamples,
  type SileroOutput,
  type SileroSampleRate,
} from './silero-model.js'
export { VadBatcher, sharedVadBatcher, type VadBatcherOptions, type VadBatcherStats, type VadJob } from './vad-batcher.js'
export { VadFrameProcessor, VadFrameResult, type VadSegmentFrames } from './vad-frame-processor.js'
export {
  DEFAULT_VAD_OPTIONS,
  VAD_FRAME_SAMPLES_ALLOWED,
  VAD_OPTION_BOUNDS,
  VadOptionsError,
  resolveVadOptions,
  type VadOptions,
} from './vad-options.js'
export type { VadEvent, VadSpan } from './vad-events.js'
export { VadStream, type VadStreamOptions } from './vad-stream.js'
