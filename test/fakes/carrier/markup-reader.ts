/**
 * Reads voice markup the way the carrier would: the verbs under `<Response>`, in order.
 */
import { create } from 'xmlbuilder2'

/** One instruction of a markup document. */
export type MarkupVerb =
  | { readonly verb: 'Say'; readonly text: string }
  | { readonly verb: 'Hangup' }
  | { readonly verb: 'Reject'; readonly reason: string | undefined }
  | { readonly verb: 'Connect'; readonly stream: { readonly url: string; readonly parameters: Record<string, string> } }
  | {
      readonly verb: 'Dial'
      readonly callerId: string | undefined
      /** What is dialled: `<Number>` or `<Sip>` (the SIP URI with its query of X- headers). */
      readonly targets: readonly { readonly kind: 'Number' | 'Sip'; readonly value: string }[]
    }
  | { readonly verb: 'Unknown'; readonly name: string }

interface DomNode {
  readonly nodeType: number
  readonly localName?: string
  readonly textContent: string | null
  readonly childNodes: ArrayLike<DomNode>
  getAttribute?(name: string): string | null
}

const ELEMENT = 1

/** Parse a markup document; throws when it is not XML or the root is not `<Response>`. */
export function readMarkup(xml: string): MarkupVerb[] {
  const root = create(xml).root().node as unknown as DomNode
  if (root.localName !== 'Response') throw new Error(`markup root is <${root.localName}>, not <Response>`)
  return elements(root).map(toVerb)
}

function toVerb(el: DomNode): MarkupVerb {
  switch (el.localName) {
    case 'Say':
      return { verb: 'Say', text: el.textContent ?? '' }
    case 'Hangup':
      return { verb: 'Hangup' }
    case 'Reject':
      return { verb: 'Reject', reason: el.getAttribute?.('reason') ?? undefined }
    case 'Connect': {
      const stream = elements(el).find((c) => c.localName === 'Stream')
      const url = stream?.getAttribute?.('url')
      if (!stream || !url) throw new Error('<Connect> without <Stream url>')
      const parameters: Record<string, string> = {}
      for (const p of elements(stream)) {
        if (p.localName !== 'Parameter') continue
        const name = p.getAttribute?.('name')
        if (name) parameters[name] = p.getAttribute?.('value') ?? ''
      }
      return { verb: 'Connect', stream: { url, parameters } }
    }
    case 'Dial': {
      const targets: { kind: 'Number' | 'Sip'; value: string }[] = []
      for (const c of elements(el)) {
        if (c.localName === 'Number' || c.localName === 'Sip') targets.push({ kind: c.localName, value: (c.textContent ?? '').trim() })
      }
      // Twilio also accepts a bare number as the text of <Dial>.
      if (targets.length === 0 && (el.textContent ?? '').trim() !== '')
        targets.push({ kind: 'Number', value: (el.textContent ?? '').trim() })
      if (targets.length === 0) throw new Error('<Dial> with nothing to dial')
      return { verb: 'Dial', callerId: el.getAttribute?.('callerId') ?? undefined, targets }
    }
    default:
      return { verb: 'Unknown', name: el.localName ?? '' }
  }
}

function elements(node: DomNode): DomNode[] {
  return Array.from(node.childNodes).filter((c) => c.nodeType === ELEMENT)
}
