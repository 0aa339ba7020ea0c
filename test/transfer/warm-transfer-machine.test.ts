import t from 'tap'
import { TRANSFER_FAILURE_REASONS, type TransferAction, type TransferInput } from '../../gateway/transfer/transfer-steps.js'
import { ACCEPT_PROMPT, WarmTransferMachine, type WarmTransferPlan } from '../../gateway/transfer/warm-transfer-machine.js'

const PLAN: WarmTransferPlan = { whisper: 'Refund for order 1234.', hold: 'Please hold.', accept: 'dtmf', timeoutMs: 30_000 }

/** A machine on a clock the test moves; `at(ms, input)` feeds an input at that time. */
function machine(plan: Partial<WarmTransferPlan> = {}) {
  let now = 1_000_000
  const m = new WarmTransferMachine({ ...PLAN, ...plan }, () => now)
  const start = now
  return {
    m,
    start: () => m.start(),
    at: (ms: number, input: TransferInput): TransferAction[] => {
      now = start + ms
      return m.handle(input)
    },
    deadline: () => (m.deadline() === undefined ? undefined : m.deadline()! - start),
  }
}

t.test('the happy path: dial, hold, ring, answer, whisper with the prompt, 1 accepts, bridged', async (t) => {
  const x = machine()
  t.equal(x.m.phase, 'idle')
  t.strictSame(x.start(), [
    { type: 'report', fact: { type: 'transfer.started', atMs: 0 } },
    { type: 'dial_human' },
    { type: 'start_hold', line: 'Please hold.' },
  ])
  t.strictSame(x.start(), [], 'start twice does nothing')
  t.equal(x.m.phase, 'dialling')
  t.strictSame(x.at(800, { type: 'progress', progress: 'ringing' }), [])
  t.equal(x.m.phase, 'ringing')
  t.strictSame(x.at(6_500, { type: 'progress', progress: 'answered' }), [
    { type: 'report', fact: { type: 'transfer.answered', atMs: 6_500 } },
    { type: 'speak_whisper', text: `Refund for order 1234. ${ACCEPT_PROMPT}` },
  ])
  t.equal(x.m.phase, 'whispering')
  t.strictSame(x.at(9_000, { type: 'whisper_done' }), [])
  t.equal(x.m.phase, 'awaiting_acceptance')
  t.strictSame(x.at(9_100, { type: 'dtmf', digits: '3' }), [], 'other keys are ignored')
  t.strictSame(x.at(11_250, { type: 'dtmf', digits: '1' }), [
    { type: 'stop_hold' },
    { type: 'bridge' },
    { type: 'report', fact: { type: 'transfer.connected', atMs: 11_250, answeredAtMs: 6_500 } },
  ])
  t.equal(x.m.phase, 'bridged')
  t.equal(x.deadline(), undefined, 'no timeout once bridged')
  t.strictSame(x.at(40_000, { type: 'timeout' }), [])
  t.strictSame(x.at(41_000, { type: 'dtmf', digits: '2' }), [], 'keys after the bridge are the human talking, not a decline')
  t.strictSame(x.at(41_000, { type: 'progress', progress: 'machine' }), [])
})

t.test('after the bridge either side hanging up ends both, and says who', async (t) => {
  for (const [input, actions, endedBy] of [
    ['caller_hangup', [{ type: 'stop_human_leg' }, { type: 'end_session', endedBy: 'caller' }], 'caller'],
    ['human_hangup', [{ type: 'end_session', endedBy: 'human' }], 'human'],
  ] as const) {
    const x = machine({ accept: 'none', whisper: undefined })
    x.start()
    x.at(1_000, { type: 'progress', progress: 'answered' })
    t.equal(x.m.phase, 'bridged', 'accept none without a whisper: answering is accepting')
    t.strictSame(x.at(60_000, { type: input }), actions)
    t.equal(x.m.phase, 'ended')
    t.equal(x.m.endedBy, endedBy)
    t.strictSame(x.at(60_001, { type: input }), [], 'over: nothing more')
  }
})

t.test('accept "none" with a whisper: bridged when the whisper ends, no prompt, keys ignored', async (t) => {
  const x = machine({ accept: 'none' })
  x.start()
  t.strictSame(x.at(2_000, { type: 'progress', progress: 'answered' })[1], { type: 'speak_whisper', text: 'Refund for order 1234.' })
  t.strictSame(x.at(2_500, { type: 'dtmf', digits: '2' }), [])
  t.strictSame(
    x.at(4_000, { type: 'whisper_done' }).map((a) => a.type),
    ['stop_hold', 'bridge', 'report'],
  )
})

t.test('no whisper with keypad acceptance: the prompt alone; a key during it counts', async (t) => {
  const x = machine({ whisper: undefined, hold: undefined })
  t.strictSame(x.start()[2], { type: 'start_hold', line: undefined })
  x.at(500, { type: 'progress', progress: 'answered' })
  t.equal(x.m.phase, 'whispering')
  t.strictSame(x.at(700, { type: 'dtmf', digits: '*1' })[1], { type: 'bridge' })
})

