// Preloaded into every test process by bin/test.js (`node --import`): at exit, appends one line to the file named
// by VOXGATE_TEST_TIMING with the process's wall time since it started, its CPU time, the CPU time of the children
// it waited for (a spawned gateway, the CLI, npm) and its peak memory. bin/test.js turns the lines into the table
// of slowest files. No effect when the variable is unset.
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

if (out) {
  process.on('exit', () => {
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
