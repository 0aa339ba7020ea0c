import t from 'tap'
import { UserTurn } from '../../pipeline/voice/user-turn.js'
import { Playback, heardText } from '../../pipeline/voice/playback.js'
import { BargeInGate, type HeardWords, NO_WORDS_GRACE_MS, NO_WORDS_RESUME_MS } from '../../pipeline/voice/barge-in.js'
import type { PipelineEvent } from '../../pipeline/voice/pipeline-io.js'

t.test('user transcript follows the delta_counter rules', async (t) => {
  const out: PipelineEvent[] = []
  const u = new UserTurn('user-1', 0, (e) => out.push(e))
  u.announce()
  out.length = 0
  u.addInterim('hel')
  u.addInterim('hello')
  u.addInterim('hello') // unchanged: not repeated
  u.addFinal('hello there')
  u.addInterim('how')
  u.addInterim('how are')
  u.addFinal('how are you')
  t.same(
    out.map((e) => [e.type, 'content' in e ? e.content : '', 'deltaCounter' in e ? e.deltaCounter : -1]),
    [
      ['user.transcript.interim_delta', 'hel', 0],
      ['user.transcript.interim_delta', 'hello', 0],
      ['user.transcript.delta', 'hello there', 0],
      ['user.transcript.interim_delta', 'how', 1],
      ['user.transcript.interim_delta', 'how are', 1],
      ['user.transcript.delta', 'how are you', 1],
    ],
    'interims replace within a counter; a delta stabilises it and the counter moves on',
  )
  t.equal(u.text(), 'hello there how are you')
  t.equal(u.wordCount, 5)
  t.equal(u.complete('Hello there, how are you?'), 'Hello there, how are you?', 'a fuller vendor text wins')
  t.equal(u.complete('hi'), 'hello there how are you', 'a shorter vendor text does not')
  u.announce()
  t.equal(out.filter((e) => e.type === 'turn.start').length, 0, 'announced once (at the start)')
  u.restart()
  t.equal(u.text(), '', 'a vendor reconnect restarts the segments')
})

t.test('a user turn says nothing before its turn.start, then everything it heard, with the same counters', async (t) => {
  const out: PipelineEvent[] = []
  const u = new UserTurn('user-2', 0, (e) => out.push(e))
  u.addInterim('when')
  u.addFinal('when does it')
  u.addInterim('ship')
  t.same(out, [], 'nothing while the turn is not announced (a browser SDK stops playback on a user turn.start)')
  t.equal(u.text(), 'when does it ship', 'the words are kept')
  u.announce()
  t.same(
    out.map((e) => [e.type, 'content' in e ? e.content : '', 'deltaCounter' in e ? e.deltaCounter : -1]),
    [
      ['turn.start', '', -1],
      ['user.transcript.delta', 'when does it', 0],
      ['user.transcript.interim_delta', 'ship', 1],
    ],
  )
  u.addFinal('ship tomorrow')
  t.same(out.at(-1), { type: 'user.transcript.delta', turnId: 'user-2', content: 'ship tomorrow', deltaCounter: 1 }, 'then live')
})

t.test('playback: a report can only cover what real time allows', async (t) => {
  const p = new Playback(false)
  p.sent(1, 1_000, 0)
  p.sent(2, 1_000, 0)
  p.playedAtLeast(300)
  t.equal(p.heardMs(0), 300, 'credited the 300 ms that could have played')
  p.playedAtLeast(5_000)
  t.equal(p.heardMs(0), 2_000, 'never more than was sent')
  p.playedAtLeast(100)
  t.equal(p.heardMs(0), 2_000, 'never less than before')
})

t.test('playback: marks are exact, browsers are estimated by the clock', async (t) => {
  const carrier = new Playback(true)
  carrier.sent(5, 100, 0)
  carrier.sent(6, 100, 0)
  carrier.sent(7, 100, 0)
  t.equal(carrier.heardMs(10_000), 0, 'nothing heard until a mark returns, whatever the clock says')
  t.notOk(carrier.markPlayed(4), "a late mark of an earlier turn is not this turn's")
  t.equal(carrier.heardMs(0), 0, 'and changes nothing')
  t.ok(carrier.markPlayed(6))
  t.equal(carrier.heardMs(0), 200, 'marks are cumulative: chunk 6 heard means 5 and 6')
  t.notOk(carrier.isDone(0))
  carrier.markPlayed(7)
  t.ok(carrier.isDone(0))
  const browser = new Playback(false)
  browser.sent(1, 1000, 0)
  t.equal(browser.heardMs(400), 400, 'real time from the first chunk')
  t.equal(browser.heardMs(5000), 1000, 'never more than was sent')
  browser.allPlayed()
  t.ok(browser.isDone(0))
})

