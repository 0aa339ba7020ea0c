// The import checker itself, on small in-memory trees: each rule must fire, a clean tree must pass.
import t from 'tap'
import {
  checkFileShapes,
  checkImports,
  importSpecifiers,
  isCodec,
  lineCount,
  partOf,
  type RuleName,
  type Violation,
} from './check-imports.js'
import { ARCHITECTURE, type Architecture } from './rules.js'

/** A tree from `path: source` pairs. */
const tree = (sources: Record<string, string>) => new Map(Object.entries(sources))

/** The violations of one rule, messages only. */
const of = (violations: Violation[], rule: RuleName) => violations.filter((v) => v.rule === rule).map((v) => v.message)

/** A tree that obeys every rule; the cases below add one wrong file or import to it. */
const clean = {
  'core/errors.ts': `export class AppError extends Error {}`,
  'pipeline/audio/pcm16.ts': `import { cpus } from 'node:os'\nexport const n = cpus().length`,
  'pipeline/session/voice-pipeline.ts': `import { n } from '../audio/pcm16.js'\nimport WebSocket from 'ws'\nexport { n, WebSocket }`,
  'pipeline/index.ts': `export * from './session/voice-pipeline.js'`,
  'gateway/store/schema.ts': `import type { Kysely } from 'kysely'\nimport { AppError } from '../../core/errors.js'`,
  'gateway/sessions/call-session.ts': `import '../store/schema.js'\nimport '../../pipeline/index.js'`,
  'carrier/carrier.ts': `export interface Carrier { name: string }`,
  'carrier/twilio/media-codec.ts': `import type { Carrier } from '../carrier.js'`,
  'transports/media-stream/transport.ts': `import type { Carrier } from '../../carrier/carrier.js'\nimport '../../gateway/sessions/call-session.js'`,
  'api/routes/calls.ts': `import type { Carrier } from '../../carrier/carrier.js'\nimport '../../gateway/store/schema.js'`,
  'server/config.ts': `export const port = 3000`,
  'server/app.ts': `import '../api/routes/calls.js'\nimport '../carrier/twilio/media-codec.js'\nimport '../transports/media-stream/transport.js'\nimport './config.js'`,
  'cli/serve.ts': `import '../server/app.js'\nimport '../gateway/store/schema.js'`,
}

t.test('a clean tree passes', async (t) => {
  t.same(checkImports(tree(clean)), [])
})

t.test('reads every import form', async (t) => {
  const text = [
    `import a from './a.js'`,
    `import type { B } from './b.js'`,
    `export * from './c.js'`,
    `export { d } from './d.js'`,
    `import './e.js'`,
    `const f = await import('./f.js')`,
    `type G = import('./g.js').G`,
  ].join('\n')
  t.same(importSpecifiers(text).sort(), ['./a.js', './b.js', './c.js', './d.js', './e.js', './f.js', './g.js'])
})

t.test('maps files to parts', async (t) => {
  t.equal(partOf('server/app.ts'), 'server')
  t.equal(partOf('transports/browser/browser-transport.ts'), 'transports/browser')
  t.equal(partOf('gateway/sessions/call-session.ts'), 'gateway/sessions')
  t.equal(partOf('gateway/store/migrations/0001-initial.ts'), 'gateway/store')
  t.equal(partOf('carrier/twilio/markup.ts'), 'carrier')
  t.equal(partOf('gateway/unknown/x.ts'), undefined, 'a new gateway folder is not silently part of another')
  t.equal(partOf('gateway/app.ts'), undefined, 'nothing lives directly in gateway/: the wiring is server/')
  t.ok(isCodec('pipeline/agent/sse-decoder.ts'))
  t.ok(isCodec('carrier/telnyx/telnyx-codec.ts'), 'any *-codec.ts')
  t.ok(isCodec('pipeline/media/audio/mixer.ts'), 'any file in an audio/ folder of pipeline/')
  t.ok(isCodec('carrier/moved/markup.ts'), 'listed names wherever they move')
  t.notOk(isCodec('pipeline/session/voice-pipeline.ts'))
})

t.test('a pipeline file importing the wiring', async (t) => {
  const found = checkImports(tree({ ...clean, 'pipeline/turn/x.ts': `import { port } from '../../server/config.js'` }))
  t.same(of(found, 'parts'), [
    `pipeline/turn/x.ts imports '../../server/config.js' (server/config.ts): pipeline may import nothing outside itself; not server`,
  ])
})