t.test('every failure is typed, returns the caller to the agent and cleans up the human leg when it is still up', async (t) => {
  const cases: {
    name: string
    before: TransferInput[]
    input: TransferInput
    reason: string
    phase: string
    legLive: boolean
    ms: number
  }[] = [
    {
      name: 'no answer',
      before: [{ type: 'progress', progress: 'ringing' }],
      input: { type: 'progress', progress: 'no_answer' },
      reason: 'no_answer',
      phase: 'ringing',
      legLive: false,
      ms: 25_000,
    },
    { name: 'busy', before: [], input: { type: 'progress', progress: 'busy' }, reason: 'busy', phase: 'dialling', legLive: false, ms: 900 },
    {
      name: 'declined while ringing (SIP 603)',
      before: [{ type: 'progress', progress: 'ringing' }],
      input: { type: 'progress', progress: 'declined' },
      reason: 'declined',
      phase: 'ringing',
      legLive: false,
      ms: 4_000,
    },
    {
      name: 'carrier error',
      before: [],
      input: { type: 'progress', progress: 'failed' },
      reason: 'failed',
      phase: 'dialling',
      legLive: false,
      ms: 300,
    },
    {
      name: 'decline with 2',
      before: [{ type: 'progress', progress: 'answered' }, { type: 'whisper_done' }],
      input: { type: 'dtmf', digits: '2' },
      reason: 'declined',
      phase: 'awaiting_acceptance',
      legLive: true,
      ms: 9_000,
    },
    {
      name: 'human hangs up unaccepted',
      before: [{ type: 'progress', progress: 'answered' }],
      input: { type: 'human_hangup' },
      reason: 'declined',
      phase: 'whispering',
      legLive: false,
      ms: 4_000,
    },
    {
      name: 'answering machine',
      before: [{ type: 'progress', progress: 'answered' }],
      input: { type: 'progress', progress: 'machine' },
      reason: 'voicemail',
      phase: 'whispering',
      legLive: true,
      ms: 3_000,
    },
    {
      name: 'timeout',
      before: [{ type: 'progress', progress: 'ringing' }],
      input: { type: 'timeout' },
      reason: 'timeout',
      phase: 'ringing',
      legLive: true,
      ms: 30_000,
    },
  ]
  for (const c of cases) {
    const x = machine()
    x.start()
    for (const input of c.before) x.at(100, input)
    const answered = c.before.some((i) => i.type === 'progress' && i.progress === 'answered')
    t.strictSame(
      x.at(c.ms, c.input),
      [
        ...(c.legLive ? [{ type: 'stop_human_leg' }] : []),
        { type: 'stop_hold' },
        { type: 'return_to_agent', reason: c.reason },
        {
          type: 'report',
          fact: { type: 'transfer.failed', atMs: c.ms, reason: c.reason, phase: c.phase, answeredAtMs: answered ? 100 : undefined },
        },
      ],
      c.name,
    )
    t.equal(x.m.phase, 'failed')
    t.equal(x.m.failure, c.reason)
    t.equal(x.deadline(), undefined)
    t.strictSame(x.at(c.ms + 1, { type: 'dtmf', digits: '1' }), [], `${c.name}: nothing bridges after a failure`)
  }
})

t.test('the caller hanging up before the bridge: the human leg is stopped, nobody is returned to the agent', async (t) => {
  const x = machine()
  x.start()
  x.at(100, { type: 'progress', progress: 'ringing' })
  t.strictSame(x.at(4_000, { type: 'caller_hangup' }), [
    { type: 'stop_human_leg' },
    { type: 'stop_hold' },
    { type: 'report', fact: { type: 'transfer.failed', atMs: 4_000, reason: 'caller_hung_up', phase: 'ringing', answeredAtMs: undefined } },
  ])
})

t.test('the timeout follows the clock: a stale timer does nothing, the deadline runs from the start', async (t) => {
  const x = machine({ timeoutMs: 10_000 })
  t.equal(x.deadline(), undefined, 'no deadline before the start')
  x.start()
  t.equal(x.deadline(), 10_000)
  x.at(3_000, { type: 'progress', progress: 'answered' })
  t.equal(x.deadline(), 10_000, 'the whisper and the wait count too')
  t.strictSame(x.at(9_999, { type: 'timeout' }), [])
  t.equal(x.m.phase, 'whispering')
  t.match(x.at(10_000, { type: 'timeout' }), [
    { type: 'stop_human_leg' },
    { type: 'stop_hold' },
    { type: 'return_to_agent', reason: 'timeout' },
    {},
  ])
})

t.test('inputs that mean nothing in a phase are ignored', async (t) => {
  const x = machine()
  t.strictSame(x.m.handle({ type: 'progress', progress: 'answered' }), [], 'before the start')
  x.start()
  t.strictSame(x.at(10, { type: 'whisper_done' }), [], 'no whisper is playing')
  t.strictSame(x.at(10, { type: 'dtmf', digits: '1' }), [], 'a key before the answer')
  x.at(20, { type: 'progress', progress: 'answered' })
  t.strictSame(x.at(30, { type: 'progress', progress: 'answered' }), [], 'answered twice')
  t.strictSame(x.at(30, { type: 'progress', progress: 'ringing' }), [], 'ringing after the answer')
  t.strictSame(x.at(30, { type: 'progress', progress: 'busy' }), [], 'busy after the answer')
  t.equal(x.m.phase, 'whispering')
})

t.test('the failure reasons are the seven of the issue', async (t) => {
  t.strictSame([...TRANSFER_FAILURE_REASONS].sort(), ['busy', 'caller_hung_up', 'declined', 'failed', 'no_answer', 'timeout', 'voicemail'])
})
