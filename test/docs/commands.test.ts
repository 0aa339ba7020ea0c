import { spawnSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { openApiDocument } from '../../api/openapi/openapi-document.js'
import { workersFlag } from '../../cli/common/workers-flag.js'
import {
  type CommandWorld,
  type ShellCommand,
  commandProblems,
  commandsOf,
  hasMarker,
  RUNNABLE_MARKER,
  runnableBlocks,
} from '../helpers/docs/doc-commands.js'
import { tableNames } from '../helpers/docs/markdown-tables.js'
import { envReadsIn, read, sourceFiles } from '../helpers/docs/source-scan.js'

// Shell blocks a page marks with <!-- docs:check --> are checked against the project itself: each `voxgate ...`
// command against the CLI's own flag parser, each `npm run ...` against package.json's scripts, each curl against
// the gateway's routes, each VAR=value prefix against the configuration reference. A renamed flag, script, route
// or variable fails here, in `npm test`.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')

/**
 * The CLI's verdict on each argument list: `voxgate <args> --help` in a process of its own (every command parses its
 * flags before it reads --help, so nothing runs). `serve` takes only --workers N and would start a gateway: its own
 * argument reader decides.
 */
function cliVerdicts(lists: string[][]): Map<string, { code: number; output: string }> {
  const verdicts = new Map<string, { code: number; output: string }>()
  for (const args of lists) {
    if (verdicts.has(JSON.stringify(args))) continue
    if (args[0] === 'serve') {
      const ok = workersFlag(args.slice(1)) !== null
      verdicts.set(JSON.stringify(args), { code: ok ? 0 : 2, output: ok ? '' : 'serve takes only --workers N' })
      continue
    }
    const child = spawnSync(process.execPath, [join(ROOT, 'bin', 'voxgate.js'), ...args, '--help'], { cwd: ROOT, encoding: 'utf8' })
    verdicts.set(JSON.stringify(args), { code: child.status ?? -1, output: `${child.stderr}${child.stdout}` })
  }
  return verdicts
}

/** The voxgate argument lists of some commands. */
function voxgateArgs(commands: ShellCommand[]): string[][] {
  return commands.flatMap((c) => {
    let w = c.words
    if (w[0] === 'npx' || w[0] === 'node') w = w.slice(1)
    return w[0] === 'voxgate' || w[0] === 'bin/voxgate.js' ? [w.slice(1)] : []
  })
}

function world(commands: ShellCommand[]): CommandWorld {
  const verdicts = cliVerdicts(voxgateArgs(commands))
  const cliFlagsParse = async (args: string[]) => verdicts.get(JSON.stringify(args)) ?? { code: -1, output: 'not checked' }
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  const doc = openApiDocument('http://localhost:8080') as { paths: Record<string, Record<string, unknown>> }
  const routes = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((m) => ({ method: m.toUpperCase(), path })))
  const documentedEnv = tableNames(readFileSync(join(ROOT, 'docs', 'reference', 'configuration.md'), 'utf8'))
  for (const file of sourceFiles(ROOT, ['bench'])) for (const name of envReadsIn(read(ROOT, file))) documentedEnv.add(name)
  return { scripts: new Set(Object.keys(pkg.scripts)), routes, cliFlagsParse, documentedEnv }
}

function pages(): string[] {
  const visit = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? visit(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
    )
  return [join(ROOT, 'README.md'), ...visit(join(ROOT, 'docs'))]
}

t.test('every marked shell block of the README and docs/ names real flags, scripts, routes and variables', async (t) => {
  const found = pages().flatMap((file) => {
    const text = readFileSync(file, 'utf8')
    if (!hasMarker(text)) return []
    return runnableBlocks(text).flatMap((block) => commandsOf(block).map((cmd) => ({ file, cmd })))
  })
  const w = world(found.map((f) => f.cmd))
  let checked = 0
  for (const { file, cmd } of found) {
    checked++
    t.strictSame(await commandProblems(cmd, w), [], `${relative(ROOT, file)}: ${cmd.text}`)
  }
  t.ok(checked >= 5, `${checked} commands checked`)
})

t.test('the CLI reference marks its commands', async (t) => {
  const cli = readFileSync(join(ROOT, 'docs', 'reference', 'cli.md'), 'utf8')
  t.ok(runnableBlocks(cli).length > 0, 'docs/reference/cli.md has a marked block')
})

t.test('the checker fails a renamed flag, script, route or variable', async (t) => {
  const samples = [
    'npx voxgate tunnel --agent-id agt_1 --port 3000 --tail',
    'npx voxgate tunnel --portt 3000',
    'voxgate serve --worker 2',
    'voxgate serve --workers 2',
  ]
  const w = world(samples.flatMap((s) => commandsOf([s])))
  const problems = async (text: string) => (await Promise.all(commandsOf([text]).map((c) => commandProblems(c, w)))).flat()
  t.strictSame(await problems('npx voxgate tunnel --agent-id agt_1 --port 3000 --tail'), [])
  t.match((await problems('npx voxgate tunnel --portt 3000'))[0], /the CLI refuses it \(exit 2\)/)
  t.match((await problems('voxgate serve --worker 2'))[0], /the CLI refuses it/)
  t.strictSame(await problems('voxgate serve --workers 2'), [])
  t.match((await problems('npm run no-such-script'))[0], /no script "no-such-script"/)
  t.strictSame(await problems('npm start && npm test'), [])
  t.strictSame(await problems('curl -H "Authorization: Bearer $KEY" http://localhost:8080/v1/agents/$AGENT_ID'), [])
  t.match((await problems('curl -X POST $GATEWAY/v1/agentz -d {}'))[0], /no route POST \/v1\/agentz/)
  t.match((await problems('NO_SUCH_VARIABLE=1 voxgate serve'))[0], /NO_SUCH_VARIABLE is read by no code/)
  t.strictSame(await problems('KEY=vgk_1'), [], 'a shell variable alone is no command')
  t.match((await problems('ORG=$(curl -s localhost:8080/v1/whoamii | jq -r .id)'))[0], /no route GET \/v1\/whoamii/)
  t.strictSame(
    commandsOf(["curl -d '{", '  "a": 1', "}' localhost:8080/v1/agents # make one"]).map((c) => c.words[0]),
    ['curl'],
  )
  t.strictSame(runnableBlocks(`${RUNNABLE_MARKER}\n\n\`\`\`sh\nvoxgate whoami\n\`\`\`\n`), [['voxgate whoami']])
})
