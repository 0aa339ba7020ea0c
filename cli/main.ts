// Each command's code is loaded when it runs: `voxgate --help`, a usage error or `voxgate login` do not load the
// gateway (the store, the pipeline, the HTTP server), which `serve` alone needs.
import { CliError } from './common/cli-errors.js'
import { workersFlag } from './common/workers-flag.js'

const USAGE = `usage: voxgate <command> [options]   (voxgate <command> --help for its options)

commands:
  serve     run the gateway (configuration from the environment; see README)
            --workers N   N processes on one port (node:cluster; needs DATABASE_URL); WORKERS in the environment
  login     sign this terminal in to an organization through the browser (--gateway URL)
  logout    revoke the CLI's key and forget the login
  whoami    print the gateway and organization the CLI acts for
  init      create an example agent backend project in a new folder and print a link to talk to its agent
            (--agent-id <id> to link an existing agent, --port N for the project)
  tunnel    relay the agent's webhooks to your local project (--agent-id, --path, --port, --tail)
  help      show this text

exit codes: 0 success, 1 failure, 2 usage error
`

const SERVE_USAGE = `usage: voxgate serve [--workers N]

Runs the gateway; its configuration comes from the environment (see README, Configuration).
  --workers N   N processes on one port (node:cluster; needs DATABASE_URL); WORKERS in the environment
`

type Command = (args: string[], env: NodeJS.ProcessEnv, out: (s: string) => void) => Promise<number>

/** The commands that talk to a gateway, loaded when run: each returns its exit code or throws a CliError. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  login: async () => (await import('./login/login-command.js')).loginCommand,
  logout: async () => (await import('./login/login-command.js')).logoutCommand,
  whoami: async () => (await import('./login/login-command.js')).whoamiCommand,
  init: async () => (await import('./init/init-command.js')).initCommand,
  tunnel: async () => {
    const { tunnelCommand } = await import('./tunnel/tunnel-command.js')
    return (args, env, out) => tunnelCommand(args, env, out)
  },
}

/** Dispatches `voxgate <command>`; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv
  switch (command) {
    case 'serve': {
      if (rest.length === 1 && (rest[0] === '--help' || rest[0] === '-h')) {
        process.stdout.write(SERVE_USAGE)
        return 0
      }
      const workers = workersFlag(rest)
      if (workers === null) {
        process.stderr.write(`voxgate: serve takes only --workers N\n${USAGE}`)
        return 2
      }
      const { serve } = await import('./serve.js')
      return serve(workers === undefined ? process.env : { ...process.env, WORKERS: workers })
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE)
      return 0
    default: {
      const load = Object.hasOwn(COMMANDS, command) ? COMMANDS[command] : undefined
      if (load === undefined) {
        process.stderr.write(`voxgate: unknown command "${command}"\n${USAGE}`)
        return 2
      }
      try {
        const run = await load()
        return await run(rest, process.env, writeOut)
      } catch (e) {
        if (!(e instanceof CliError)) throw e
        process.stderr.write(
          `voxgate ${command}: ${e.message}\n${e.exitCode === 2 ? `run voxgate ${command} --help for its options\n` : ''}`,
        )
        return e.exitCode
      }
    }
  }
}

function writeOut(text: string): void {
  process.stdout.write(text)
}

// A reader of stdout or stderr that went away (a log collector, a closed pipe) emits EPIPE on the stream:
// the text is lost, the process goes on (unhandled, the error would crash it).
process.stdout.on('error', () => undefined)
process.stderr.on('error', () => undefined)

process.exit(await main(process.argv.slice(2)))
