/**
 * The lifecycle of a phone call in voxgate's words, stored as `call_status` and shown by the API:
 * queued -> initiated -> ringing -> in-progress -> completed | busy | no-answer | canceled | failed.
 * Each carrier maps its own wire values to these; sessions and the store share them through the core.
 */

/** The states after which nothing else happens to a call. */
export type FinalCallStatus = 'completed' | 'busy' | 'no-answer' | 'canceled' | 'failed'

/** A call's lifecycle state. */
export type CallStatus = 'queued' | 'initiated' | 'ringing' | 'in-progress' | FinalCallStatus
