// The console's pure parts, run in Node: what a failed or unmeasured turn says, and the calls list's hash state.
import t from 'tap'
import { turnNote } from '../console/turn-notes.js'
import { turnEndInWords } from '../console/turn-end.js'
import { transferSteps } from '../console/transfers.js'
import { callsHash, endedListPath, liveListPath, parseCallsFilter } from '../console/calls-filter.js'
import { END_REASONS, type LatencyStage, type TranscriptEntry, type TurnFailure } from '../console/types.js'
import { END_REASONS as SERVER_END_REASONS } from '../../core/end-reason.js'

const STAGES: LatencyStage[] = [
  { name: 'user_speech_end', at_ms: 0, duration_ms: 0 },
  { name: 'transcript_final', at_ms: 180, duration_ms: 180 },
  { name: 'first_audio_heard', at_ms: 900, duration_ms: 720 },
]

function turn(over: Partial<TranscriptEntry>): TranscriptEntry {
  return {
    timestamp: '2026-11-25T10:00:00.000Z',
    user_message: 'what are your opening hours',
    assistant_message: null,
    latency_ms: null,
    latency_breakdown: null,
    failure: null,
    ...over,
  }
}

function failed(f: Partial<TurnFailure>, over: Partial<TranscriptEntry> = {}): TranscriptEntry {
  return turn({ failure: { cause: 'timeout', waited_ms: 0, heard: null, detail: null, ...f }, ...over })
}

t.test('a failed turn: the cause in words, how long the caller waited and what they heard', async (t) => {
  const cases: [TranscriptEntry, string][] = [
    [
      failed(
        { cause: 'http_500', waited_ms: 2400, heard: 'Sorry, something went wrong.' },
        { assistant_message: 'Sorry, something went wrong.' },
      ),
      "backend answered HTTP 500 · caller waited 2.4 s, heard: 'Sorry, something went wrong.'",
    ],
    [failed({ cause: 'http_404', waited_ms: 350 }), 'backend answered HTTP 404 · caller waited 0.4 s in silence'],
    [
      failed({ cause: 'timeout', waited_ms: 3900, detail: 'no reply in 3000 ms', heard: 'Sorry, ...' }),
      "backend timed out (no reply in 3.0 s) · caller waited 3.9 s, heard: 'Sorry, ...'",
    ],
    [failed({ cause: 'timeout', waited_ms: 5000 }), 'backend timed out · caller waited 5.0 s in silence'],
    [failed({ cause: 'connect_refused', waited_ms: 12 }), 'backend refused the connection · caller waited 0.0 s in silence'],
    [
      failed({ cause: 'connect_failed', waited_ms: 1500, detail: 'getaddrinfo ENOTFOUND backend.example' }),
      'could not connect to the backend (getaddrinfo ENOTFOUND backend.example) · caller waited 1.5 s in silence',
    ],
    [
      failed({ cause: 'invalid_stream', waited_ms: 800, detail: 'event 2 is not JSON' }),
      'backend sent an invalid reply stream (event 2 is not JSON) · caller waited 0.8 s in silence',
    ],
    [failed({ cause: 'stream_broken', waited_ms: 1200 }), 'backend reply stream broke off · caller waited 1.2 s in silence'],
    [failed({ cause: 'empty_reply', waited_ms: 640 }), 'backend replied with nothing to say · caller waited 0.6 s in silence'],
    [
      failed({ cause: 'tts_failed', waited_ms: 2000, detail: 'HTTP 401 from the TTS vendor' }),
      'text-to-speech failed (HTTP 401 from the TTS vendor) · caller waited 2.0 s in silence',
    ],
    [
      failed({ cause: 'backend_error', waited_ms: 700, detail: 'quota exceeded', heard: 'Sorry.' }),
      "backend reported an error (quota exceeded) · caller waited 0.7 s, heard: 'Sorry.'",
    ],
    [
      failed({ cause: 'timeout', waited_ms: 3100, detail: 'no speakable reply within 3000 ms' }),
      'backend timed out (no speakable reply within 3.0 s) · caller waited 3.1 s in silence',
    ],
    [failed({ cause: 'something_new', waited_ms: 100 }), 'failed: something_new · caller waited 0.1 s in silence'],
  ]
  for (const [entry, text] of cases) {
    const note = turnNote(entry)
    t.equal(note?.kind, 'failed', entry.failure?.cause)
    t.equal(note?.text, text, entry.failure?.cause)
    t.notMatch(note?.text ?? '', /no latency/, 'never "no latency"')
  }
})

t.test('a failed turn with stages (its fallback was timed) is still a failure, not a plain waterfall', async (t) => {
  const note = turnNote(
    failed({ cause: 'http_502', waited_ms: 900, heard: 'One moment.' }, { latency_ms: 900, latency_breakdown: { stages: STAGES } }),
  )
  t.equal(note?.kind, 'failed')
  t.equal(note?.cause, 'backend answered HTTP 502')
  t.equal(note?.waited, "caller waited 0.9 s, heard: 'One moment.'")
})

