import t from 'tap'
import { create } from 'xmlbuilder2'
import { connectStreamMarkup, sayAndHangupMarkup, streamUrl, twilioMarkup } from '../../carrier/twilio/markup.js'
import { createTwilioCarrier } from '../../carrier/twilio/twilio-carrier.js'
import { readMarkup } from '../fakes/carrier/markup-reader.js'

interface El {
  nodeType: number
  localName: string
  textContent: string | null
  childNodes: ArrayLike<El>
  getAttribute(name: string): string | null
}
const root = (xml: string): El => create(xml).root().node as unknown as El
const children = (el: El): El[] => Array.from(el.childNodes).filter((c) => c.nodeType === 1)

t.test('connect stream markup: exact document', async (t) => {
  const xml = connectStreamMarkup('wss://gw.example.com/v1/agents/carrier/websocket/k1')
  t.equal(
    xml,
    '<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="wss://gw.example.com/v1/agents/carrier/websocket/k1"/></Connect></Response>',
  )
})

t.test('connect stream markup with parameters, parsed back', async (t) => {
  const url = 'wss://gw.example.com/v1/agents/carrier/websocket/abc?x=1&y="2"'
  const xml = connectStreamMarkup(url, [
    { name: 'agent', value: 'agt_1' },
    { name: 'note', value: `<b>&'"` },
  ])
  t.match(xml, /url="wss:\/\/gw\.example\.com\/v1\/agents\/carrier\/websocket\/abc\?x=1&amp;y=&quot;2&quot;"/)
  const response = root(xml)
  t.equal(response.localName, 'Response')
  const [connect] = children(response)
  t.equal(connect?.localName, 'Connect')
  const [stream] = children(connect as El)
  t.equal(stream?.getAttribute('url'), url, 'url survives escaping')
  const params = children(stream as El).map((p) => [p.localName, p.getAttribute('name'), p.getAttribute('value')])
  t.same(params, [
    ['Parameter', 'agent', 'agt_1'],
    ['Parameter', 'note', `<b>&'"`],
  ])
  t.same(readMarkup(connectStreamMarkup(url, { a: '1', b: '2' })), [{ verb: 'Connect', stream: { url, parameters: { a: '1', b: '2' } } }])
})

t.test('say and hang up: escaping and order', async (t) => {
  const text = `Sorry, <this> number & "that" one aren't assigned ]]> yet.`
  const xml = sayAndHangupMarkup(text)
  t.ok(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?><Response><Say>'))
  t.ok(xml.endsWith('</Say><Hangup/></Response>'))
  t.notMatch(xml, /<this>/)
  const verbs = children(root(xml))
  t.same(
    verbs.map((v) => v.localName),
    ['Say', 'Hangup'],
  )
  t.equal(verbs[0]?.textContent, text)
})

t.test('characters XML cannot carry are dropped, not emitted', async (t) => {
  const xml = sayAndHangupMarkup('Hello\u0000 there\u001b \ud800world')
  t.equal(children(root(xml))[0]?.textContent, 'Hello there world')
})

t.test('stream URL: ws follows http, wss follows https, prefix kept', async (t) => {
  t.equal(streamUrl('https://gw.example.com', 'KEY'), 'wss://gw.example.com/v1/agents/carrier/websocket/KEY')
  t.equal(streamUrl('http://localhost:3000', 'KEY'), 'ws://localhost:3000/v1/agents/carrier/websocket/KEY')
  t.equal(streamUrl('https://gw.example.com/voice/', 'KEY'), 'wss://gw.example.com/voice/v1/agents/carrier/websocket/KEY')
  t.equal(streamUrl('https://gw.example.com:8443/voice', 'KEY'), 'wss://gw.example.com:8443/voice/v1/agents/carrier/websocket/KEY')
  t.equal(streamUrl('https://gw.example.com:443', 'KEY'), 'wss://gw.example.com/v1/agents/carrier/websocket/KEY')
  t.equal(streamUrl('https://gw.example.com', 'a/b c'), 'wss://gw.example.com/v1/agents/carrier/websocket/a%2Fb%20c')
  t.equal(createTwilioCarrier().mediaStream.streamUrl('http://h', 'k'), 'ws://h/v1/agents/carrier/websocket/k')
  t.match(twilioMarkup.contentType, /^text\/xml/)
})
