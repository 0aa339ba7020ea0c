// SRTP's HMAC-SHA1 as WebAssembly: this file writes the module's text (WAT) and assembles it with wabt into
// transports/sip/media/srtp/sha1-wasm.ts, which the gateway loads (no wabt at run time). test/sip/srtp/sha1-wasm.test.ts
// fails when the checked-in file differs from what this writes now.
// Usage: npm run sha1-wasm            (writes transports/sip/media/srtp/sha1-wasm.ts)
//
// Why WebAssembly: a 20 ms G.711 packet's tag is four SHA-1 blocks, and the same compression function runs in about
// half the time as WebAssembly as in JavaScript (V8 keeps the state and the 16-word schedule in registers, no typed
// array bounds checks), measured side by side with `npm run bench -- srtp`.
//
// The module: one compression function, fully unrolled (80 steps, the schedule in 16 locals used as a ring), and
// `tag(length)`, the HMAC of the `length` octets at MESSAGE under the pad states at INNER and OUTER: it pads the
// message in place (so MESSAGE needs 72 spare octets after it), hashes it from the inner state, then the digest
// (in a block whose padding is in the data section) from the outer state, and writes the 20-octet digest at DIGEST.
// SHA-1 is big-endian and WebAssembly little-endian: words are byte-swapped on the way in and out.
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import wabt from 'wabt'

/** The generated file, checked in beside the HMAC that loads it. */
export const SHA1_WASM_FILE = fileURLToPath(new URL('../../transports/sip/media/srtp/sha1-wasm.ts', import.meta.url))

/** The command that rewrites {@link SHA1_WASM_FILE}, for failure messages. */
export const SHA1_WASM_COMMAND = 'npm run sha1-wasm'

/** Where things are in the module's memory (octet offsets); written into the generated file for the loader. */
export const SHA1_LAYOUT = {
  /** The running state, five words. */
  state: 0,
  /** The key's inner and outer pad states, five words each, one after the other. */
  pads: 32,
  /** The outer hash's one block: the inner digest at its start, SHA-1's padding for 84 octets after it. */
  outerBlock: 128,
  /** The 20-octet tag. */
  digest: 192,
  /** The message, padded in place. */
  message: 256,
  /** Pages of 64 KiB: two hold the longest UDP datagram with room for its padding. */
  pages: 2,
} as const

/** Octets the padding may write after a message. */
const PADDING = 72

/** The longest message `tag` takes. */
export const SHA1_MAX_MESSAGE = SHA1_LAYOUT.pages * 65_536 - SHA1_LAYOUT.message - PADDING

const K = [0x5a827999, 0x6ed9eba1, 0x8f1bbcdc | 0, 0xca62c1d6 | 0]

const get = (name: string) => `(local.get $${name})`
const word = (offset: number, base = '(i32.const 0)') => `(i32.load offset=${offset} ${base})`
/** A word's octets reversed (rotations and masks: WebAssembly has no byte swap). */
const swap = (x: string) =>
  `(i32.or (i32.and (i32.rotl ${x} (i32.const 8)) (i32.const 0x00ff00ff)) (i32.and (i32.rotr ${x} (i32.const 8)) (i32.const 0xff00ff00)))`

/** SHA-1's round function for step `i` of b, c, d. */
function roundFunction(i: number): string {
  if (i < 20) return `(i32.or (i32.and ${get('b')} ${get('c')}) (i32.and (i32.xor ${get('b')} (i32.const -1)) ${get('d')}))`
  if (i >= 40 && i < 60)
    return `(i32.or (i32.or (i32.and ${get('b')} ${get('c')}) (i32.and ${get('b')} ${get('d')})) (i32.and ${get('c')} ${get('d')}))`
  return `(i32.xor (i32.xor ${get('b')} ${get('c')}) ${get('d')})`
}

/** `compress(block)`: one SHA-1 compression of the 64 octets at `block` into the state at STATE. */
function compressFunction(): string {
  const state = ['a', 'b', 'c', 'd', 'e']
  const lines = [`(func $compress (export "compress") (param $block i32)`]
  lines.push(`(local $a i32) (local $b i32) (local $c i32) (local $d i32) (local $e i32) (local $t i32)`)
  for (let i = 0; i < 16; i++) lines.push(`(local $w${i} i32)`)
  for (const [i, name] of state.entries()) lines.push(`(local.set $${name} ${word(SHA1_LAYOUT.state + 4 * i)})`)
  for (let i = 0; i < 80; i++) {
    const w = `w${i & 15}`
    const ring = (back: number) => get(`w${(i - back) & 15}`)
    if (i < 16) lines.push(`(local.set $${w} ${swap(word(4 * i, get('block')))})`)
    else lines.push(`(local.set $${w} (i32.rotl (i32.xor (i32.xor ${ring(3)} ${ring(8)}) (i32.xor ${ring(14)} ${get(w)})) (i32.const 1)))`)
    const k = K[Math.floor(i / 20)]!
    lines.push(
      `(local.set $t (i32.add (i32.add (i32.add (i32.rotl ${get('a')} (i32.const 5)) ${roundFunction(i)}) (i32.add ${get('e')} (i32.const ${k}))) ${get(w)}))`,
      `(local.set $e ${get('d')}) (local.set $d ${get('c')}) (local.set $c (i32.rotl ${get('b')} (i32.const 30))) (local.set $b ${get('a')}) (local.set $a ${get('t')})`,
    )
  }
  for (const [i, name] of state.entries()) {
    const at = SHA1_LAYOUT.state + 4 * i
    lines.push(`(i32.store offset=${at} (i32.const 0) (i32.add ${word(at)} ${get(name)}))`)
  }
  lines.push(')')
  return lines.join('\n')
}

