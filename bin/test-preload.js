// Preloaded into every test process by bin/test.js (`node --import`):
// - A test file that bin/test.js does not name in VOXGATE_TEST_REALTIME (one file per line) lowers its own CPU
//   priority (nice 10): the end-to-end files whose assertions are about real time (a 40 ms audio placement, calls
//   paced 500 ms apart, 20 ms frames) get the CPU first when the run keeps every core busy; the others use what is
//   left, which is most of it, since those mostly wait.
// - At exit, appends one line to the file named by VOXGATE_TEST_TIMING with the process's wall time since it
//   started, its CPU time, the CPU time of the children it waited for (a spawned gateway, the CLI, npm) and its
//   peak memory. bin/test.js turns the lines into the table of slowest files.
// Nothing happens when the variables are unset.
import { appendFileSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

const out = process.env.VOXGATE_TEST_TIMING

/** CPU milliseconds of the children this process waited for (Linux: cutime + cstime in /proc/self/stat). */
function childCpuMs() {
  try {
    const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')
    // Fields 16 and 17 of stat(5), counted from the state (field 3) here; clock ticks of 10 ms.
    return (Number(fields[13]) + Number(fields[14])) * 10
  } catch {
    return 0
  }
}

const realtime = process.env.VOXGATE_TEST_REALTIME
if (realtime !== undefined && !realtime.split('\n').includes(process.argv[1])) {
  try {
    setPriority(10)
  } catch {
    // Not allowed here: the file runs at the usual priority.
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
