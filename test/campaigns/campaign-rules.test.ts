import t from 'tap'
import {
  nextWindowOpening,
  parseClockTime,
  windowOpen,
  formatClockTime,
  isKnownTimeZone,
  msUntilWindowCloses,
} from '../../core/calling-window.js'
import { contactTimeZone } from '../../core/number-time-zone.js'
import { csvLine, parseCsv } from '../../core/csv.js'
import { attemptOutcome, nextStep } from '../../gateway/campaigns/attempt-outcome.js'
import { checkContacts, csvContacts } from '../../gateway/campaigns/contact-import.js'

const WEEKDAYS_9_TO_8 = { days: [1, 2, 3, 4, 5], startMinute: 9 * 60, endMinute: 20 * 60 }

t.test("a window is open by the callee's local clock, start inclusive, end exclusive", async (t) => {
  // Friday 13 March 2026, 13:00 UTC: 09:00 in New York (EDT since 8 March), 06:00 in Los Angeles.
  const at = new Date('2026-03-13T13:00:00Z')
  t.ok(windowOpen(WEEKDAYS_9_TO_8, 'America/New_York', at))
  t.notOk(windowOpen(WEEKDAYS_9_TO_8, 'America/Los_Angeles', at))
  t.notOk(windowOpen(WEEKDAYS_9_TO_8, 'America/New_York', new Date('2026-03-13T12:59:00Z')), 'a minute before 09:00')
  t.notOk(windowOpen(WEEKDAYS_9_TO_8, 'America/New_York', new Date('2026-03-14T00:00:00Z')), '20:00 is closed')
  t.notOk(windowOpen(WEEKDAYS_9_TO_8, 'Europe/London', new Date('2026-03-14T12:00:00Z')), 'Saturday')
  t.equal(msUntilWindowCloses(WEEKDAYS_9_TO_8, 'America/New_York', new Date('2026-03-13T23:58:30.250Z')), 89_750, 'to 20:00 local')
  t.equal(msUntilWindowCloses(WEEKDAYS_9_TO_8, 'America/Los_Angeles', at), 0, 'closed now')
})

t.test('the next opening, across a weekend and a daylight saving change', async (t) => {
  // Friday 6 March 2026, 21:00 in New York (EST); Monday 9 March opens at 09:00 EDT = 13:00 UTC.
  const at = new Date('2026-03-07T02:00:00Z')
  t.equal(nextWindowOpening(WEEKDAYS_9_TO_8, 'America/New_York', at)?.toISOString(), '2026-03-09T13:00:00.000Z')
  const open = new Date('2026-03-09T15:00:00Z')
  t.equal(nextWindowOpening(WEEKDAYS_9_TO_8, 'America/New_York', open), open, 'open now: now')
  t.equal(nextWindowOpening({ days: [], startMinute: 0, endMinute: 60 }, 'UTC', at), undefined)
  t.equal(
    nextWindowOpening({ days: [3], startMinute: 9 * 60 + 7, endMinute: 9 * 60 + 8 }, 'Asia/Kolkata', at)?.toISOString(),
    '2026-03-11T03:37:00.000Z',
    'to the minute, in a half-hour zone',
  )
})

t.test('clock times and zone names', async (t) => {
  t.equal(parseClockTime('09:30'), 570)
  t.equal(parseClockTime('24:00'), 1440)
  t.equal(parseClockTime('24:01'), undefined)
  t.equal(parseClockTime('9:30'), undefined)
  t.equal(formatClockTime(570), '09:30')
  t.ok(isKnownTimeZone('America/Chicago'))
  t.notOk(isKnownTimeZone('Mars/Olympus'))
  t.notOk(isKnownTimeZone(''))
})

