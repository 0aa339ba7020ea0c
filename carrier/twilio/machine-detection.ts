/**
 * Twilio-compatible asynchronous answering machine detection: the Calls API fields that ask for it, and the
 * callback (`AsyncAmdStatusCallback`, signed like the other callbacks) that reports `AnsweredBy`. Pure.
 */
import type { MachineVerdict } from '../../core/machine-verdict.js'
import type { CarrierFormParams, CarrierMachineDetection } from '../carrier.js'

/** `AnsweredBy` values and the verdict each means. A fax is a machine that will not take a message either. */
const VERDICTS: Readonly<Record<string, MachineVerdict>> = {
  human: 'human',
  machine_start: 'machine',
  machine_end_beep: 'machine_beep',
  machine_end_silence: 'machine',
  machine_end_other: 'machine',
  fax: 'machine',
  unknown: 'unknown',
}

/** Form fields of a create request with async detection that waits for the end of the greeting (and its beep). */
export function machineDetectionFields(callbackUrl: string): [string, string][] {
  return [
    ['MachineDetection', 'DetectMessageEnd'],
    ['AsyncAmd', 'true'],
    ['AsyncAmdStatusCallback', callbackUrl],
    ['AsyncAmdStatusCallbackMethod', 'POST'],
  ]
}

/** Reads an AMD callback; a value the carrier may add later reads as `unknown`. */
export function parseMachineDetection(params: CarrierFormParams): CarrierMachineDetection | undefined {
  const one = (v: string | readonly string[] | undefined) => (typeof v === 'string' ? v : v?.[0])
  const callSid = one(params.CallSid)
  const answeredBy = one(params.AnsweredBy)
  if (!callSid || !answeredBy) return undefined
  const ms = Number(one(params.MachineDetectionDuration))
  return {
    callSid,
    answeredBy,
    verdict: VERDICTS[answeredBy] ?? 'unknown',
    detectionMs: Number.isFinite(ms) ? ms : undefined,
  }
}
