/**
 * Twilio-compatible voice markup (TwiML shape) answered by the voice hook.
 */
import { create } from 'xmlbuilder2'
import type { CarrierMarkup, CarrierStreamParameter, TransferTarget } from '../carrier.js'
import { sipUriWithHeaders } from '../../core/transfer-target.js'

/** Media type of the markup documents. */
export const MARKUP_CONTENT_TYPE = 'text/xml; charset=utf-8'

/** Route (under PUBLIC_URL) where the carrier opens the media stream. */
export const STREAM_PATH = '/v1/agents/carrier/websocket/'

// XML 1.0 cannot carry these at all (not even escaped); a stray control character in a refusal
// text must not make the carrier reject the whole document.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/**
 * Stream URL for a one-time key: `{ws|wss}://host[/prefix]/v1/agents/carrier/websocket/<key>`
 * (ws follows http, wss follows https).
 */
export function streamUrl(publicUrl: string, key: string): string {
  const base = new URL(publicUrl)
  const scheme = base.protocol === 'https:' ? 'wss:' : base.protocol === 'http:' ? 'ws:' : base.protocol
  const prefix = base.pathname.replace(/\/+$/, '')
  return `${scheme}//${base.host}${prefix}${STREAM_PATH}${encodeURIComponent(key)}`
}

/**
 * `<Response><Connect><Stream url="..."/></Connect></Response>`, with one `<Parameter>` per entry
 * (they arrive as `start.customParameters`).
 */
export function connectStreamMarkup(
  url: string,
  parameters?: readonly CarrierStreamParameter[] | Readonly<Record<string, string>>,
): string {
  const stream = create({ version: '1.0', encoding: 'UTF-8' })
    .ele('Response')
    .ele('Connect')
    .ele('Stream', { url: xmlSafe(url) })
  for (const { name, value } of toParameterList(parameters)) {
    stream.ele('Parameter', { name: xmlSafe(name), value: xmlSafe(value) }).up()
  }
  return stream.end({ prettyPrint: false })
}

/** `<Response><Say>text</Say><Hangup/></Response>`: refuse a call politely. */
export function sayAndHangupMarkup(text: string): string {
  return create({ version: '1.0', encoding: 'UTF-8' })
    .ele('Response')
    .ele('Say')
    .txt(xmlSafe(text))
    .up()
    .ele('Hangup')
    .end({ prettyPrint: false })
}

/**
 * `<Response><Dial callerId=".."><Number>+1..</Number></Dial></Response>`, or `<Sip>` with the headers in the
 * URI's query (`sip:agent@cc.example?X-Ticket=1`: the carrier sends X- query parameters as SIP headers).
 */
export function dialMarkup(target: TransferTarget): string {
  const dial = create({ version: '1.0', encoding: 'UTF-8' })
    .ele('Response')
    .ele('Dial', target.callerId === undefined ? {} : { callerId: xmlSafe(target.callerId) })
  if (target.kind === 'number') dial.ele('Number').txt(xmlSafe(target.to))
  else dial.ele('Sip').txt(xmlSafe(sipUriWithHeaders(target)))
  return dial.end({ prettyPrint: false })
}

/** `CarrierMarkup` for Twilio-compatible carriers. */
export const twilioMarkup: CarrierMarkup = {
  contentType: MARKUP_CONTENT_TYPE,
  connectStream: connectStreamMarkup,
  sayAndHangup: sayAndHangupMarkup,
  dial: dialMarkup,
}

function toParameterList(
  parameters: readonly CarrierStreamParameter[] | Readonly<Record<string, string>> | undefined,
): readonly CarrierStreamParameter[] {
  if (parameters === undefined) return []
  if (Array.isArray(parameters)) return parameters as readonly CarrierStreamParameter[]
  return Object.entries(parameters as Readonly<Record<string, string>>).map(([name, value]) => ({ name, value }))
}

function xmlSafe(text: string): string {
  return text.replace(NOT_XML_CHAR, '')
}
