/**
 * Carrier-neutral contracts for telephony. The gateway depends only on these; each carrier
 * (`carrier/twilio/`, ...) supplies one folder implementing them.
 */
import type { CallStatus, FinalCallStatus } from '../core/call-status.js'
import type { CarrierCredentials } from '../core/carrier-credentials.js'
import type { TransferTarget } from '../core/transfer-target.js'
import type { MachineVerdict } from '../core/machine-verdict.js'
import type { CarrierInbound, CarrierStartEvent } from './carrier-stream-events.js'

// This file is the one door into carrier/: what a part outside needs of the others is re-exported here.
export type { CarrierCredentials, CarrierStartEvent, TransferTarget }

/** Options every async carrier operation accepts. */
export interface CarrierCallOptions {
  readonly signal?: AbortSignal
}

// ---------------------------------------------------------------------------------------------
// Media stream: where it opens, and its codec (pure: wire text <-> the typed events of carrier-stream-events.ts, no I/O)
// ---------------------------------------------------------------------------------------------

/** Where and how a carrier opens media streams to the gateway. */
export interface CarrierMediaStream {
  /** Path (under PUBLIC_URL) of the media-stream WebSocket; the one-time session key follows it. */
  readonly pathPrefix: string
  /** Largest text frame the carrier sends; the WebSocket refuses bigger ones. */
  readonly maxFrameBytes: number
  /** Public stream URL for a one-time key (ws follows http, wss follows https). */
  streamUrl(publicUrl: string, key: string): string
}

/** Pure codec for one carrier's media-stream wire format. */
export interface CarrierMediaCodec {
  /**
   * Decode one text frame, given as a string or as its UTF-8 bytes (the bytes let a codec skip building a string
   * for the frequent audio frames). `null` means a valid frame voxgate deliberately ignores.
   */
  decode(raw: string | Uint8Array): CarrierInbound | null
  /** Frame carrying assistant audio (raw mu-law 8 kHz). */
  encodeMedia(streamSid: string, muLaw: Buffer): string
  /** Frame asking the carrier to echo `name` once everything queued before it has played. */
  encodeMark(streamSid: string, name: string): string
  /** Frame dropping all unplayed audio (pending marks are echoed at once). */
  encodeClear(streamSid: string): string
}

// ---------------------------------------------------------------------------------------------
// Webhook signatures
// ---------------------------------------------------------------------------------------------

/** Form fields as parsed from `application/x-www-form-urlencoded`; repeated names keep every value. */
export type CarrierFormParams = Readonly<Record<string, string | readonly string[]>>

/** What the verifier needs from one incoming carrier request. */
export interface CarrierSignedRequest {
  /** The public URL the carrier requested (`requestUrl`: built from PUBLIC_URL, never from the Host header). */
  readonly url: string
  /** Value of the signature header; undefined when absent. */
  readonly signature: string | undefined
  /** Parsed form body (ignored for JSON bodies signed with a body hash). */
  readonly params: CarrierFormParams
  /** Raw body; required when the URL carries a body hash (JSON bodies). */
  readonly rawBody?: string | Buffer
  /** How the body was encoded; a carrier may refuse a JSON body its signature does not cover. */
  readonly bodyKind?: 'form' | 'json' | 'empty'
}

/** Stable reasons a request signature was refused. */
export type CarrierSignatureFailure = 'missing_signature' | 'bad_signature' | 'bad_body_hash' | 'bad_url' | 'unsigned_body'

/** Outcome of a signature check; `detail` is a human-readable explanation for logs and the error message. */
export type CarrierSignatureResult =
  | { readonly ok: true }
  | { readonly ok: false; readonly reason: CarrierSignatureFailure; readonly detail?: string }

/** Checks carrier webhook signatures. */
export interface CarrierSignatureVerifier {
  /**
   * Lower-case names of the headers that may carry the signature, the first present one read: a carrier may sign
   * under its own name (Twilio's `X-Twilio-Signature`) or the SPEC's (`X-Carrier-Signature`).
   */
  readonly headerNames: readonly string[]
  /** The URL the carrier signed for a request received at `pathAndQuery`: PUBLIC_URL joined with it. */
  requestUrl(publicUrl: string, pathAndQuery: string): string
  /** Verify a request against the account auth token. */
  verify(request: CarrierSignedRequest, authToken: string): CarrierSignatureResult
}

// ---------------------------------------------------------------------------------------------
// Calls REST API and call status
// ---------------------------------------------------------------------------------------------

/** Call lifecycle states: voxgate's own (core), which every carrier maps its wire values to. */
export type CarrierCallStatus = CallStatus

