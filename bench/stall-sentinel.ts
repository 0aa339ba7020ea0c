// An idle process that records its own event-loop stalls (see stalls.ts): whatever it sees, the machine did,
// not the gateway. Started by carrier-calls.bench.ts; replies to 'report' with its stalls and exits,
// to 'since' with the stalls that ended after a moment and goes on (the soak).
import { StallRecorder } from './stalls.js'

const recorder = new StallRecorder()
recorder.start()
process.send?.({ ready: true })
process.on('message', (m: { cmd: string; from?: number }) => {
  if (m.cmd === 'since') {
    // The soak asks every minute: stalls that ended before `from` are of no more use, so they are dropped.
    const recent = recorder.stalls.filter((s) => s.to > (m.from ?? 0))
    recorder.stalls.splice(0, recorder.stalls.length, ...recent)
    process.send?.({ stalls: recent })
  } else if (m.cmd === 'report') {
    process.send?.({ stalls: recorder.stop() }, () => process.exit(0))
  }
})
// Its parent gone (a benchmark that ended or failed), it has nothing to do.
process.on('disconnect', () => process.exit(0))
