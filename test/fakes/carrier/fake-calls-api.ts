// Follows Twilio's public documentation as read 2026-11-29 (stored copies): "Media Streams - WebSocket Messages"
// (twilio.com/docs/voice/media-streams/websocket-messages), "TwiML Voice: <Stream>" (twilio.com/docs/voice/twiml/
// stream), the Call resource and its status callbacks (twilio.com/docs/voice/api/call-resource) and "Webhooks
// security" (twilio.com/docs/usage/webhooks/webhooks-security). test/fakes-conformance/carrier.test.ts replays the
// documented messages it could read to the codec.
/**
 * A fake Twilio-compatible Calls REST API on a real HTTP server (port 0). It checks Basic auth,
 * answers with the carrier's JSON shapes, can be told to fail, and drives created calls with
 * signed status callbacks and, when answered, the voice hook and media stream. It also lists the
 * account's phone numbers (`GET IncomingPhoneNumbers.json?PhoneNumber=`) in Twilio's page shape.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import { FakeCall, isFinal, type CallOutcome } from './fake-call.js'
import { readMarkup, type MarkupVerb } from './markup-reader.js'
import type { SimulatedCall } from './simulated-call.js'

/** A call the carrier received (not created through this API) that the API may still update: a transfer. */
export interface InboundCall {
  readonly sid: string
  readonly phone: SimulatedCall
  /** Markup documents the call was updated with, in order. */
  readonly updates: string[]
}

/** One call update with new markup, as the API received it. */
export interface CallUpdate {
  readonly sid: string
  readonly markup: string
  readonly verbs: MarkupVerb[]
  readonly at: number
}

/** Options of `FakeCallsApi.start`. */
export interface FakeCallsApiOptions {
  readonly accountSid?: string
  readonly authToken?: string
  /** How created calls proceed (default: answered). */
  readonly outcome?: CallOutcome
  /** Pause between call progress steps. Default 10 ms. */
  readonly stepMs?: number
  readonly signatureHeader?: string
  /** Map a public URL (Url, StatusCallback, stream URL) to where to connect. Default identity. */
  readonly rewriteUrl?: (url: string) => string
}

/** One request the fake received. */
export interface RecordedRequest {
  readonly method: string
  readonly path: string
  /** The query string, without `?` ('' when none). */
  readonly query: string
  readonly headers: IncomingHttpHeaders
  readonly form: Record<string, string | string[]>
  readonly rawBody: string
  /** performance.now() when the request began to arrive (its headers were read). */
  readonly at: number
}

/** A scripted failure for the next matching request(s). */
export interface FakeFailure {
  /** HTTP status to answer; omit with `delayMs` to only slow the request down. */
  readonly status?: number
  /** Carrier error number, e.g. 21211 or 20429. */
  readonly code?: number
  readonly message?: string
  /** How many requests fail this way. Default 1. */
  readonly times?: number
  readonly headers?: Readonly<Record<string, string>>
  /** Destroy the socket without answering (a network error) instead of replying. */
  readonly dropConnection?: boolean
  /** Answer after this long (for timeout tests). */
  readonly delayMs?: number
}

const E164 = /^\+[1-9]\d{1,14}$/

/** The fake Calls API server. */
export class FakeCallsApi {
  readonly accountSid: string
  readonly authToken: string
  readonly requests: RecordedRequest[] = []
  readonly calls = new Map<string, FakeCall>()
  /** The account's phone numbers (E.164 -> its resource), as IncomingPhoneNumbers lists them. */
  readonly numbers = new Map<string, { sid: string; friendlyName: string }>()
  readonly inbound = new Map<string, InboundCall>()
  /** Every accepted markup update (Calls/{sid}.json with `Twiml`), in arrival order. */
  readonly updates: CallUpdate[] = []
  /** Runs before an accepted update is answered (tests use it to race the carrier's other reports). */
  beforeUpdateReply: ((update: CallUpdate) => Promise<void>) | undefined
  outcome: CallOutcome
  /** The outcome for a call to `to`, when it differs from `outcome` (a campaign's mix of people). */
  outcomeFor: ((to: string) => CallOutcome | undefined) | undefined
  readonly #server: Server
  readonly #options: FakeCallsApiOptions
  readonly #failures: FakeFailure[] = []
  readonly #driving = new Set<Promise<void>>()
  #created: ((call: FakeCall) => void)[] = []

  private constructor(server: Server, options: FakeCallsApiOptions) {
    this.#server = server
    this.#options = options
    this.accountSid = options.accountSid ?? `AC${randomBytes(16).toString('hex')}`
    this.authToken = options.authToken ?? randomBytes(16).toString('hex')
    this.outcome = options.outcome ?? { kind: 'answer' }
  }