t.test('carrier importing api or the store, api importing a carrier folder', async (t) => {
  const found = checkImports(
    tree({
      ...clean,
      'carrier/twilio/hook.ts': `import '../../api/routes/calls.js'\nimport '../../gateway/store/schema.js'`,
      'api/routes/dial.ts': `import '../../carrier/twilio/media-codec.js'`,
    }),
  )
  t.matchOnly(of(found, 'parts'), [
    /^api\/routes\/dial.ts imports '..\/..\/carrier\/twilio\/media-codec.js' .*not carrier \(of carrier, only carrier\/carrier.ts\)$/,
    /^carrier\/twilio\/hook.ts imports '..\/..\/api\/routes\/calls.js' .*not api$/,
    /^carrier\/twilio\/hook.ts imports '..\/..\/gateway\/store\/schema.js' .*not gateway\/store$/,
  ])
  t.matchOnly(of(found, 'door'), [
    /^api\/routes\/dial.ts imports .* outside carrier\/ and server\/, carrier\/carrier.ts is the only door into carrier\/$/,
  ])
  t.matchOnly(of(found, 'part-cycle'), [/^parts import each other: api -> carrier -> api /])
})

t.test('a codec reaching node:net through a helper', async (t) => {
  const found = checkImports(
    tree({
      ...clean,
      'carrier/twilio/media-codec.ts': `import { send } from './helper.js'`,
      'carrier/twilio/helper.ts': `import { connect } from 'net'\nimport { readFile } from 'node:fs/promises'`,
      'pipeline/audio/wav.ts': `const ws = await import('ws')`,
    }),
  )
  t.same(of(found, 'codec-io'), [
    `carrier/twilio/media-codec.ts is a codec and reaches node:net: carrier/twilio/media-codec.ts -> carrier/twilio/helper.ts -> 'net'`,
    `carrier/twilio/media-codec.ts is a codec and reaches node:fs: carrier/twilio/media-codec.ts -> carrier/twilio/helper.ts -> 'node:fs/promises'`,
    `pipeline/audio/wav.ts is a codec and reaches ws: pipeline/audio/wav.ts -> 'ws'`,
  ])
})

t.test('type-only imports carry no I/O into a codec; a value import of the same module does', async (t) => {
  const found = checkImports(
    tree({
      ...clean,
      'carrier/twilio/media-codec.ts': `import type { Send } from './helper.js'\nimport type {\n  WebSocket,\n} from 'ws'`,
      'carrier/twilio/helper.ts': `import { connect } from 'net'`,
      'pipeline/audio/wav.ts': `import type { Send } from '../../carrier/twilio/helper.js'\nimport { x } from './pcm.js'`,
      'pipeline/audio/pcm.ts': `export type { Sock } from 'node:net'\nimport { connect } from 'node:net'`,
    }),
  )
  t.same(of(found, 'codec-io'), [
    `pipeline/audio/pcm.ts is a codec and reaches node:net: pipeline/audio/pcm.ts -> 'node:net'`,
    `pipeline/audio/wav.ts is a codec and reaches node:net: pipeline/audio/wav.ts -> pipeline/audio/pcm.ts -> 'node:net'`,
  ])
})

t.test('a two-folder cycle', async (t) => {
  const found = checkImports(
    tree({
      ...clean,
      'pipeline/turn/user-turn.ts': `import '../session/voice-pipeline.js'`,
      'pipeline/session/replies.ts': `import '../turn/user-turn.js'`,
    }),
  )
  t.same(of(found, 'folder-cycle'), [
    `folders import each other: pipeline/session -> pipeline/turn -> pipeline/session ` +
      `(pipeline/session/replies.ts imports '../turn/user-turn.js'; pipeline/turn/user-turn.ts imports '../session/voice-pipeline.js')`,
  ])
  t.same(of(found, 'parts'), [], 'inside one part the arrows are free, the cycle is not')
})

