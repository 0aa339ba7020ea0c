import type { PipelineInput } from '../../pipeline/index.js'
import type { VendorEndpoints } from './ports/pipeline-factory.js'

/** Input of a session whose pipeline is not running (ended, or failed to start): everything is dropped. */
export const NO_INPUT: PipelineInput = {
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

/** Vendor endpoints of a process configured with none: sessions run with what needs no key. */
export const NO_VENDORS: VendorEndpoints = {}
