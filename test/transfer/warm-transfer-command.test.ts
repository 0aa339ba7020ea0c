import t from 'tap'
import { decodeBackendEvent, MAX_TRANSFER_SPEECH_CHARS } from '../../pipeline/agent/backend-event.js'
import { context, events, MESSAGE, replyOf, webhookHarness } from '../agent/agent-helpers.js'
import { MAX_HOLD_CHARS, MAX_WHISPER_CHARS, parseWarmTransferRequest } from '../../core/warm-transfer-request.js'

const base = { type: 'response.transfer', turn_id: 'a1', to: '+14155550100' }

t.test('without mode, or with mode "cold", the event is exactly the cold transfer of before, warm fields ignored', async (t) => {
  const before = { ok: true, event: { type: 'transfer', text: 'One moment.', to: '+14155550100', callerId: undefined, headers: undefined } }
  t.strictSame(decodeBackendEvent({ ...base, content: 'One moment.' }, 'a1'), before)
  t.strictSame(decodeBackendEvent({ ...base, content: 'One moment.', mode: 'cold' }, 'a1'), before)
  t.strictSame(decodeBackendEvent({ ...base, content: 'One moment.', mode: null, whisper: 42, accept: 'voice' }, 'a1'), before)
  const r = decodeBackendEvent({ ...base, mode: 'cold' }, 'a1')
  t.ok(r.ok && !('warm' in r.event), 'no warm key on a cold event')
})

t.test('mode "warm" carries its fields, absent and null ones left out', async (t) => {
  t.strictSame(
    decodeBackendEvent(
      {
        ...base,
        mode: 'warm',
        content: 'Let me get a colleague.',
        whisper: 'Caller asks about a refund.',
        hold: 'Please hold.',
        accept: 'none',
        timeout_s: 45,
        transcribe: true,
      },
      'a1',
    ),
    {
      ok: true,
      event: {
        type: 'transfer',
        text: 'Let me get a colleague.',
        to: '+14155550100',
        callerId: undefined,
        headers: undefined,
        warm: { whisper: 'Caller asks about a refund.', hold: 'Please hold.', accept: 'none', timeoutS: 45, transcribe: true },
      },
    },
  )
  t.strictSame(decodeBackendEvent({ ...base, mode: 'warm', whisper: null, accept: null }, 'a1'), {
    ok: true,
    event: { type: 'transfer', text: '', to: '+14155550100', callerId: undefined, headers: undefined, warm: {} },
  })
})

t.test('a warm command of the wrong shape is a bad event, with the field named', async (t) => {
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ mode: 'lukewarm' }, /mode must be "warm" or "cold"/],
    [{ mode: 1 }, /mode must be "warm" or "cold"/],
    [{ mode: 'warm', whisper: 3 }, /whisper must be a string of at most 4096/],
    [{ mode: 'warm', hold: { text: 'x' } }, /hold must be a string/],
    [{ mode: 'warm', whisper: 'x'.repeat(MAX_TRANSFER_SPEECH_CHARS + 1) }, /whisper must be a string of at most/],
    [{ mode: 'warm', accept: 'voice' }, /accept must be "dtmf" or "none"/],
    [{ mode: 'warm', timeout_s: '30' }, /timeout_s must be a number/],
    [{ mode: 'warm', timeout_s: Number.NaN }, /timeout_s must be a number/],
    [{ mode: 'warm', transcribe: 'yes' }, /transcribe must be true or false/],
    [{ mode: 'warm', forward_data: 1 }, /forward_data must be true or false/],
    [{ mode: 'warm', to: 7 }, /needs "to" as a string/],
  ]
  for (const [fields, problem] of cases)
    t.match(decodeBackendEvent({ ...base, ...fields }, 'a1'), { ok: false, problem }, JSON.stringify(fields))
})

