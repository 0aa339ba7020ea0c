import { spawn } from 'node:child_process'

/**
 * Opens `url` in the desktop's browser, best effort (`open` on macOS, `start` on Windows, `xdg-open` elsewhere);
 * false when that is off (VOXGATE_NO_BROWSER=1, a headless machine) or failed to start. The caller prints the URL
 * in any case.
 */
export function openBrowser(url: string, env: NodeJS.ProcessEnv): boolean {
  if (env.VOXGATE_NO_BROWSER === '1' || env.VOXGATE_NO_BROWSER === 'true') return false
  const [cmd, args] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '""', url]]
        : ['xdg-open', [url]]
  if (process.platform === 'linux' && env.DISPLAY === undefined && env.WAYLAND_DISPLAY === undefined) return false
  try {
    const child = spawn(cmd, args as string[], { stdio: 'ignore', detached: true })
    child.on('error', () => undefined)
    child.unref()
    return true
  } catch {
    return false
  }
}
