/**
 * `session.end` when the transcript cannot be read (the database unreachable at that moment): the event goes
 * without it, and the failure is logged with the session's id instead of being swallowed.
 */
import { Writable } from 'node:stream'
import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import t from 'tap'
import { createLogger } from '../../core/log.js'
import { transcriptForEnd } from '../../gateway/sessions/transcript/session-transcript.js'
import type { Database } from '../../gateway/store/schema.js'

t.test('an unreadable transcript is logged and comes back empty', async (t) => {
  const lines: Record<string, unknown>[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)))
      done()
    },
  })
  const log = createLogger('info', {}, sink)
  // Port 1 on loopback: nothing listens, the connection is refused at once.
  const db = new Kysely<Database>({
    dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://nobody@127.0.0.1:1/none', max: 1 }) }),
  })
  t.teardown(() => db.destroy())
  t.same(await transcriptForEnd(db, 'sess_unreadable', log), [])
  const line = lines.find((l) => l.session_id === 'sess_unreadable')
  t.ok(line, 'one line names the session')
  t.equal(line?.level, 50, 'at error level')
  t.match(String(line?.msg), /session\.end is sent without it/)
  t.match(JSON.stringify(line?.err), /ECONNREFUSED/, 'with the cause')
})
