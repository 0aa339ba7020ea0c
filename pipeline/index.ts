/**
 * The voice pipeline's one door: everything code outside pipeline/ uses, and nothing else. A transport speaks
 * `PipelineInput` and `PipelineEvent` in its audio formats; the session builds a `VoicePipeline` from
 * `VoicePipelineDeps`, starts it and hears back through `PipelineHooks`; the API and the store validate and
 * resolve agent configurations; recordings and transcripts use the audio and privacy helpers.
 *
 * Code outside pipeline/ imports from here only, so the inside can be rearranged freely (tests and benchmarks
 * may reach inside). This file only re-exports: the definitions stay beside the code that uses them, and no
 * folder of pipeline/ imports this one (no folder cycle through the root).
 */

// ---- driving one call: what a transport and its session use ------------------------------------------------
export type { CompletedTurn, PipelineEvent, PipelineHooks, PipelineInput, TurnLatency } from './voice/pipeline-io.js'
export { type InputTap, onlyInput, tapInput } from './voice/input-tap.js'
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
export { BeepDetector } from './tones/beep-detector.js'
export { TRANSFER_FAILED_DEFAULT_LINES } from './agent/transfer-failed-body.js'

// ---- vendors: one table keyed by plugin id; the session opens a call's steps through it ----------------------
export type { VendorSetting } from './vendors/socket/vendor-transport.js'
export { VENDOR_TABLE, type VendorId } from './vendors/table/vendor-table.js'
export type { VendorRow } from './vendors/table/vendor-row.js'
export {
  availableVendors,
  openAgentStep,
  openSessionStt,
  openSessionTts,
  type VendorSettings,
} from './vendors/open-vendor.js'
export { globalFetch, type FetchLike } from './agent/http-exchange.js'
export { connectionFailureWords, type ConnectionFailureWords } from './agent/connection-failure.js'

// ---- warming up what the first call needs ------------------------------------------------------------------
export { sharedSileroModel } from './vad/silero-model.js'
export { sharedEspeakEngine } from './vendors/tts/espeak-engine.js'
export { ttsLocalOptionsSchema } from './options/tts-options.js'

// ---- agent configuration: validation, resolution, templates ------------------------------------------------
export { configOverrideSchema, pipelineConfigSchema, type PipelineConfig } from './config/schema.js'
export { validateConfigOverride, validatePipelineConfig } from './config/validate.js'
export { formatIssues, ruleMessage } from './config/issue-messages.js'
export { resolveSessionConfig } from './config/resolve-session-config.js'
export { frontendConfig, type FrontendConfig } from './config/frontend-config.js'
export { webhookUrlProblem, type UrlPolicy } from './options/webhook-url.js'
export { pluginStage, type PluginConfig } from './config/plugins-schema.js'
export { AGENT_WEBHOOK_DEFAULTS } from './options/agent-options.js'
export type { SessionWebhookEvent } from './config/session-webhook-schema.js'
export {
  DEFAULT_TEMPLATE_ID,
  TEMPLATES,
  findTemplate,
  withAvailableVendors,
  withWebhookUrl,
  type VendorAvailability,
} from './config/templates.js'
export { resolvePrivacy, type PrivacyConfig } from './config/privacy-schema.js'

// ---- JSON from outside: the nesting bound every input checks before recursive work -------------------------
export { MAX_JSON_DEPTH, jsonNestsDeeperThan } from './runtime/json-depth.js'

// ---- privacy: redaction of text, transcripts and recordings ------------------------------------------------
export { redact } from './privacy/redact.js'
export type { RedactionSpan } from './privacy/redaction-span.js'
export { createRedactor, type RedactedPiece, type StreamingRedactor } from './privacy/streaming-redactor.js'
export type { RedactedWord, TimedWord } from './privacy/timed-words.js'
export type { RedactionSwitches } from './privacy/redaction-options.js'

// ---- audio for recordings, the warm transfer's bridge and SIP's G.711 ------------------------------------
export { AUDIO_FORMATS } from './audio/audio-format.js'
export type { SttStream } from './vendors/stt/stt-stream.js'
export { decodeMulaw, encodeMulaw } from './audio/g711-mulaw.js'
export { decodeAlaw, encodeAlaw } from './audio/g711-alaw.js'
export { DTMF_PAUSE_MS } from './tones/dtmf-tones.js'
export { bufferToInt16, int16ToBuffer } from './audio/pcm16.js'
export { Resampler } from './audio/resampler.js'
export { wavHeader } from './audio/wav.js'
export { OffsetMap } from './vendors/stt/offset-map.js'

// ---- webhooks: request signing -----------------------------------------------------------------------------
export { signedHeaders } from './agent/signed-request.js'
