/**
 * Answering machine detection verdicts (an addition to the SPEC): what answered an outbound call. Every carrier
 * maps its own values to these; the gateway's beep detector gives `machine_beep`.
 */
export const MACHINE_VERDICTS = ['human', 'machine', 'machine_beep', 'unknown'] as const

/** What answered: a person, a machine (greeting still playing or over without a beep), a machine after its beep. */
export type MachineVerdict = (typeof MACHINE_VERDICTS)[number]