t.test('a file left behind by a move, a file in no part', async (t) => {
  const found = checkImports(tree({ ...clean, 'gateway/sessions/x.ts': `import './moved-away.js'`, 'gateway/jobs/y.ts': '' }))
  t.matchOnly(of(found, 'unresolved'), [/^gateway\/sessions\/x.ts imports '.\/moved-away.js': no such file/])
  t.matchOnly(of(found, 'unknown-part'), [/^gateway\/jobs\/y.ts belongs to no part/])
})

t.test('the table names only parts it defines', async (t) => {
  for (const [name, rule] of Object.entries(ARCHITECTURE.parts)) {
    if (rule.mayImport === 'any') continue
    for (const entry of rule.mayImport) {
      const part = entry.endsWith('.ts') ? partOf(entry) : entry
      t.ok(part !== undefined && part !== name && part in ARCHITECTURE.parts, `${name} -> ${entry}`)
    }
  }
})

t.test('top-level folders in a loop, though no part and no folder is: the old gateway/ holding the wiring', async (t) => {
  // Before the wiring moved out of gateway/, it (gateway/*.ts) imported api/, which imported gateway/store/: every arrow allowed,
  // parts and folders without a loop, yet gateway/ and api/ imported each other.
  const old: Architecture = {
    ...ARCHITECTURE,
    parts: {
      core: ARCHITECTURE.parts.core!,
      'gateway/store': ARCHITECTURE.parts['gateway/store']!,
      wiring: { folder: 'gateway/', mayImport: 'any', holds: 'the wiring' },
      api: { folder: 'api/', mayImport: ['core', 'gateway/store'], holds: 'routes' },
    },
    doors: [],
  }
  const found = checkImports(
    tree({
      'core/errors.ts': '',
      'gateway/store/schema.ts': `import '../../core/errors.js'`,
      'api/routes/calls.ts': `import '../../gateway/store/schema.js'`,
      'gateway/app.ts': `import '../api/routes/calls.js'`,
    }),
    old,
  )
  t.same(of(found, 'folder-cycle'), [
    `top-level folders import each other: api -> gateway -> api ` +
      `(api/routes/calls.ts imports '../../gateway/store/schema.js'; gateway/app.ts imports '../api/routes/calls.js')`,
  ])
  t.same(of(found, 'parts'), [], 'every arrow is allowed')
  t.same(of(found, 'part-cycle'), [], 'the parts do not loop')
  t.same(checkImports(tree(clean)), [], 'the new floors do not loop')
})

t.test('a file loop inside one folder, through a type import', async (t) => {
  const found = checkImports(
    tree({
      ...clean,
      'gateway/sessions/call-deps.ts': `import type { SessionManager } from './session-manager.js'`,
      'gateway/sessions/session-manager.ts': `import { CallSession } from './call-session.js'`,
      'gateway/sessions/call-session.ts': `import '../store/schema.js'\nimport type { CallDeps } from './call-deps.js'`,
    }),
  )
  t.same(of(found, 'file-cycle'), [
    `files import each other: gateway/sessions/call-deps.ts -> gateway/sessions/session-manager.ts -> ` +
      `gateway/sessions/call-session.ts -> gateway/sessions/call-deps.ts (gateway/sessions/call-deps.ts imports ` +
      `'./session-manager.js'; gateway/sessions/session-manager.ts imports './call-session.js'; ` +
      `gateway/sessions/call-session.ts imports './call-deps.js')`,
  ])
  t.same(of(found, 'folder-cycle'), [], 'one folder: no folder loop, only the file loop')
})

t.test('a file over the length limit; exactly at it passes; a generated file is exempt', async (t) => {
  const lines = (n: number) => 'export const x = 1\n'.repeat(n)
  t.equal(lineCount(lines(3)), 3, 'a final newline starts no line')
  t.equal(lineCount('a\nb'), 2)
  const max = ARCHITECTURE.fileLength.maxLines
  const long = { ...clean, 'gateway/sessions/call-session.ts': lines(max + 1), 'gateway/sessions/at-limit.ts': lines(max) }
  t.same(of(checkImports(tree(long)), 'file-length'), [
    `gateway/sessions/call-session.ts has ${max + 1} lines; a source file has at most ${max}: split it by concept (a file per concept)`,
  ])
  const generated = `// Generated from the gateway's OpenAPI document by \`npm run x\`: do not edit.\n${lines(max + 1)}`
  t.same(of(checkImports(tree({ ...clean, 'gateway/sessions/generated.ts': generated })), 'file-length'), [], 'a generated file')
  const notFirst = `// header\n${generated}`
  t.equal(
    of(checkImports(tree({ ...clean, 'gateway/sessions/generated.ts': notFirst })), 'file-length').length,
    1,
    'only its first line says so',
  )
})