/** Status callback events a call can subscribe to. */
export type CarrierStatusCallbackEvent = 'initiated' | 'ringing' | 'answered' | 'completed'

/** A parsed status callback. */
export interface CarrierStatusUpdate {
  readonly callSid: string
  readonly accountSid: string | undefined
  readonly status: CarrierCallStatus
  /** e.g. `inbound`, `outbound-api`, `outbound-dial`. */
  readonly direction: string | undefined
  readonly from: string | undefined
  readonly to: string | undefined
  /** Seconds the call was connected; present on the final callback. */
  readonly callDurationSec: number | undefined
  /** The carrier's per-call callback counter, useful for ordering. */
  readonly sequenceNumber: number | undefined
  /** When the carrier produced the event, if it said. */
  readonly timestamp: Date | undefined
  readonly sipResponseCode: number | undefined
  readonly answeredBy: string | undefined
  /** Which subscribed event this is (`in-progress` is reported as `answered`). */
  readonly event: CarrierStatusCallbackEvent | 'queued'
}

/** Result of parsing a status callback: a value or a stable reason, never a throw. */
export type CarrierStatusParseResult =
  | { readonly ok: true; readonly update: CarrierStatusUpdate }
  | { readonly ok: false; readonly reason: 'missing_call_sid' | 'missing_status' | 'unknown_status' }

/** Parameters of an outbound call. */
export interface CarrierCreateCallRequest extends CarrierCallOptions {
  readonly to: string
  readonly from: string
  /** Voice hook URL the carrier requests when the callee answers (`Url`); exactly one of `url` and `twiml`. */
  readonly url?: string | undefined
  /** Markup the call follows when answered (`Twiml`), instead of asking a voice hook: a warm transfer's leg. */
  readonly twiml?: string | undefined
  readonly statusCallback?: string
  readonly statusCallbackEvents?: readonly CarrierStatusCallbackEvent[]
  /** Seconds to let the phone ring before giving up. */
  readonly timeoutSec?: number
  /** Ask for asynchronous answering machine detection, reported to `callbackUrl`. */
  readonly machineDetection?: { readonly callbackUrl: string } | undefined
}

/** An answering machine detection callback. */
export interface CarrierMachineDetection {
  readonly callSid: string
  /** The carrier's own value (`machine_end_beep`, ...), for the log. */
  readonly answeredBy: string
  readonly verdict: MachineVerdict
  /** How long the carrier took to decide, when it said. */
  readonly detectionMs: number | undefined
}

/** A call as the carrier reports it. */
export interface CarrierCall {
  readonly sid: string
  readonly status: CarrierCallStatus | string
}

/** Places and ends calls through the carrier's REST API. */
export interface CarrierCallsClient {
  /** Start an outbound call. Throws `CarrierApiError` (or the signal's reason when aborted). */
  createCall(request: CarrierCreateCallRequest): Promise<CarrierCall>
  /** Hang up a call. Throws `CarrierApiError` (or the signal's reason when aborted). */
  hangup(sid: string, options?: CarrierCallOptions): Promise<CarrierCall>
  /**
   * Replace what a live call does with new markup (a transfer: the call leaves its media stream and dials).
   * Throws `CarrierApiError` (or the signal's reason when aborted).
   */
  updateCall(sid: string, markup: string, options?: CarrierCallOptions): Promise<CarrierCall>
}

/** A phone number of the carrier account (`IncomingPhoneNumbers`). */
export interface CarrierIncomingNumber {
  /** The carrier's id of the number (`PN...`). */
  readonly sid: string
  /** E.164. */
  readonly phoneNumber: string
  readonly friendlyName: string | undefined
}

/** Reads which numbers the organization's carrier account owns (the proof a number is the organization's to claim). */
export interface CarrierNumbersClient {
  /** The account's number `e164`, undefined when the account has no such number. Throws `CarrierApiError`. */
  findIncomingNumber(e164: string, options?: CarrierCallOptions): Promise<CarrierIncomingNumber | undefined>
}

/** Stable codes of `CarrierApiError`. */
export type CarrierApiErrorCode =
  | 'carrier_rejected'
  | 'carrier_auth_failed'
  | 'carrier_rate_limited'
  | 'carrier_unavailable'
  | 'carrier_timeout'
  | 'carrier_bad_response'

/** Fields of a `CarrierApiError`. */
export interface CarrierApiErrorInit {
  readonly code: CarrierApiErrorCode
  /** HTTP status, 0 when no response arrived. */
  readonly status: number
  readonly message: string
  /** The carrier's own error number (e.g. 21211), when it sent one. */
  readonly carrierCode?: number | undefined
  readonly moreInfo?: string | undefined
  readonly attempts?: number | undefined
  readonly cause?: unknown
}