  /** Start on 127.0.0.1, port 0. */
  static async start(options: FakeCallsApiOptions = {}): Promise<FakeCallsApi> {
    const server = createServer()
    const api = new FakeCallsApi(server, options)
    server.on('request', (req, res) => void api.#handle(req, res))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return api
  }

  /** Base URL to configure as the carrier API (`apiBaseUrl`). */
  get baseUrl(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  /** Queue a failure for the next request(s). */
  failNext(failure: FakeFailure): void {
    this.#failures.push({ ...failure })
  }

  /** The carrier also knows an inbound call that reached the gateway through the simulator: it can be updated. */
  addInbound(sid: string, phone: SimulatedCall): InboundCall {
    const call: InboundCall = { sid, phone, updates: [] }
    this.inbound.set(sid, call)
    return call
  }

  /** The account buys `e164`: IncomingPhoneNumbers lists it from now on. Returns its `PN...` sid. */
  ownNumber(e164: string, friendlyName = e164): string {
    const sid = `PN${randomBytes(16).toString('hex')}`
    this.numbers.set(e164, { sid, friendlyName })
    return sid
  }

  /** Resolve with the next call created. */
  nextCall(): Promise<FakeCall> {
    return new Promise((resolve) => this.#created.push(resolve))
  }

  /** Stop the server and end every call in progress. */
  async close(): Promise<void> {
    await Promise.all(Array.from(this.calls.values(), (c) => c.hangup().catch(() => undefined)))
    await Promise.allSettled(Array.from(this.#driving))
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const at = performance.now()
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const rawBody = Buffer.concat(chunks).toString('utf8')
    const [path = '/', query = ''] = (req.url ?? '/').split('?')
    const form = parseForm(rawBody)
    this.requests.push({ method: req.method ?? '', path, query, headers: req.headers, form, rawBody, at })

    const failure = this.#takeFailure()
    if (failure) {
      if (failure.delayMs) await delay(failure.delayMs)
      if (failure.dropConnection) {
        req.socket.destroy()
        return
      }
      if (failure.status !== undefined) {
        return send(res, failure.status, errorBody(failure.status, failure.code, failure.message), failure.headers)
      }
    }
    if (!this.#authorized(req.headers.authorization)) {
      return send(res, 401, errorBody(401, 20003, 'Authenticate'), { 'www-authenticate': 'Basic realm="Twilio API"' })
    }
    const base = `/2010-04-01/Accounts/${this.accountSid}/Calls`
    if (req.method === 'POST' && path === `${base}.json`) return this.#createCall(form, res)
    const numbersPath = `/2010-04-01/Accounts/${this.accountSid}/IncomingPhoneNumbers.json`
    if (req.method === 'GET' && path === numbersPath) return this.#listNumbers(numbersPath, new URLSearchParams(query), res)
    if (req.method === 'POST' && path.startsWith(`${base}/`) && path.endsWith('.json')) {
      const sid = decodeURIComponent(path.slice(base.length + 1, -'.json'.length))
      if (!sid.includes('/')) return this.#updateCall(sid, form, res)
    }
    if (path.startsWith('/2010-04-01/Accounts/') && !path.startsWith(`/2010-04-01/Accounts/${this.accountSid}/`)) {
      return send(res, 401, errorBody(401, 20003, 'Authenticate'))
    }
    return send(res, 404, errorBody(404, 20404, `The requested resource ${path} was not found`))
  }

  #createCall(form: Record<string, string | string[]>, res: ServerResponse): void {
    const to = one(form.To)
    const from = one(form.From)
    const url = one(form.Url)
    const twiml = one(form.Twiml)
    if (!to) return send(res, 400, errorBody(400, 21201, "No 'To' number is specified"))
    if (!E164.test(to)) return send(res, 400, errorBody(400, 21211, `The 'To' number ${to} is not a valid phone number.`))
    if (!from) return send(res, 400, errorBody(400, 21603, "A 'From' phone number is required."))
    if (twiml !== undefined) {
      try {
        readMarkup(twiml)
      } catch (err) {
        return send(res, 400, errorBody(400, 12100, `Document parse failure: ${(err as Error).message}`))
      }
    } else if (!url || !/^https?:\/\//.test(url)) return send(res, 400, errorBody(400, 21205, 'Url is not a valid URL'))
    const events = form.StatusCallbackEvent
    const statusCallback = one(form.StatusCallback)
    const call = new FakeCall(
      {
        sid: `CA${randomBytes(16).toString('hex')}`,
        to,
        from,
        url: url ?? '',
        twiml,
        statusCallback: statusCallback || undefined,
        statusCallbackEvents: events === undefined ? ['completed'] : ([] as string[]).concat(events),
        timeoutSec: form.Timeout === undefined ? undefined : Number(one(form.Timeout)),
        machineDetection: one(form.MachineDetection),
        asyncAmdCallback: one(form.AsyncAmd) === 'true' ? one(form.AsyncAmdStatusCallback) : undefined,
      },
      {
        accountSid: this.accountSid,
        authToken: this.authToken,
        stepMs: this.#options.stepMs ?? 10,
        signatureHeader: this.#options.signatureHeader ?? 'X-Twilio-Signature',
        rewriteUrl: this.#options.rewriteUrl ?? ((u) => u),
      },
    )
    this.calls.set(call.sid, call)
    send(res, 201, call.toJson())
    for (const resolve of this.#created.splice(0)) resolve(call)
    const driving = call.drive(this.outcomeFor?.(one(form.To) ?? '') ?? this.outcome)
    this.#driving.add(driving)
    void driving.finally(() => this.#driving.delete(driving))
  }

  /**
   * Twilio's list page. `PhoneNumber` matches partially (Twilio's documented filter: part of a number, `*` for any
   * digit), so a filter can list numbers other than the one asked for: the client must check.
   */
  #listNumbers(path: string, params: URLSearchParams, res: ServerResponse): void {
    const filter = params.get('PhoneNumber') ?? ''
    const pattern = new RegExp(filter.replace(/[^\d*]/g, '').replace(/\*/g, '\\d'))
    const items = [...this.numbers]
      .filter(([number]) => pattern.test(number.replace(/\D/g, '')))
      .map(([number, n]) => ({
        account_sid: this.accountSid,
        sid: n.sid,
        phone_number: number,
        friendly_name: n.friendlyName,
        capabilities: { voice: true, sms: true, mms: false, fax: false },
        voice_url: null,
        uri: `${path.slice(0, -'.json'.length)}/${n.sid}.json`,
      }))
    const uri = `${path}?${params.toString()}`
    send(res, 200, {
      first_page_uri: uri,
      end: Math.max(0, items.length - 1),
      previous_page_uri: null,
      incoming_phone_numbers: items,
      uri,
      page_size: 50,
      start: 0,
      next_page_uri: null,
      page: 0,
    })
  }

  async #updateMarkup(sid: string, markup: string, res: ServerResponse): Promise<void> {
    const call = this.calls.get(sid)
    const inbound = this.inbound.get(sid)
    let verbs: MarkupVerb[]
    try {
      verbs = readMarkup(markup)
    } catch (err) {
      return send(res, 400, errorBody(400, 12100, `Document parse failure: ${(err as Error).message}`))
    }
    const live = call ? call.status === 'in-progress' : inbound?.phone.isOpen
    if (!live) return send(res, 400, errorBody(400, 21220, 'Call is not in-progress. Cannot redirect.'))
    const update: CallUpdate = { sid, markup, verbs, at: performance.now() }
    this.updates.push(update)
    await this.beforeUpdateReply?.(update)
    // The call leaves its media stream (the phone side sends `stop`) before the API answers.
    if (call) await call.update(markup)
    else if (inbound) {
      inbound.updates.push(markup)
      await inbound.phone.hangup()
    }
    send(res, 200, call ? call.toJson() : { sid, account_sid: this.accountSid, status: 'in-progress', direction: 'inbound' })
  }

  #updateCall(sid: string, form: Record<string, string | string[]>, res: ServerResponse): void | Promise<void> {
    const markup = one(form.Twiml)
    if (markup !== undefined) {
      if (!this.calls.has(sid) && !this.inbound.has(sid)) {
        return send(res, 404, errorBody(404, 20404, `The requested resource Calls/${sid}.json was not found`))
      }
      return this.#updateMarkup(sid, markup, res)
    }
    const call = this.calls.get(sid)
    if (!call) return send(res, 404, errorBody(404, 20404, `The requested resource Calls/${sid}.json was not found`))
    const status = one(form.Status)
    if (status !== undefined && status !== 'completed' && status !== 'canceled') {
      return send(res, 400, errorBody(400, 21218, 'Invalid Status'))
    }
    if (status === undefined) return send(res, 200, call.toJson())
    // The carrier answers at once; the stream's `stop` and the final callback follow.
    const final = call.status === 'in-progress' || call.status === 'completed' ? 'completed' : 'canceled'
    const json = { ...call.toJson(), status: isFinal(call.status) ? call.status : final }
    const ending = call.hangup()
    this.#driving.add(ending)
    void ending.finally(() => this.#driving.delete(ending))
    send(res, 200, json)
  }

  #takeFailure(): FakeFailure | undefined {
    const head = this.#failures[0]
    if (!head) return undefined
    const left = (head.times ?? 1) - 1
    if (left <= 0) this.#failures.shift()
    else this.#failures[0] = { ...head, times: left }
    return head
  }

  #authorized(header: string | undefined): boolean {
    if (!header?.startsWith('Basic ')) return false
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8')
    return decoded === `${this.accountSid}:${this.authToken}`
  }
}

/** Twilio-shaped error JSON. */
export function errorBody(status: number, code: number | undefined, message: string | undefined): Record<string, unknown> {
  return {
    code: code ?? null,
    message: message ?? 'Error',
    more_info: code === undefined ? null : `https://www.twilio.com/docs/errors/${code}`,
    status,
  }
}

function send(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

function parseForm(body: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {}
  for (const [name, value] of new URLSearchParams(body)) {
    const prev = out[name]
    out[name] = prev === undefined ? value : ([] as string[]).concat(prev, value)
  }
  return out
}

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
