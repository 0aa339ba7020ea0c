// The console's API types come from the gateway's OpenAPI document: the checked-in file must be what the generator
// writes now, the console must typecheck against it, and a schema change the console depends on must break it.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'
import { CONSOLE_TYPES_COMMAND, CONSOLE_TYPES_FILE, consoleTypesSource, gatewayDocument } from '../helpers/console-types.js'

const CONSOLE_TSCONFIG = fileURLToPath(new URL('../../client/console/tsconfig.json', import.meta.url))

t.test('the checked-in console types are what the gateway document generates', async (t) => {
  const fresh = await consoleTypesSource()
  const current = readFileSync(CONSOLE_TYPES_FILE, 'utf8') === fresh
  t.ok(current, `client/console/api-types.ts is current (when stale: run \`${CONSOLE_TYPES_COMMAND}\` and commit the file)`)
  t.match(fresh, /export interface components/)
  t.match(fresh, /SessionDetails: \{/, 'the schemas the console reads are in it')
})

/** Type-checks the console as its own tsconfig does, with `apiTypes` as the generated file's text. */
function consoleProblems(apiTypes: string, old?: ts.Program): { program: ts.Program; problems: string[] } {
  const config = ts.getParsedCommandLineOfConfigFile(CONSOLE_TSCONFIG, {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })
  if (config === undefined) throw new Error(`cannot read ${CONSOLE_TSCONFIG}`)
  const host = ts.createCompilerHost(config.options)
  const getSourceFile = host.getSourceFile.bind(host)
  host.getSourceFile = (name, language, onError) =>
    name === CONSOLE_TYPES_FILE ? ts.createSourceFile(name, apiTypes, language) : getSourceFile(name, language, onError)
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, host, oldProgram: old })
  const problems = ts
    .getPreEmitDiagnostics(program)
    .map((d) => `${d.file?.fileName.split('/client/')[1] ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`)
  return { program, problems }
}

/** The gateway document with one change applied to its schemas. */
function changed(edit: (schemas: Record<string, any>) => void): Record<string, unknown> {
  const doc = structuredClone(gatewayDocument()) as { components: { schemas: Record<string, any> } }
  edit(doc.components.schemas)
  return doc
}

t.test("the console typechecks against the generated types and breaks when a field it reads leaves the server's schema", async (t) => {
  const current = consoleProblems(readFileSync(CONSOLE_TYPES_FILE, 'utf8'))
  t.same(current.problems, [], 'the console as it is: no type errors')
  t.ok(current.program.getSourceFile(CONSOLE_TYPES_FILE), 'the program reads the generated file')

  // Two changes the console depends on: the sessions list shows each row's failed turns, and the usage page
  // reads the daily stats under `days`. One program checks both (a type check costs seconds).
  const broken = changed((s) => {
    const item = s.SessionList.properties.sessions.items
    delete item.properties.failed_turns
    item.required = item.required.filter((f: string) => f !== 'failed_turns')
    s.DailyStatsList.properties = { stats: s.DailyStatsList.properties.days }
    s.DailyStatsList.required = ['stats']
  })
  const problems = consoleProblems(await consoleTypesSource(broken), current.program).problems
  const list = problems.filter((p) => p.startsWith('console/sessions.ts'))
  const usage = problems.filter((p) => p.startsWith('console/usage.ts'))
  t.ok(
    list.length > 0 && list.every((p) => p.includes('failed_turns')),
    `a removed field fails where the console reads it:\n${list.join('\n')}`,
  )
  t.ok(
    usage.some((p) => p.includes("Property 'days' does not exist")),
    `a renamed answer field fails where the console reads it:\n${usage.join('\n')}`,
  )
  t.same(
    problems.filter((p) => !list.includes(p) && !usage.includes(p)),
    [],
    'no error elsewhere: the console breaks exactly where it reads what changed',
  )
})
