import { serve } from './serve.js'

const USAGE = `usage: voxgate <command>

commands:
  serve     run the gateway (configuration from the environment; see README)
  help      show this text
`

/** Dispatches `voxgate <command>`; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [command] = argv
  switch (command) {
    case 'serve':
      return serve()
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE)
      return 0
    default:
      process.stderr.write(`voxgate: unknown command "${command}"\n${USAGE}`)
      return 2
  }
}

// A reader of stdout or stderr that went away (a log collector, a closed pipe) emits EPIPE on the stream:
// the text is lost, the process goes on (unhandled, the error would crash it).
process.stdout.on('error', () => undefined)
process.stderr.on('error', () => undefined)

process.exit(await main(process.argv.slice(2)))