t.test('an import past a door, for each door in the list', async (t) => {
  t.same(
    ARCHITECTURE.doors.map((d) => d.door),
    ['carrier/carrier.ts', 'pipeline/index.ts'],
    'the two doors',
  )
  const found = checkImports(
    tree({
      ...clean,
      'gateway/sessions/start.ts': `import '../../pipeline/index.js'\nimport '../../pipeline/audio/pcm16.js'`,
      'server/deep.ts': `import '../pipeline/session/voice-pipeline.js'`,
      'transports/media-stream/hangup.ts': `import '../../carrier/twilio/media-codec.js'`,
    }),
  )
  t.same(of(found, 'door'), [
    `gateway/sessions/start.ts imports '../../pipeline/audio/pcm16.js' (pipeline/audio/pcm16.ts): ` +
      `outside pipeline/, pipeline/index.ts is the only door into pipeline/`,
    `server/deep.ts imports '../pipeline/session/voice-pipeline.js' (pipeline/session/voice-pipeline.ts): ` +
      `outside pipeline/, pipeline/index.ts is the only door into pipeline/`,
    `transports/media-stream/hangup.ts imports '../../carrier/twilio/media-codec.js' (carrier/twilio/media-codec.ts): ` +
      `outside carrier/ and server/, carrier/carrier.ts is the only door into carrier/`,
  ])
})

t.test('the client: file loops and long files, with no parts', async (t) => {
  const found = checkFileShapes(
    tree({
      'client/console/app.ts': `import { sessionView } from './session.js'\nexport function every() {}`,
      'client/console/session.ts': `import { every } from './app.js'\nimport { h } from './dom.js'`,
      'client/console/dom.ts': `export const h = 1\n`.repeat(ARCHITECTURE.fileLength.maxLines + 1),
      'client/src/voxgate-client.ts': `import uPlot from 'uplot'`,
    }),
  )
  t.same(of(found, 'file-cycle'), [
    `files import each other: client/console/app.ts -> client/console/session.ts -> client/console/app.ts ` +
      `(client/console/app.ts imports './session.js'; client/console/session.ts imports './app.js')`,
  ])
  t.matchOnly(of(found, 'file-length'), [/^client\/console\/dom.ts has 401 lines/])
  t.same(of(found, 'unknown-part'), [], 'client files need no part')
})

t.test('the SIP folders: each imports only the folders below it', async (t) => {
  const sip = {
    'transports/sip/timer-scheduler.ts': `export const realTimers = {}`,
    'transports/sip/message/sip-message.ts': `export interface SipMessage { body: Uint8Array }`,
    'transports/sip/transactions/invite-transactions.ts': `import '../message/sip-message.js'\nimport '../timer-scheduler.js'`,
    'transports/sip/media/rtp-media.ts': `import '../timer-scheduler.js'`,
    'transports/sip/calls/sip-call.ts': `import '../media/rtp-media.js'\nimport '../transactions/invite-transactions.js'\nimport '../../../pipeline/index.js'`,
    'transports/sip/endpoint/sip-endpoint.ts': `import '../calls/sip-call.js'\nimport '../message/sip-message.js'`,
  }
  t.equal(partOf('transports/sip/media/srtp/srtp-context.ts'), 'transports/sip/media', 'a sub-folder belongs to its SIP folder')
  t.same(checkImports(tree({ ...clean, ...sip })), [], 'downward imports pass')
  const upward = checkImports(
    tree({
      ...clean,
      ...sip,
      'transports/sip/media/rtp-media.ts': `import '../calls/sip-call.js'`,
      'transports/sip/message/sdp-body.ts': `import '../media/rtp-media.js'`,
      'transports/sip/transactions/client-transaction-table.ts': `import '../endpoint/sip-endpoint.js'`,
      'transports/sip/calls/sip-dialer.ts': `import '../../../gateway/sessions/call-session.js'`,
    }),
  )
  t.same(
    of(upward, 'parts').map((m) => m.split(':')[0]),
    [
      `transports/sip/calls/sip-dialer.ts imports '../../../gateway/sessions/call-session.js' (gateway/sessions/call-session.ts)`,
      `transports/sip/media/rtp-media.ts imports '../calls/sip-call.js' (transports/sip/calls/sip-call.ts)`,
      `transports/sip/message/sdp-body.ts imports '../media/rtp-media.js' (transports/sip/media/rtp-media.ts)`,
      `transports/sip/transactions/client-transaction-table.ts imports '../endpoint/sip-endpoint.js' (transports/sip/endpoint/sip-endpoint.ts)`,
    ].sort(),
    'each upward import (and one into the sessions layer) is refused',
  )
})