t.test('the warm request gets its defaults: keypad acceptance, 30 s, no whisper or hold line, no transcription', async (t) => {
  t.strictSame(parseWarmTransferRequest({ to: '+1 (415) 555-0100' }), {
    ok: true,
    request: {
      target: { kind: 'number', to: '+14155550100', callerId: undefined },
      whisper: undefined,
      hold: undefined,
      accept: 'dtmf',
      timeoutMs: 30_000,
      transcribe: false,
      forwardData: false,
    },
  })
  t.match(parseWarmTransferRequest({ to: '+14155550100', transcribe: true }), { ok: true, request: { transcribe: true } })
  t.match(parseWarmTransferRequest({ to: '+14155550100', forwardData: true }), { ok: true, request: { forwardData: true } })
  const r = parseWarmTransferRequest({
    to: 'sip:desk@cc.example.com',
    headers: { Ticket: '42' },
    whisper: '  Refund, order 1234.  ',
    hold: '   ',
    accept: 'none',
    timeoutS: 7.5,
  })
  t.ok(r.ok)
  if (!r.ok) return
  t.strictSame(r.request, {
    target: { kind: 'sip', to: 'sip:desk@cc.example.com', callerId: undefined, headers: [{ name: 'X-Ticket', value: '42' }] },
    whisper: 'Refund, order 1234.',
    hold: undefined,
    accept: 'none',
    timeoutMs: 7500,
    transcribe: false,
    forwardData: false,
  })
})

t.test('a bad warm request lists every problem, the target checked like a cold one', async (t) => {
  const r = parseWarmTransferRequest({
    to: '4155550100',
    whisper: 'w'.repeat(MAX_WHISPER_CHARS + 1),
    hold: 'h'.repeat(MAX_HOLD_CHARS + 1),
    accept: 'voice',
    timeoutS: 4,
  })
  t.strictSame(r, {
    ok: false,
    problems: [
      'to: "4155550100" is neither an E.164 phone number nor a sip: URI',
      `whisper: at most ${MAX_WHISPER_CHARS} characters`,
      `hold: at most ${MAX_HOLD_CHARS} characters`,
      'accept: "voice" is neither "dtmf" nor "none"',
      'timeout_s: from 5 to 120 seconds',
    ],
  })
  for (const timeoutS of [5, 120]) t.ok(parseWarmTransferRequest({ to: '+14155550100', timeoutS }).ok, `${timeoutS} s is allowed`)
  for (const timeoutS of [4.99, 120.01, Number.POSITIVE_INFINITY]) {
    t.strictSame(parseWarmTransferRequest({ to: '+14155550100', timeoutS }), { ok: false, problems: ['timeout_s: from 5 to 120 seconds'] })
  }
  t.strictSame(parseWarmTransferRequest({ to: '+14155550100', whisper: 'w'.repeat(MAX_WHISPER_CHARS) }).ok, true)
})

t.test('through the webhook step: a warm transfer streamed by a backend arrives with its fields and ends the reply', async (t) => {
  const { step, script } = await webhookHarness(t)
  const transfer = {
    type: 'response.transfer',
    turn_id: 't1',
    mode: 'warm',
    to: '+14155550100',
    content: 'One moment.',
    whisper: 'VIP.',
    timeout_s: 20,
  }
  script({ kind: 'sse', steps: [{ data: transfer }, { data: { type: 'response.tts', content: 'after', turn_id: 't1' } }] })
  t.strictSame(replyOf(await events(step, MESSAGE, context())), [
    {
      type: 'transfer',
      text: 'One moment.',
      to: '+14155550100',
      callerId: undefined,
      headers: undefined,
      warm: { whisper: 'VIP.', timeoutS: 20 },
    },
  ])
  script({ kind: 'json', body: { ...transfer, mode: 'cold' } })
  t.strictSame(replyOf(await events(step, MESSAGE, context())), [
    { type: 'transfer', text: 'One moment.', to: '+14155550100', callerId: undefined, headers: undefined },
  ])
})