t.test('long texts are cut, whitespace folded', async (t) => {
  const note = turnNote(failed({ cause: 'http_500', waited_ms: 1000, heard: 'a\n  b', detail: 'x'.repeat(500) }))
  t.equal(note?.waited, "caller waited 1.0 s, heard: 'a b'")
  t.equal(note?.cause, `backend answered HTTP 500 (${'x'.repeat(160)}…)`)
})

t.test('a good turn has no note; a turn without latency says why', async (t) => {
  t.equal(turnNote(turn({ assistant_message: 'We open at nine.', latency_ms: 900, latency_breakdown: { stages: STAGES } })), null)
  t.same(turnNote(turn({ user_message: null, assistant_message: 'Hello, how can I help?' })), {
    kind: 'unmeasured',
    cause: 'agent spoke first (welcome): no caller turn to time',
    text: 'agent spoke first (welcome): no caller turn to time',
  })
  t.equal(
    turnNote(turn({ assistant_message: null }))?.cause,
    'no reply: the call ended, or the caller spoke again, before the agent answered',
  )
  t.equal(turnNote(turn({ assistant_message: 'Hm.' }))?.cause, 'no latency measured for this turn')
  const older = turn({ assistant_message: null })
  delete older.failure
  t.equal(turnNote(older)?.kind, 'unmeasured', 'a gateway without the failure field: read as no failure')
})

t.test("the console's end reasons are the server's", async (t) => {
  t.same([...END_REASONS], [...SERVER_END_REASONS])
})

t.test('the calls list state: from the hash, to the hash, to the API', async (t) => {
  const plain = parseCallsFilter(new URLSearchParams(''))
  t.same(plain, { q: '', outcome: '', limit: 50, cursor: undefined })
  t.equal(callsHash(plain), '#/sessions')
  t.equal(liveListPath(plain), '/v1/sessions?status=live&limit=100')
  t.equal(endedListPath(plain), '/v1/sessions?status=ended&limit=50')

  const f = parseCallsFilter(new URLSearchParams('q=%2B1%20555&outcome=call_busy&limit=25&cursor=abc'))
  t.same(f, { q: '+1 555', outcome: 'call_busy', limit: 25, cursor: 'abc' })
  t.same(parseCallsFilter(new URLSearchParams(callsHash(f).split('?')[1])), f, 'the hash round-trips')
  t.equal(liveListPath(f), undefined, 'an end reason leaves live calls out')
  t.equal(endedListPath(f), '/v1/sessions?status=ended&limit=25&end_reason=call_busy&q=%2B1+555&cursor=abc')

  const live = parseCallsFilter(new URLSearchParams('outcome=live&q=sales'))
  t.equal(endedListPath(live), undefined, 'live only: no ended list')
  t.equal(liveListPath(live), '/v1/sessions?status=live&limit=100&q=sales')
  t.equal(endedListPath(parseCallsFilter(new URLSearchParams('outcome=ended'))), '/v1/sessions?status=ended&limit=50')
  const failed = parseCallsFilter(new URLSearchParams('outcome=failed'))
  t.equal(liveListPath(failed), '/v1/sessions?status=live&limit=100&failed_turns=true', 'failed turns: live ones too')
  t.equal(endedListPath(failed), '/v1/sessions?status=ended&limit=50&failed_turns=true')

  t.same(
    parseCallsFilter(new URLSearchParams('outcome=bogus&limit=7&cursor=')),
    plain,
    'unknown values in a hand-edited link fall back to the defaults',
  )
})

t.test("a warm transfer's steps: answered and connected, failed with its reason and phase, or under way", async (t) => {
  const started_at = '2026-11-27T10:00:00.000Z'
  const connected = transferSteps({ mode: 'warm', to: '+15550001111', started_at, answered_after_ms: 2_140, connected_after_ms: 5_310 })
  t.same(connected.slice(1), ['answered after 2.1 s', 'connected after 5.3 s'])
  t.match(connected[0], /^started /)
  const declined = transferSteps({
    mode: 'warm',
    to: '+15550001111',
    started_at,
    answered_after_ms: 1_000,
    failed_after_ms: 9_000,
    failed_reason: 'declined',
    failed_in: 'awaiting_acceptance',
  })
  t.same(declined.slice(1), ['answered after 1.0 s', 'failed after 9.0 s: declined (awaiting_acceptance)'])
  t.same(transferSteps({ mode: 'warm', to: 'sip:desk@pbx.example', started_at }).slice(1), ['under way'])
})

t.test("why a caller's turn ended, in words", async (t) => {
  t.equal(turnEndInWords('complete_answer'), 'a complete short answer: ended soon after')
  t.equal(turnEndInWords('extended: incomplete_number'), 'waited longer: the number was not complete yet')
  t.equal(turnEndInWords('extended: filler'), 'waited longer: the caller stopped on "um" or "let me see"')
  t.equal(turnEndInWords('extended: something_new'), 'waited longer: something_new', 'a reason the console does not know yet')
  t.equal(turnEndInWords('vendor_end_of_turn'), "the speech recognizer's end of turn")
})
