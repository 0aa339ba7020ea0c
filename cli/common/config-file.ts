import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync, renameSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join } from 'node:path'

/** What `voxgate login` stores: the gateway, the organization and the CLI's own API key for it. */
export interface LoginConfig {
  gateway: string
  api_key: string
  key_id: string
  organization_id: string
  organization_name: string
}

/** `$XDG_CONFIG_HOME/voxgate/config.json`, else `~/.config/voxgate/config.json`. */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CONFIG_HOME !== undefined && env.XDG_CONFIG_HOME !== '' ? env.XDG_CONFIG_HOME : join(homedir(), '.config')
  return join(base, 'voxgate', 'config.json')
}

/** The stored login, or undefined when there is none (or the file is not ours). */
export function readLoginConfig(env: NodeJS.ProcessEnv = process.env): LoginConfig | undefined {
  let text: string
  try {
    text = readFileSync(configPath(env), 'utf8')
  } catch {
    return undefined
  }
  try {
    const c = JSON.parse(text) as Partial<LoginConfig>
    if (typeof c.gateway !== 'string' || typeof c.api_key !== 'string') return undefined
    return c as LoginConfig
  } catch {
    return undefined
  }
}

/** Writes the login with mode 0600 (the folder 0700), through a temporary file so a reader never sees half. */
export function writeLoginConfig(config: LoginConfig, env: NodeJS.ProcessEnv = process.env): string {
  const file = configPath(env)
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const tmp = `${file}.tmp-${process.pid}`
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 })
  // An umask or an existing file's mode must not widen it.
  chmodSync(tmp, 0o600)
  renameSync(tmp, file)
  return file
}

/** Removes the stored login; true when there was one. */
export function removeLoginConfig(env: NodeJS.ProcessEnv = process.env): boolean {
  const file = configPath(env)
  try {
    readFileSync(file)
  } catch {
    return false
  }
  rmSync(file, { force: true })
  return true
}
