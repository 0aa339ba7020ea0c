import t from 'tap'
import { SipDialogTable, toTag } from '../../transports/sip/calls/sip-dialogs.js'

const inDialog = (callId: string, tag: string) => ({
  headers: [
    { name: 'Call-ID', value: callId },
    { name: 'To', value: `<sip:+14155552671@gw>;tag=${tag}` },
  ],
})

t.test('a ringing call is found by its INVITE key, then by Call-ID and our tag once confirmed', async (t) => {
  const table = new SipDialogTable<string>(10)
  t.ok(table.addEarly('k1', 'call-1'))
  t.equal(table.findEarly('k1'), 'call-1')
  t.equal(table.findDialog(inDialog('c1', 'ours')), undefined, 'no dialog before the 200')
  table.confirm('k1', 'c1', 'ours', 'call-1')
  t.equal(table.findEarly('k1'), undefined, 'a CANCEL after the 200 finds nothing to stop')
  t.equal(table.findDialog(inDialog('c1', 'ours')), 'call-1')
  t.equal(table.findDialog(inDialog('c1', 'theirs')), undefined, 'another tag is another dialog')
  t.equal(table.findDialog(inDialog('c2', 'ours')), undefined, 'another Call-ID too')
  t.equal(table.size, 1, 'counted once')
  table.remove('call-1')
  t.equal(table.findDialog(inDialog('c1', 'ours')), undefined)
  t.equal(table.size, 0)
  table.remove('call-1')
  t.equal(table.size, 0, 'removing twice is harmless')
})

t.test('the table is bounded: a new call is refused when full, and room comes back when one ends', async (t) => {
  const table = new SipDialogTable<string>(2)
  t.ok(table.addEarly('a', 'A'))
  t.ok(table.addEarly('b', 'B'))
  t.notOk(table.hasRoom)
  t.notOk(table.addEarly('c', 'C'))
  t.equal(table.findEarly('c'), undefined)
  table.confirm('a', 'call-a', 'tag', 'A')
  t.notOk(table.addEarly('c', 'C'), 'a confirmed call still counts')
  table.remove('B')
  t.ok(table.addEarly('c', 'C'))
  t.same(table.calls().sort(), ['A', 'C'])
})

t.test('toTag reads the To tag, and nothing from a To without one', async (t) => {
  t.equal(toTag(inDialog('c', 'x1')), 'x1')
  t.equal(toTag({ headers: [{ name: 'To', value: '<sip:a@b>' }] }), undefined)
  t.equal(toTag({ headers: [{ name: 'To', value: 'sip:a@b;tag=short' }] }), 'short', 'an addr-spec: the tag belongs to the header')
  t.equal(toTag({ headers: [] }), undefined)
})