t.test("a contact's zone: its own, else its country's only zone, else the campaign's default", async (t) => {
  t.same(contactTimeZone('GB', undefined, 'America/New_York'), { timeZone: 'Europe/London', source: 'number' })
  t.same(contactTimeZone('US', undefined, 'America/Chicago'), { timeZone: 'America/Chicago', source: 'default' })
  t.same(contactTimeZone('GB', 'Asia/Tokyo', 'UTC'), { timeZone: 'Asia/Tokyo', source: 'contact' })
  t.same(contactTimeZone(undefined, undefined, 'UTC'), { timeZone: 'UTC', source: 'default' })
})

t.test('CSV: quotes, doubled quotes, line breaks in fields, CRLF, a BOM; written back safe for spreadsheets', async (t) => {
  t.same(parseCsv('\ufeffa,b\r\n"x, y","say ""hi"""\n"two\nlines",\n'), [
    ['a', 'b'],
    ['x, y', 'say "hi"'],
    ['two\nlines', ''],
  ])
  t.same(parseCsv(''), [])
  t.equal(csvLine(['+14155550100', '=SUM(A1)', '-x', '-5', 'a"b', null, 3]), `+14155550100,'=SUM(A1),'-x,-5,"a""b",,3\r\n`)
})

t.test('outcomes from the ended session, and what follows under the retry policy', async (t) => {
  const base = { call_status: null, end_reason: null, answered_by: null, started_at: null, call_sid: 'CA1' }
  t.equal(attemptOutcome({ ...base, call_status: 'busy', end_reason: 'call_busy' }), 'busy')
  t.equal(attemptOutcome({ ...base, call_status: 'no-answer' }), 'no_answer')
  t.equal(attemptOutcome({ ...base, call_status: 'completed', started_at: new Date(), answered_by: 'machine_beep' }), 'machine')
  t.equal(attemptOutcome({ ...base, call_status: 'completed', started_at: new Date(), answered_by: 'human' }), 'answered')
  t.equal(attemptOutcome({ ...base, call_sid: null, end_reason: 'dial_queue_full' }), 'not_dialled')
  t.equal(attemptOutcome({ ...base, call_sid: null, end_reason: 'lease_expired' }), 'failed', 'a dead replica may have dialled')
  const policy = {
    busy: { max_attempts: 3, delay_seconds: 60 },
    no_answer: { max_attempts: 1, delay_seconds: 0 },
    failed: { max_attempts: 2, delay_seconds: 5 },
    machine: { max_attempts: 1, delay_seconds: 0 },
  }
  t.same(nextStep('busy', 2, policy), { done: false, delayMs: 60_000 })
  t.same(nextStep('busy', 3, policy), { done: true, disposition: 'busy' })
  t.same(nextStep('no_answer', 1, policy), { done: true, disposition: 'no_answer' })
  t.same(nextStep('answered', 1, policy), { done: true, disposition: 'answered' })
  t.same(nextStep('not_dialled', 0, policy), { done: false, delayMs: 5_000 })
})

t.test('a batch: every bad row reported with its number and why, the good ones kept', async (t) => {
  const checked = checkContacts(
    [
      { phone_number: '+44 20 7183 8751' },
      { phone_number: '0207 183 8751' },
      { phone_number: '+14155550100', timezone: 'Nowhere' },
      { phone_number: '+442071838751' },
      { phone_number: '+14155550101', custom_metadata: { big: 'x'.repeat(3000) } },
      null as never,
      { phone_number: '+14155550102', timezone: 'America/Denver', custom_metadata: { id: 7 } },
    ],
    'America/New_York',
  )
  t.same(
    checked.errors.map((e) => [e.row, e.error.split(' ')[0]]),
    [
      [2, 'phone_number'],
      [3, 'timezone'],
      [4, 'duplicate'],
      [5, 'custom_metadata'],
      [6, 'not'],
    ],
  )
  t.same(
    checked.contacts.map((c) => [c.row, c.phoneNumber, c.timezone]),
    [
      [1, '+442071838751', 'Europe/London'],
      [7, '+14155550102', 'America/Denver'],
    ],
  )
  t.same(csvContacts('name\nAnn\n'), { error: 'the CSV header has no phone_number column' })
})
