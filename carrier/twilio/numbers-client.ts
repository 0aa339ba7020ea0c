/**
 * Reads a Twilio-compatible account's phone numbers: `GET /2010-04-01/Accounts/{sid}/IncomingPhoneNumbers.json
 * ?PhoneNumber=<E.164>`, which answers `{ "incoming_phone_numbers": [{ "sid", "phone_number", "friendly_name" }, ...] }`
 * (the list filtered to that number; empty when the account does not own it).
 */
import {
  CarrierApiError,
  type CarrierCallOptions,
  type CarrierCredentials,
  type CarrierIncomingNumber,
  type CarrierNumbersClient,
} from '../carrier.js'
import { DEFAULT_CARRIER_API_BASE_URL } from './calls-client.js'

/** Tuning for `TwilioNumbersClient`. */
export interface TwilioNumbersClientOptions {
  readonly fetch?: typeof fetch
  /** Timeout of the one HTTP attempt. Default 10000 ms. */
  readonly requestTimeoutMs?: number
}

/** `CarrierNumbersClient` for a Twilio-compatible REST API: one attempt (a person waits on it and may retry). */
export class TwilioNumbersClient implements CarrierNumbersClient {
  readonly #credentials: CarrierCredentials
  readonly #fetch: typeof fetch
  readonly #timeoutMs: number

  constructor(credentials: CarrierCredentials, options: TwilioNumbersClientOptions = {}) {
    this.#credentials = credentials
    this.#fetch = options.fetch ?? fetch
    this.#timeoutMs = options.requestTimeoutMs ?? 10_000
  }

  async findIncomingNumber(e164: string, options: CarrierCallOptions = {}): Promise<CarrierIncomingNumber | undefined> {
    const { accountSid, authToken } = this.#credentials
    const base = (this.#credentials.apiBaseUrl ?? DEFAULT_CARRIER_API_BASE_URL).replace(/\/+$/, '')
    const url = `${base}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}/IncomingPhoneNumbers.json?PhoneNumber=${encodeURIComponent(e164)}`
    const timeout = AbortSignal.timeout(this.#timeoutMs)
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout
    let response: Response
    let body: unknown
    let answered = false
    try {
      response = await this.#fetch(url, {
        headers: { authorization: `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`, accept: 'application/json' },
        signal,
      })
      answered = true
      body = response.ok ? await response.json() : await response.text()
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason
      const timedOut = timeout.aborted
      throw new CarrierApiError({
        code: timedOut ? 'carrier_timeout' : answered ? 'carrier_bad_response' : 'carrier_unavailable',
        status: 0,
        message: timedOut ? `carrier API did not answer within ${this.#timeoutMs} ms` : 'carrier API unreachable or its reply unreadable',
        cause: err,
      })
    }
    if (!response.ok) {
      // The carrier's text is not passed on: it may name the account; the status says enough.
      throw new CarrierApiError({
        code:
          response.status === 401 || response.status === 403
            ? 'carrier_auth_failed'
            : response.status >= 500
              ? 'carrier_unavailable'
              : 'carrier_rejected',
        status: response.status,
        message: `carrier API answered ${response.status}`,
      })
    }
    const list = (body as { incoming_phone_numbers?: unknown } | null)?.incoming_phone_numbers
    if (!Array.isArray(list)) {
      throw new CarrierApiError({
        code: 'carrier_bad_response',
        status: response.status,
        message: 'carrier API reply has no incoming_phone_numbers',
      })
    }
    for (const item of list as { sid?: unknown; phone_number?: unknown; friendly_name?: unknown }[]) {
      // The filter is the carrier's; the number is checked here too, so a lax filter cannot hand out another number.
      if (item?.phone_number !== e164 || typeof item.sid !== 'string' || item.sid === '') continue
      return { sid: item.sid, phoneNumber: e164, friendlyName: typeof item.friendly_name === 'string' ? item.friendly_name : undefined }
    }
    return undefined
  }
}
