/**
 * The voice pipeline's public contract: what a transport and its session use to drive one call's pipeline. The
 * transport speaks `PipelineInput` and `PipelineEvent` in its audio formats; the session builds a `VoicePipeline`
 * from `VoicePipelineDeps`, starts it and hears back through `PipelineHooks`.
 *
 * Code outside pipeline/ imports these from here, never from the folders that define them, so the inside can be
 * rearranged freely. Vendor factories (`stt/`, `tts/`, `agent/`) and config schemas (`config/`) are imported
 * from their own folders. This file only re-exports: the definitions stay beside the code that uses them, and
 * no folder of pipeline/ imports this one (no folder cycle through the root).
 */

export type { CompletedTurn, PipelineEvent, PipelineHooks, PipelineInput, TurnLatency } from './voice/pipeline-io.js'
export {
  LATENCY_STAGES,
  type LatencyBreakdown,
  type LatencyStage,
  type LatencyStageName,
} from './latency/latency-breakdown.js'
export type { AudioFormat, InputAudioFormat, OutputAudioFormat } from './audio/audio-format.js'
export type { VadFactory } from './voice/caller-audio.js'
export { VoicePipeline, type VoicePipelineDeps } from './voice/voice-pipeline.js'
export { newTurnId } from './voice/turn-ids.js'
export { observeSharedVad, type VadObserver } from './vad/vad-batcher.js'
export type { HistoryItem } from './agent/agent-step.js'
