import type { z } from 'zod'
import type { AgentStep } from '../../agent/agent-step.js'
import type { AgentStepDeps } from '../../agent/create-agent-step.js'
import type { SttStream, SttStreamOptions } from '../stt/stt-stream.js'
import type { TtsStream, TtsStreamOptions } from '../tts/tts-stream.js'

/** What a vendor serves: speech to text, text to speech, or the language model behind `agent.llm`. */
export type VendorKind = 'stt' | 'tts' | 'llm'

/** Where the gateway reads a vendor's endpoint from: two environment variables, a default URL and its schemes. */
export interface VendorEnv {
  /** The variable holding the base URL (`STT_VENDOR_A_URL`). */
  url: string
  /** The variable holding the API key (`STT_VENDOR_A_API_KEY`); unset means the vendor is not configured. */
  key: string
  /** The URL when the variable is unset (ignored for a keyless vendor, which is configured by its URL alone). */
  defaultUrl: string
  /**
   * The vendor runs on the operator's own servers and needs no key: setting the URL variable configures it, the
   * key variable is optional (sent when set).
   */
  keyless?: true
  /** The URL schemes the variable may use. */
  schemes: readonly string[]
}

interface RowBase<Id extends string, Schema extends z.ZodType> {
  /** The plugin id an agent configuration selects the vendor with: `stt.`, `tts.` or `agent.` and a name (`stt.vendor_a`). */
  id: Id
  env: VendorEnv
  /** The plugin's options schema: the one the agent configuration validates `options` with. */
  options: Schema
}

/** A speech-to-text vendor: its factory opens one call's stream. */
export interface SttVendorRow<Id extends `stt.${string}` = `stt.${string}`, Schema extends z.ZodType = z.ZodType>
  extends RowBase<Id, Schema> {
  kind: 'stt'
  create(options: z.output<Schema>, stream: SttStreamOptions): SttStream
}

/** A text-to-speech vendor: its factory opens one call's stream. */
export interface TtsVendorRow<Id extends `tts.${string}` = `tts.${string}`, Schema extends z.ZodType = z.ZodType>
  extends RowBase<Id, Schema> {
  kind: 'tts'
  create(options: z.output<Schema>, stream: TtsStreamOptions): TtsStream
}

/** A language model vendor behind an agent step: its factory builds the step (which may stand in offline). */
export interface LlmVendorRow<Id extends `agent.${string}` = `agent.${string}`, Schema extends z.ZodType = z.ZodType>
  extends RowBase<Id, Schema> {
  kind: 'llm'
  create(options: z.output<Schema>, deps: AgentStepDeps): AgentStep
}

/** One row of the vendor table. */
export type VendorRow = SttVendorRow | TtsVendorRow | LlmVendorRow