/** A failed carrier REST call. Messages never contain credentials. */
export class CarrierApiError extends Error {
  /** Stable voxgate code. */
  readonly code: CarrierApiErrorCode
  /** HTTP status, 0 when no response arrived. */
  readonly status: number
  /** The carrier's own error number, when it sent one. */
  readonly carrierCode: number | undefined
  /** Carrier documentation link, when it sent one. */
  readonly moreInfo: string | undefined
  /** How many HTTP attempts were made. */
  readonly attempts: number

  constructor(init: CarrierApiErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause })
    this.name = 'CarrierApiError'
    this.code = init.code
    this.status = init.status
    this.carrierCode = init.carrierCode
    this.moreInfo = init.moreInfo
    this.attempts = init.attempts ?? 1
  }
}

// ---------------------------------------------------------------------------------------------
// Voice hook and markup
// ---------------------------------------------------------------------------------------------

/** What a voice hook says about its call; fields the carrier left out or blank are undefined. */
export interface CarrierVoiceHook {
  readonly callSid: string | undefined
  /** As the carrier sent it (`inbound`, `outbound-api`, ...); stored on the session. */
  readonly direction: string | undefined
  /** The callee answered a call placed from the account (by initiate_outbound, when voxgate knows its sid). */
  readonly outbound: boolean
  /** Numbers as sent; a withheld caller id stays as the carrier wrote it (`anonymous`). */
  readonly from: string | undefined
  readonly to: string | undefined
  /** ISO 3166 alpha-2 codes, upper case, when the carrier sent valid ones. */
  readonly fromCountry: string | undefined
  readonly toCountry: string | undefined
  /** The call's status, when the hook carries one this carrier knows. */
  readonly status: CarrierCallStatus | undefined
}

/** A name/value pair passed to the media stream (arrives as `start.customParameters`). */
export interface CarrierStreamParameter {
  readonly name: string
  readonly value: string
}

/** Voice markup returned from the voice hook. */
export interface CarrierMarkup {
  /** Media type of the markup documents. */
  readonly contentType: string
  /** Document that connects the call to a bidirectional media stream. */
  connectStream(streamUrl: string, parameters?: readonly CarrierStreamParameter[] | Readonly<Record<string, string>>): string
  /** Document that speaks `text` and hangs up (refusals). */
  sayAndHangup(text: string): string
  /** Document that connects the call to `target` (a transfer); the call leaves voxgate with it. */
  dial(target: TransferTarget): string
}

/**
 * Everything one carrier provides, so a new carrier is a new folder: the process builds one (server/app.ts)
 * and passes it down; nothing else names a carrier.
 */
export interface Carrier {
  readonly name: string
  readonly mediaStream: CarrierMediaStream
  /**
   * A codec for one media stream. Each stream gets its own: a codec may remember what repeats from frame to frame
   * (the Twilio codec keeps the stream id's string), and calls interleaved on one codec would defeat that.
   */
  newCodec(): CarrierMediaCodec
  readonly verifier: CarrierSignatureVerifier
  readonly markup: CarrierMarkup
  /** Build a REST client for one organization's credentials. */
  callsClient(credentials: CarrierCredentials): CarrierCallsClient
  /** Build a client that reads one organization's carrier account's phone numbers. */
  numbersClient(credentials: CarrierCredentials): CarrierNumbersClient
  /** Read what a voice hook form says about its call. */
  parseVoiceHook(params: CarrierFormParams): CarrierVoiceHook
  /** Parse a status callback form. */
  parseStatusCallback(params: CarrierFormParams): CarrierStatusParseResult
  /** Parse an answering machine detection callback; undefined when it lacks the call or the verdict. */
  parseMachineDetection(params: CarrierFormParams): CarrierMachineDetection | undefined
  /** The status to store when `incoming` arrives while the call is `current` (never backwards). */
  nextStatus(current: CarrierCallStatus | undefined, incoming: CarrierCallStatus): CarrierCallStatus
  /** True for statuses after which nothing else happens to the call. */
  isFinalStatus(status: CarrierCallStatus): status is FinalCallStatus
}

/** The signature a request carries under the first of the verifier's header names it has (`get` reads a header). */
export function carrierSignatureOf(
  verifier: Pick<CarrierSignatureVerifier, 'headerNames'>,
  get: (name: string) => string | undefined,
): string | undefined {
  for (const name of verifier.headerNames) {
    const value = get(name)
    if (value !== undefined && value !== '') return value
  }
  return undefined
}
