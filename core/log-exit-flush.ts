import { writeSync } from 'node:fs'

/**
 * The fields of a sonic-boom 4 destination (utf8 mode) that hold lines not yet written. sonic-boom has no public
 * way to read them; `test/core/log-exit-flush.test.ts` pins this layout against the installed sonic-boom.
 */
interface SonicBoomBuffers {
  fd: number
  _bufs: unknown
  _writingBuf: unknown
  _writing: unknown
  _len: unknown
}

/** Waits of 100 ms for a full pipe at exit before the lines still buffered are given up (2 s in all). */
export const EXIT_FLUSH_FULL_PIPE_WAITS = 20
const FULL_PIPE_WAIT_MS = 100
const sleeper = new Int32Array(new SharedArrayBuffer(4))

/**
 * A bounded replacement for sonic-boom's `flushSync`, which pino runs at process exit for an asynchronous
 * destination. sonic-boom 4.2's own loop sleeps 100 ms and retries after every write error, EPIPE included, so a
 * process whose stdout reader is gone would never exit. This one writes the buffered lines once: a full pipe
 * (EAGAIN, EBUSY) is waited for at most EXIT_FLUSH_FULL_PIPE_WAITS times, any other error (EPIPE, EBADF) gives
 * the lines up at once. Lines are lost, never the exit. A layout it does not recognise costs the lines too.
 */
export function boundedFlushSync(dest: object): void {
  const s = dest as SonicBoomBuffers
  const bufs = s._bufs
  const writing = s._writingBuf
  if (!Array.isArray(bufs) || typeof writing !== 'string' || !bufs.every((b) => typeof b === 'string')) return
  // A chunk an asynchronous write holds (`_writing`) is left to it (it may land after these lines, or be lost at
  // exit, as with sonic-boom's own flush): never written twice.
  const pending = [...(s._writing === true || writing === '' ? [] : [writing]), ...(bufs as string[])].join('')
  bufs.length = 0
  if (s._writing !== true) s._writingBuf = ''
  s._len = s._writing === true ? Buffer.byteLength(writing) : 0
  let data = Buffer.from(pending)
  let waits = 0
  while (data.length > 0) {
    try {
      data = data.subarray(writeSync(s.fd, data))
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code
      if ((code === 'EAGAIN' || code === 'EBUSY') && waits < EXIT_FLUSH_FULL_PIPE_WAITS) {
        waits++
        Atomics.wait(sleeper, 0, 0, FULL_PIPE_WAIT_MS)
        continue
      }
      return
    }
  }
}
