/** The console's entry: sign in, then the device approval (/console/device) or the console itself. */
import { loadCredentials, saveCredentials, type Credentials } from './api.js'
import { deviceView } from './device.js'
import { signIn } from './signin.js'
import { consoleApp } from './app.js'

async function main(): Promise<void> {
  const root = document.getElementById('app')
  if (root === null) return
  const onDevicePage = location.pathname.replace(/\/+$/, '') === '/console/device'
  const purpose = onDevicePage
    ? 'Sign in to approve a command-line sign-in.'
    : 'Sign in to watch live calls, read transcripts and latency, and manage agents.'
  let creds: Credentials | undefined = loadCredentials()
  creds ??= await signIn(root, purpose)
  saveCredentials(creds)
  if (onDevicePage) {
    deviceView(root, creds, new URLSearchParams(location.search).get('code'))
    return
  }
  consoleApp(root, creds, () => {
    saveCredentials(undefined)
    location.reload()
  })
}

void main()
