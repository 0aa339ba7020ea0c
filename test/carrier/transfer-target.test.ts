import t from 'tap'
import { parseTransferTarget } from '../../core/transfer-target.js'
import { dialMarkup } from '../../carrier/twilio/markup.js'

t.test('numbers are normalised to E.164 and dialled with <Number>', async (t) => {
  const r = parseTransferTarget({ to: '+44 20 7183 8750', callerId: '+14155550199' })
  t.ok(r.ok)
  if (!r.ok) return
  t.same(r.target, { kind: 'number', to: '+442071838750', callerId: '+14155550199' })
  t.equal(
    dialMarkup(r.target),
    '<?xml version="1.0" encoding="UTF-8"?><Response><Dial callerId="+14155550199"><Number>+442071838750</Number></Dial></Response>',
  )
})

t.test('SIP targets carry X- headers in the URI query, escaped in the URI and in the XML', async (t) => {
  const r = parseTransferTarget({ to: 'sip:queue@cc.example.com;transport=tls', headers: { Ticket: 'A&B <1>', 'x-lang': 'en' } })
  t.ok(r.ok)
  if (!r.ok) return
  t.equal(
    dialMarkup(r.target),
    '<?xml version="1.0" encoding="UTF-8"?><Response><Dial><Sip>sip:queue@cc.example.com;transport=tls?X-Ticket=A%26B%20%3C1%3E&amp;X-lang=en</Sip></Dial></Response>',
  )
})

t.test('bad targets are refused with one sentence per problem', async (t) => {
  const cases: [Parameters<typeof parseTransferTarget>[0], string[]][] = [
    [{ to: '' }, ['to: "" is neither an E.164 phone number nor a sip: URI']],
    [{ to: '4155550100' }, ['to: "4155550100" is neither an E.164 phone number nor a sip: URI']],
    [{ to: '+1415' }, ['to: "+1415" is neither an E.164 phone number nor a sip: URI']],
    [{ to: 'sip:nobody' }, ['to: "sip:nobody" is not a SIP URI of the form sip:user@host']],
    [{ to: 'sip:a@b.c?X-Ticket=1' }, ['to: "sip:a@b.c?X-Ticket=1" is not a SIP URI of the form sip:user@host']],
    [{ to: 'sip:a@b.c', headers: { 'Bad Name': '1' } }, ['headers: "Bad Name" is not a header name']],
    [{ to: 'sip:a@b.c', headers: { Ticket: 'x'.repeat(257) } }, ['headers: X-Ticket must be printable text of at most 256 characters']],
    [{ to: '+14155550100', headers: { Ticket: '1' } }, ['headers need a sip: target (a phone network carries no SIP headers)']],
    [{ to: '+14155550100', callerId: 'me <x>' }, ['caller_id must be a phone number or a SIP user (1-64 characters)']],
  ]
  for (const [request, problems] of cases) {
    const r = parseTransferTarget(request)
    t.same(r, { ok: false, problems }, JSON.stringify(request).slice(0, 80))
  }
})