/** Copies five words from `from` to `to`, byte-swapped when `swapped`. */
function fiveWords(from: number, to: number, swapped: boolean): string {
  const lines: string[] = []
  for (let i = 0; i < 5; i++)
    lines.push(`(i32.store offset=${to + 4 * i} (i32.const 0) ${swapped ? swap(word(from + 4 * i)) : word(from + 4 * i)})`)
  return lines.join('\n')
}

/** `tag(length)`: HMAC-SHA1 of the `length` octets at MESSAGE into DIGEST. */
function tagFunction(): string {
  const { state, pads, outerBlock, digest, message } = SHA1_LAYOUT
  return `(func (export "tag") (param $length i32)
(local $end i32) (local $padded i32) (local $at i32)
${fiveWords(pads, state, false)}
;; SHA-1's padding: 0x80, zeros, then the length in bits after the inner pad block, big-endian in the last 8 octets
;; (the high word is zero: a message here is far below 2^29 octets).
(local.set $end (i32.add (i32.const ${message}) ${get('length')}))
(local.set $padded (i32.add (i32.const ${message}) (i32.and (i32.add ${get('length')} (i32.const ${PADDING})) (i32.const -64))))
(i32.store8 ${get('end')} (i32.const 0x80))
(memory.fill (i32.add ${get('end')} (i32.const 1)) (i32.const 0) (i32.sub (i32.sub ${get('padded')} ${get('end')}) (i32.const 5)))
(i32.store (i32.sub ${get('padded')} (i32.const 4)) ${swap(`(i32.shl (i32.add ${get('length')} (i32.const 64)) (i32.const 3))`)})
(local.set $at (i32.const ${message}))
(block $hashed (loop $blocks
  (br_if $hashed (i32.ge_u ${get('at')} ${get('padded')}))
  (call $compress ${get('at')})
  (local.set $at (i32.add ${get('at')} (i32.const 64)))
  (br $blocks)))
${fiveWords(state, outerBlock, true)}
${fiveWords(pads + 20, state, false)}
(call $compress (i32.const ${outerBlock}))
${fiveWords(state, digest, true)}
)`
}

/** The module's text. */
export function sha1Wat(): string {
  const { outerBlock, pages } = SHA1_LAYOUT
  // The outer message is always one 20-octet digest after the 64-octet pad block: 672 bits, padding fixed.
  const bits = (64 + 20) * 8
  const padding = `(data (i32.const ${outerBlock + 20}) "\\80") (data (i32.const ${outerBlock + 62}) "\\${(bits >> 8).toString(16).padStart(2, '0')}\\${(bits & 0xff).toString(16).padStart(2, '0')}")`
  return `(module
(memory (export "memory") ${pages})
${padding}
${compressFunction()}
${tagFunction()}
)
`
}

/** The module's binary. */
export async function sha1Wasm(): Promise<Uint8Array> {
  const tools = await wabt()
  const module = tools.parseWat('sha1.wat', sha1Wat(), { bulk_memory: true })
  try {
    module.validate()
    return new Uint8Array(module.toBinary({}).buffer)
  } finally {
    module.destroy()
  }
}

/** The TypeScript source of {@link SHA1_WASM_FILE}. */
export async function sha1WasmSource(): Promise<string> {
  const base64 = Buffer.from(await sha1Wasm()).toString('base64')
  const layout = Object.entries({ ...SHA1_LAYOUT, maxMessage: SHA1_MAX_MESSAGE }).map(([name, value]) => `${name}: ${value}`)
  const lines: string[] = []
  for (let i = 0; i < base64.length; i += 100) lines.push(`  '${base64.slice(i, i + 100)}',`)
  return `// Generated by \`${SHA1_WASM_COMMAND}\` (test/helpers/sha1-wasm.ts, which explains the module): do not edit.
// test/sip/srtp/sha1-wasm.test.ts keeps this file current.

/** Where the module keeps its state, pad states, outer block, digest and message (octet offsets). */
export const SHA1_LAYOUT = { ${layout.join(', ')} } as const

/** The module (SHA-1's compression and HMAC-SHA1 tag), base64. */
export const SHA1_WASM = [
${lines.join('\n')}
].join('')
`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(SHA1_WASM_FILE, await sha1WasmSource())
  console.log(`wrote ${SHA1_WASM_FILE}`)
}