t.test('heard text is a whole-word prefix in proportion to what was heard', async (t) => {
  const text = 'one two three four five six seven eight nine ten'
  t.equal(heardText(text, 0, 1000), '')
  t.equal(heardText(text, 1000, 1000), text)
  t.equal(heardText(text, 500, 1000), 'one two three four five', 'half of 48 characters ends right after "five "')
  t.equal(heardText(text, 450, 1000), 'one two three four', 'a word cut in the middle is dropped')
  t.ok(text.startsWith(heardText(text, 300, undefined)), 'estimated while audio is still coming')
  t.equal(heardText(text, 65 * 9, undefined), 'one two', 'about 65 ms per character, cut back to a word')
})

t.test('barge-in gate: short speech never interrupts, long enough speech does, words can be required', async (t) => {
  let interrupts = 0
  let words = 0
  const gate = new BargeInGate(
    { allowInterruptions: true, minInterruptionMs: 40, minInterruptionWords: 0, readWords: false },
    () => interrupts++,
    () => ({ count: words, kind: 'words' }),
  )
  gate.speechStarted(0, true)
  gate.speechEnded()
  await new Promise((r) => setTimeout(r, 60))
  t.equal(interrupts, 0, 'a cough that ends before min_interruption_ms does not interrupt')
  gate.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, 60))
  t.equal(interrupts, 1, 'speech that lasts interrupts')
  gate.reset()
  gate.speechStarted(0, false)
  await new Promise((r) => setTimeout(r, 60))
  t.equal(interrupts, 1, 'not while interruptions are not allowed (e.g. the welcome)')

  const wordy = new BargeInGate(
    { allowInterruptions: true, minInterruptionMs: 20, minInterruptionWords: 2, readWords: false },
    () => interrupts++,
    () => ({ count: words, kind: 'words' }),
  )
  wordy.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, 40))
  t.equal(interrupts, 1, 'long enough but too few words')
  words = 2
  wordy.wordsChanged()
  t.equal(interrupts, 2, 'the words arrived: interrupt')
  const off = new BargeInGate(
    { allowInterruptions: false, minInterruptionMs: 0, minInterruptionWords: 0, readWords: false },
    () => interrupts++,
    () => ({ count: 9, kind: 'words' }),
  )
  off.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, 20))
  t.equal(interrupts, 2, 'allow_interruptions false: never')
})

t.test('barge-in gate reading words: a backchannel holds, other words interrupt, late words still decide', async (t) => {
  let interrupts = 0
  let heard: HeardWords = { count: 0, kind: 'nothing' }
  const gate = new BargeInGate(
    { allowInterruptions: true, minInterruptionMs: 20, minInterruptionWords: 0, readWords: true },
    () => interrupts++,
    () => heard,
  )
  gate.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, 40))
  t.equal(interrupts, 0, 'long enough, but no words yet: it waits for them')
  heard = { count: 1, kind: 'backchannel' }
  gate.wordsChanged()
  t.equal(interrupts, 0, '"uh-huh" does not interrupt')
  heard = { count: 3, kind: 'words' }
  gate.wordsChanged()
  t.equal(interrupts, 1, '"uh-huh, wait, no" does')

  gate.reset()
  heard = { count: 0, kind: 'nothing' }
  gate.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, 40))
  gate.speechEnded()
  heard = { count: 1, kind: 'words' }
  gate.wordsChanged()
  t.equal(interrupts, 2, 'words of a long-enough segment that come after it ended still interrupt ("stop")')

  gate.reset()
  heard = { count: 0, kind: 'nothing' }
  gate.speechStarted(0, true)
  gate.speechEnded()
  heard = { count: 1, kind: 'words' }
  gate.wordsChanged()
  t.equal(interrupts, 2, 'a segment shorter than min_interruption_ms never interrupts, whatever its words')
  gate.reset()
})

