// Preloaded into every test process by bin/test.js (`node --import`): at exit, appends one line to the file named
// by VOXGATE_TEST_TIMING with the process's wall time since it started, its CPU time, the CPU time of the children
// it waited for (a spawned gateway, the CLI, npm) and its peak memory. bin/test.js turns the lines into the table
// of slowest files; and it says on stderr how long the process lived after tap's last line. No effect when the
// variable is unset.
import { appendFileSync, readFileSync } from 'node:fs'

const out = process.env.VOXGATE_TEST_TIMING

/** CPU milliseconds of the children this process waited for (Linux: cutime + cstime in /proc/self/stat). */
export function childCpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    // Fields 16 and 17 of stat(5), counted from the state (field 3) here; clock ticks of 10 ms.
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return 0
  }
}

/** When tap wrote its last line (`# time=...`, once every test has ended), in ms since the process started. */
let tapEndedAt
if (out) {
  const write = process.stdout.write
  process.stdout.write = function (chunk, ...rest) {
    if (String(chunk).includes('# time=')) tapEndedAt = performance.now()
    return write.call(this, chunk, ...rest)
  }
  process.on('exit', () => {
    // A process that lives on after its tests (a timer or socket left open) holds its place in the run: say so.
    if (tapEndedAt !== undefined) process.stderr.write(`# lingered ${Math.round(performance.now() - tapEndedAt)} ms\n`)
    const cpu = process.cpuUsage()
    const line = {
      file: process.argv[1],
      wallMs: Math.round(performance.now()),
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      childCpuMs: childCpuMs(),
      rssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    }
    appendFileSync(out, `${JSON.stringify(line)}\n`)
  })
}
