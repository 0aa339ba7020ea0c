import { lstatSync, mkdirSync, readdirSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { CliError } from '../common/cli-errors.js'

/** The folder `init` writes to, created (or found empty) and proven writable before any agent exists. */
export interface TargetFolder {
  dir: string
  /** Removes what `prepareTarget` created (the folders it made, or the files written into a folder found empty). */
  rollback(): void
}

/**
 * Makes `dir` ready for the project before the gateway is called: an existing folder must be empty; a missing one
 * is created level by level; either way a probe file is written and removed, so a read-only or virtual file
 * system (`/proc`), a path under a file or a broken link fails here, in one line, with nothing created.
 *
 * Levels are created one `mkdir` at a time on purpose: Node's `mkdir(..., { recursive: true })` loops forever at
 * 100% CPU when a level answers ENOENT although its parent exists (any path under `/proc`, a dangling symlink),
 * and reports a file in the path as a raw ENOTDIR.
 */
export function prepareTarget(dir: string): TargetFolder {
  const existing = statOf(dir)
  if (existing !== undefined) {
    if (!existing.isDirectory()) throw new CliError(`${dir} exists and is not a folder: choose another folder`)
    let entries: string[]
    try {
      entries = readdirSync(dir)
    } catch (e) {
      throw new CliError(`cannot read ${dir}: ${reason(e)}`)
    }
    if (entries.length > 0) throw new CliError(`${dir} exists and is not empty: choose another folder`)
    probe(dir)
    return { dir, rollback: () => emptyFolder(dir) }
  }

  // The missing levels, outermost first, below the deepest ancestor that exists.
  const missing: string[] = []
  let at = dir
  for (;;) {
    missing.unshift(at)
    const parent = dirname(at)
    if (parent === at) break
    const st = statOf(parent)
    if (st !== undefined) {
      if (!st.isDirectory()) throw new CliError(`cannot create ${dir}: ${parent} is a file, not a folder`)
      break
    }
    if (isLink(parent)) throw new CliError(`cannot create ${dir}: ${parent} is a link to something that does not exist`)
    at = parent
  }
  const created: string[] = []
  const undo = () => {
    // The outermost folder this run created holds everything else it created.
    if (created[0] !== undefined) rmSync(created[0], { recursive: true, force: true })
  }
  for (const level of missing) {
    try {
      mkdirSync(level)
      created.push(level)
    } catch (e) {
      undo()
      throw new CliError(`cannot create ${dir}: ${reason(e)} (${level})`)
    }
  }
  try {
    probe(dir)
  } catch (e) {
    undo()
    throw e
  }
  return { dir, rollback: undo }
}

/** Writes and removes a file in `dir`: the only proof that the project's files can be written there. */
function probe(dir: string): void {
  const file = join(dir, `.voxgate-init-${process.pid}`)
  try {
    writeFileSync(file, '', { flag: 'wx' })
    unlinkSync(file)
  } catch (e) {
    throw new CliError(`cannot write in ${dir}: ${reason(e)}`)
  }
}

function emptyFolder(dir: string): void {
  for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true })
}

function statOf(path: string): ReturnType<typeof statSync> | undefined {
  try {
    return statSync(path)
  } catch {
    return undefined
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}

/** An fs error in words, without its stack: `permission denied (EACCES)`. */
function reason(e: unknown): string {
  const err = e as NodeJS.ErrnoException
  const words: Record<string, string> = {
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'no space left on the device',
    ENOTDIR: 'a part of the path is a file, not a folder',
    // A virtual file system (/proc, /sys) answers ENOENT for a folder it cannot hold although the parent exists.
    ENOENT: 'the file system does not allow a folder there',
    EEXIST: 'something that is not a folder is already there',
    ENAMETOOLONG: 'the name is too long',
  }
  const code = err.code ?? ''
  return words[code] !== undefined ? `${words[code]} (${code})` : (err.message ?? String(e))
}
