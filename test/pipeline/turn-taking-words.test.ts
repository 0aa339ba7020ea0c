import t from 'tap'
import { turnManagerOptionsSchema } from '../../pipeline/options/turn-manager-options.js'
import { BackchannelList, DEFAULT_BACKCHANNELS } from '../../pipeline/turn-rules/backchannels.js'
import { TurnEndJudge, type TurnEndReason } from '../../pipeline/turn-rules/turn-end-judge.js'
import type { UserEnd } from '../../pipeline/voice/assistant-turn.js'
import { TurnTaking } from '../../pipeline/voice/turn-taking.js'

// Turn taking with the word rules, driven by STT events as any recognizer gives them (no audio, no vendor): the
// waits are shortened so the test runs in well under a second.
const WAITS = { baseMs: 150, minMs: 20, maxMs: 400 }

function world(options: { replying?: boolean } = {}) {
  const committed: { text: string; reason: TurnEndReason | undefined; at: number }[] = []
  let stopped = 0
  /** What happened to the reply's playout, in order. */
  const playout: ('pause' | 'resume' | 'stop')[] = []
  const replying = { on: options.replying ?? false }
  const tm = turnManagerOptionsSchema.parse({})
  const turns = new TurnTaking({
    turnManager: { ...tm, base_timeout_ms: WAITS.baseMs, min_interruption_ms: 10 },
    words: { judge: new TurnEndJudge(WAITS, 'US'), backchannels: BackchannelList.forLanguage(DEFAULT_BACKCHANNELS, 'en') },
    sttTurns: false,
    stt: { closed: false, finalize() {}, pushAudio() {}, close: async () => {}, [Symbol.asyncIterator]: undefined as never },
    replies: {
      active: () => replying.on,
      canInterrupt: () => true,
      stop: (announce) => {
        stopped++
        playout.push('stop')
        replying.on = false
        announce()
      },
      pause: () => playout.push('pause'),
      resume: () => {
        if (playout.at(-1) === 'pause') playout.push('resume')
      },
      committed: (_turn, text, userEnd: UserEnd) => committed.push({ text, reason: userEnd.reason, at: performance.now() }),
    },
    caller: () => undefined,
    emit: () => undefined,
    hooks: { turnCompleted: () => undefined, userActivity: () => undefined, usage: () => undefined },
    logger: { debug() {}, info() {}, warn() {}, error() {} },
    notice: () => undefined,
    now: () => performance.now(),
  })
  return { turns, committed, stopped: () => stopped, replying, playout }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test("an unfinished number outlasts the vendor's end of turn; the rest of it ends the turn", async (t) => {
  const w = world()
  w.turns.speechStarted()
  w.turns.onSttEvent({ type: 'final', text: 'my card number is four five three two' })
  w.turns.speechEnded()
  w.turns.onSttEvent({ type: 'end_of_turn', text: 'my card number is four five three two' })
  await sleep(WAITS.baseMs + 50)
  t.same(w.committed, [], 'not ended by the vendor, nor after the base wait')
  w.turns.speechStarted()
  w.turns.onSttEvent({ type: 'final', text: 'zero one five one one two eight three zero three six six' })
  w.turns.speechEnded()
  await sleep(WAITS.minMs + 30)
  t.match(w.committed, [
    { text: 'my card number is four five three two zero one five one one two eight three zero three six six', reason: 'complete_number' },
  ])
  w.turns.close()
})

t.test('an unfinished number alone ends after max_timeout_ms, saying why', async (t) => {
  const w = world()
  w.turns.speechStarted()
  w.turns.onSttEvent({ type: 'final', text: 'my number is four one five' })
  const ended = performance.now()
  w.turns.speechEnded()
  await sleep(WAITS.maxMs + 60)
  t.match(w.committed, [{ text: 'my number is four one five', reason: 'extended: incomplete_number' }])
  t.ok(w.committed[0]!.at - ended >= WAITS.maxMs - 5, `ended ${Math.round(w.committed[0]!.at - ended)} ms after the speech`)
  w.turns.close()
})

t.test('a short complete answer ends after min_timeout_ms when the vendor says nothing', async (t) => {
  const w = world()
  w.turns.speechStarted()
  w.turns.onSttEvent({ type: 'final', text: 'Yes.' })
  w.turns.speechEnded()
  await sleep(WAITS.minMs + 40)
  t.match(w.committed, [{ text: 'Yes.', reason: 'complete_answer' }])
  w.turns.close()
})

t.test('a backchannel over the reply neither stops it nor becomes a turn; an interruption does both', async (t) => {
  const w = world({ replying: true })
  w.turns.speechStarted()
  await sleep(30)
  w.turns.onSttEvent({ type: 'interim', text: 'uh-huh' })
  w.turns.speechEnded()
  w.turns.onSttEvent({ type: 'final', text: 'uh-huh' })
  w.turns.onSttEvent({ type: 'end_of_turn', text: 'uh-huh' })
  t.equal(w.stopped(), 0, 'the reply goes on')
  t.same(w.committed, [], 'and "uh-huh" is not answered')
  w.turns.resetBargeIn()
  w.turns.speechStarted()
  await sleep(30)
  w.turns.onSttEvent({ type: 'interim', text: 'no wait' })
  t.equal(w.stopped(), 1, '"no wait" stops the reply')
  w.turns.speechEnded()
  w.turns.onSttEvent({ type: 'final', text: 'no wait' })
  w.turns.onSttEvent({ type: 'end_of_turn', text: 'no wait' })
  t.match(w.committed, [{ text: 'no wait', reason: 'vendor_end_of_turn' }])
  w.turns.close()
})

t.test('caller speech over the reply pauses it at once; the words decide between resuming and stopping', async (t) => {
  const w = world({ replying: true })
  w.turns.speechStarted()
  await sleep(30)
  t.same(w.playout, ['pause'], 'min_interruption_ms of speech with no words yet: the reply pauses')
  w.turns.onSttEvent({ type: 'interim', text: 'no' })
  t.same(w.playout, ['pause', 'stop'], 'words that are not a backchannel stop it')
  w.turns.close()

  const bc = world({ replying: true })
  bc.turns.speechStarted()
  await sleep(30)
  bc.turns.onSttEvent({ type: 'interim', text: 'uh-huh' })
  t.same(bc.playout, ['pause'], 'a backchannel while the caller still speaks: still paused (it may be "uh-huh, but...")')
  bc.turns.speechEnded()
  t.same(bc.playout, ['pause', 'resume'], 'the speech ended as a backchannel: the reply plays on')
  bc.turns.onSttEvent({ type: 'final', text: 'uh-huh' })
  bc.turns.onSttEvent({ type: 'end_of_turn', text: 'uh-huh' })
  t.same(bc.committed, [], 'and it is not a turn')
  bc.turns.close()

  const but = world({ replying: true })
  but.turns.speechStarted()
  await sleep(30)
  but.turns.onSttEvent({ type: 'interim', text: 'yeah' })
  but.turns.onSttEvent({ type: 'interim', text: 'yeah but' })
  t.same(but.playout, ['pause', 'stop'], '"yeah, but..." stops the reply it paused')
  but.turns.close()
})