t.test('the session parts of gateway/ and SIP admission: each imports only the parts below it', async (t) => {
  const parts = {
    'gateway/recording/recorder.ts': `import '../store/schema.js'\nimport '../../pipeline/index.js'`,
    'gateway/sessions/call-session.ts': `import '../store/schema.js'\nimport '../recording/recorder.js'\nimport '../../pipeline/index.js'`,
    'gateway/sessions/ports/session-port.ts': `export interface SessionPort { id: string }`,
    'gateway/transfer/human-leg-transfer.ts': `import '../sessions/ports/session-port.js'`,
    'gateway/admission/phone-call.ts': `import '../sessions/call-session.js'\nimport '../transfer/human-leg-transfer.js'`,
    'gateway/outbound/outbound-calls.ts': `import '../admission/phone-call.js'\nimport '../sessions/call-session.js'`,
    'transports/sip/calls/sip-admission.ts': `export type SipAdmission = () => void`,
    'transports/sip/admission/sip-trunk-invites.ts': `import '../calls/sip-admission.js'\nimport '../../../gateway/admission/phone-call.js'`,
  }
  t.equal(partOf('gateway/sessions/transcript/turn-redactor.ts'), 'gateway/sessions', 'a sub-folder belongs to its part')
  t.same(checkImports(tree({ ...clean, ...parts })), [], 'downward imports pass')
  const upward = checkImports(
    tree({
      ...clean,
      ...parts,
      'gateway/recording/session-recording.ts': `import '../sessions/call-session.js'`,
      'gateway/sessions/session-call-control.ts': `import '../transfer/human-leg-transfer.js'`,
      'gateway/sessions/session-manager.ts': `import '../admission/phone-call.js'`,
      'gateway/transfer/transfer-legs.ts': `import '../admission/phone-call.js'`,
      'gateway/admission/call-deps.ts': `import '../outbound/outbound-calls.js'`,
      'gateway/outbound/sip-outbound-calls.ts': `import '../transfer/human-leg-transfer.js'`,
      'transports/sip/admission/trunk-digest.ts': `import '../../../gateway/store/schema.js'`,
      'transports/sip/endpoint/sip-endpoint.ts': `import '../admission/sip-trunk-invites.js'`,
    }),
  )
  t.same(
    of(upward, 'parts').map((m) => m.split(':')[0]),
    [
      `gateway/recording/session-recording.ts imports '../sessions/call-session.js' (gateway/sessions/call-session.ts)`,
      `gateway/sessions/session-call-control.ts imports '../transfer/human-leg-transfer.js' (gateway/transfer/human-leg-transfer.ts)`,
      `gateway/sessions/session-manager.ts imports '../admission/phone-call.js' (gateway/admission/phone-call.ts)`,
      `gateway/transfer/transfer-legs.ts imports '../admission/phone-call.js' (gateway/admission/phone-call.ts)`,
      `gateway/admission/call-deps.ts imports '../outbound/outbound-calls.js' (gateway/outbound/outbound-calls.ts)`,
      `gateway/outbound/sip-outbound-calls.ts imports '../transfer/human-leg-transfer.js' (gateway/transfer/human-leg-transfer.ts)`,
      `transports/sip/admission/trunk-digest.ts imports '../../../gateway/store/schema.js' (gateway/store/schema.ts)`,
      `transports/sip/endpoint/sip-endpoint.ts imports '../admission/sip-trunk-invites.js' (transports/sip/admission/sip-trunk-invites.ts)`,
    ].sort(),
    'each upward import is refused',
  )
})
