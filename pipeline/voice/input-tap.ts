/**
 * Taps on a pipeline's input: a concern of the session that listens to (or holds back) what the transport feeds the voice
 * pipeline implements only the `PipelineInput` methods it changes, and every other passes through by name (the
 * input may be a class instance, whose methods a spread would not copy). This is the one place that spells out the
 * whole input.
 */
import type { PipelineInput } from './pipeline-io.js'

/** The methods a tap changes; each one calls `below` itself when the input under it should still hear it. */
export type InputTap = Partial<PipelineInput>

/** `below` with `tap`'s methods in front of it. */
export function tapInput(below: PipelineInput, tap: InputTap): PipelineInput {
  return {
    pushAudio: tap.pushAudio ?? ((chunk, mediaTimestampMs) => below.pushAudio(chunk, mediaTimestampMs)),
    clientVad: tap.clientVad ?? ((event) => below.clientVad(event)),
    pushToTalk: tap.pushToTalk ?? ((pressed) => below.pushToTalk(pressed)),
    userText: tap.userText ?? ((text) => below.userText(text)),
    userData: tap.userData ?? ((data, options) => below.userData(data, options)),
    dtmf: tap.dtmf ?? ((digit) => below.dtmf(digit)),
    markPlayed: tap.markPlayed ?? ((chunkId) => below.markPlayed(chunkId)),
    audioWritten: tap.audioWritten ?? ((chunkId) => below.audioWritten(chunkId)),
    replayFinished: tap.replayFinished ?? ((turnId) => below.replayFinished(turnId)),
    machineVerdict: tap.machineVerdict ?? ((verdict) => below.machineVerdict?.(verdict)),
    callControlFailed: tap.callControlFailed ?? ((failure) => below.callControlFailed?.(failure)),
    transferFailed: tap.transferFailed ?? ((failure) => below.transferFailed?.(failure)),
  }
}

/** An input that drops everything, with `tap`'s methods in front (a leg that only listens to a few things). */
export function onlyInput(tap: InputTap): PipelineInput {
  return tapInput(DROP_ALL, tap)
}

const DROP_ALL: PipelineInput = {
  pushAudio: () => undefined,
  clientVad: () => undefined,
  pushToTalk: () => undefined,
  userText: () => undefined,
  userData: () => undefined,
  dtmf: () => undefined,
  markPlayed: () => undefined,
  audioWritten: () => undefined,
  replayFinished: () => undefined,
}
