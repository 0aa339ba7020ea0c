/**
 * The one chain what a transport feeds a session runs through on its way to the voice pipeline, each link a tap
 * that changes only the input methods it must (`tapInput`, pipeline/voice/input-tap.ts):
 *
 *   transport -> call control (the answering-machine beep detector hears caller audio)
 *             -> keeping (the recording hears caller audio, digits and marks)
 *             -> warm transfer gate (the caller is held from the agent while a transfer runs)
 *             -> the voice pipeline
 *
 * Before the pipeline runs only keeping listens: the recording hears the caller from the first frame.
 */
import type { PipelineInput } from '../../pipeline/index.js'
import { NO_INPUT } from './no-input.js'

/** A link of the chain. */
interface InputTapper {
  tap(input: PipelineInput): PipelineInput
}

/** The chain's links; `warm` only where the transport can play a transfer's hold line. */
export interface CallerInputLinks {
  readonly control: InputTapper
  readonly keeping: InputTapper
  readonly warm?: { gate(input: PipelineInput): PipelineInput } | undefined
}

/** What the transport feeds: into `pipeline` once it runs, else to the recording alone. */
export function callerInput(links: CallerInputLinks, pipeline?: PipelineInput): PipelineInput {
  if (pipeline === undefined) return links.keeping.tap(NO_INPUT)
  return links.control.tap(links.keeping.tap(links.warm?.gate(pipeline) ?? pipeline))
}
