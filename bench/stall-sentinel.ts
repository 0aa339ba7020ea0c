// An idle process that records its own event-loop stalls (see stalls.ts): whatever it sees, the machine did,
// not the gateway. Started by carrier-calls.bench.ts; replies to 'report' with its stalls and exits.
import { StallRecorder } from './stalls.js'

const recorder = new StallRecorder()
recorder.start()
process.send?.({ ready: true })
process.on('message', (m: { cmd: string }) => {
  if (m.cmd !== 'report') return
  process.send?.({ stalls: recorder.stop() }, () => process.exit(0))
})