t.test('barge-in gate reading words: speech with no words for long interrupts anyway', async (t) => {
  let interrupts = 0
  const gate = new BargeInGate(
    { allowInterruptions: true, minInterruptionMs: 0, minInterruptionWords: 0, readWords: true },
    () => interrupts++,
    () => ({ count: 0, kind: 'nothing' }),
  )
  gate.speechStarted(0, true)
  await new Promise((r) => setTimeout(r, NO_WORDS_GRACE_MS / 2))
  t.equal(interrupts, 0, 'still waiting for words')
  await new Promise((r) => setTimeout(r, NO_WORDS_GRACE_MS / 2 + 100))
  t.equal(interrupts, 1, `after ${NO_WORDS_GRACE_MS} ms more of speech with no word: long speech is no backchannel`)
})

/** A gate reading words with a playout hold, recording what it did to the reply in order. */
function heldGate(minInterruptionMs = 20) {
  const did: string[] = []
  const state = { heard: { count: 0, kind: 'nothing' } as HeardWords }
  const gate = new BargeInGate(
    { allowInterruptions: true, minInterruptionMs, minInterruptionWords: 0, readWords: true },
    () => did.push('interrupt'),
    () => state.heard,
    { pause: () => did.push('pause'), resume: () => did.push('resume') },
  )
  return { gate, did, state }
}

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms))

t.test('barge-in gate with a playout hold: paused at min_interruption_ms, then the words decide', async (t) => {
  const stop = heldGate()
  stop.gate.speechStarted(0, true)
  await wait(10)
  t.same(stop.did, [], 'shorter than min_interruption_ms: the reply plays on')
  await wait(30)
  t.same(stop.did, ['pause'], 'min_interruption_ms of speech, no words yet: paused at once')
  stop.state.heard = { count: 1, kind: 'words' }
  stop.gate.wordsChanged()
  t.same(stop.did, ['pause', 'interrupt'], '"stop": the paused reply is interrupted (no resume in between)')
  stop.gate.reset()
  t.same(stop.did, ['pause', 'interrupt'], 'nothing left to resume')

  const bc = heldGate()
  bc.gate.speechStarted(0, true)
  await wait(40)
  bc.state.heard = { count: 1, kind: 'backchannel' }
  bc.gate.wordsChanged()
  t.same(bc.did, ['pause'], '"mm-hm" while the caller still speaks: still paused')
  bc.gate.speechEnded()
  t.same(bc.did, ['pause', 'resume'], 'the speech ended as a backchannel: resumed')
  bc.gate.speechStarted(0, true)
  await wait(40)
  t.same(bc.did, ['pause', 'resume', 'pause'], 'new speech after it is a segment of its own: paused again')
  bc.state.heard = { count: 2, kind: 'backchannel' }
  bc.gate.wordsChanged()
  bc.gate.speechEnded()
  t.same(bc.did, ['pause', 'resume', 'pause', 'resume'], '"mm-hm, yeah": resumed again')

  const late = heldGate()
  late.gate.speechStarted(0, true)
  await wait(40)
  late.gate.speechEnded()
  late.state.heard = { count: 1, kind: 'backchannel' }
  late.gate.wordsChanged()
  t.same(late.did, ['pause', 'resume'], 'a backchannel whose words come after the speech ended: resumed when they come')
})

t.test('barge-in gate with a playout hold: speech that never yields words resumes, a closing turn resumes', async (t) => {
  const cough = heldGate()
  cough.gate.speechStarted(0, true)
  await wait(40)
  cough.gate.speechEnded()
  await wait(NO_WORDS_RESUME_MS / 2)
  t.same(cough.did, ['pause'], 'still waiting for words a little after the speech')
  await wait(NO_WORDS_RESUME_MS / 2 + 60)
  t.same(cough.did, ['pause', 'resume'], `no word ${NO_WORDS_RESUME_MS} ms after the speech ended (a cough): resumed`)
  cough.state.heard = { count: 1, kind: 'words' }
  cough.gate.wordsChanged()
  t.same(cough.did, ['pause', 'resume', 'interrupt'], 'words that come later still interrupt')

  const more = heldGate()
  more.gate.speechStarted(0, true)
  await wait(40)
  more.gate.speechEnded()
  more.gate.speechStarted(0, true)
  await wait(NO_WORDS_RESUME_MS + 60)
  t.same(more.did, ['pause'], 'speech again before the bound: one decision, still paused')
  more.gate.reset()
  t.same(more.did, ['pause', 'resume'], 'the reply ended (or another began): whatever was paused resumes')

  const short = heldGate(60)
  short.gate.speechStarted(0, true)
  await wait(20)
  short.gate.speechEnded()
  await wait(60)
  t.same(short.did, [], 'a segment shorter than min_interruption_ms never pauses')
})
