/** The device sign-in page in Chromium: the CLI's `login` flow from the person's side (API key and admin paths). */
import t from 'tap'
import { toolSkip } from '../helpers/tool-required.js'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { startTestGateway, ADMIN_TOKEN } from '../helpers/gateway.js'
import { CHROMIUM, skipReason } from './e2e-harness.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname
  mkdirSync(ARTIFACTS, { recursive: true })
  const gw = await startTestGateway()
  const browser: Browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
  t.teardown(async () => {
    await browser.close()
    await gw.close()
  })
  const START = '/v1/cli/device_authorizations'
  const startCode = async (): Promise<{ device_code: string; user_code: string; verification_uri_complete: string }> =>
    (await gw.request('POST', START, { key: null, body: { client_name: 'chromium test' } })).body
  const poll = (deviceCode: string) => gw.request('POST', `${START}/token`, { key: null, body: { device_code: deviceCode } })
  // verification_uri_complete is built from PUBLIC_URL; the test gateway listens elsewhere.
  const pageUrl = (complete: string) => gw.url + new URL(complete).pathname + new URL(complete).search

  t.test('API key: a wrong key is refused, the right one approves the code shown', async (t) => {
    const d = await startCode()
    const page = await (await browser.newContext({ viewport: { width: 1100, height: 760 } })).newPage()
    await page.goto(pageUrl(d.verification_uri_complete))
    await page.fill('#signin-key', 'vgk_not_a_key')
    await page.click('#signin-submit')
    await page.waitForSelector('#signin-error:has-text("refused")')
    t.match(await page.textContent('#signin-error'), /refused/)
    t.equal(await page.$('#device-approve'), null, 'no approval without a valid sign-in')
    await page.fill('#signin-key', gw.apiKey)
    await page.click('#signin-submit')
    await page.waitForSelector('#device-approve')
    t.equal(await page.textContent('#device-code'), d.user_code, 'the code from the URL is shown')
    await page.screenshot({ path: `${ARTIFACTS}console-device-approve.png` })
    t.equal((await poll(d.device_code)).body.code, 'authorization_pending')
    await page.click('#device-approve')
    await page.waitForSelector('#device-result:text-is("Approved")')
    await page.screenshot({ path: `${ARTIFACTS}console-device-approved.png` })
    const redeemed = await poll(d.device_code)
    t.equal(redeemed.status, 200)
    t.equal(redeemed.body.organization_id, gw.orgId)
  })

  t.test('admin token: pick an organization, then deny', async (t) => {
    const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Picked Org' } })
    const d = await startCode()
    const page = await (await browser.newContext()).newPage()
    await page.goto(pageUrl(d.verification_uri_complete))
    await page.fill('#signin-admin-token', ADMIN_TOKEN)
    await page.click('#signin-submit')
    await page.waitForSelector('#org-picker')
    await page.selectOption('#org-picker', org.body.id)
    await page.screenshot({ path: `${ARTIFACTS}console-device-admin-picker.png` })
    await page.click('#org-continue')
    await page.waitForSelector('#device-deny')
    t.match(await page.textContent('.device'), /Picked Org/)
    await page.click('#device-deny')
    await page.waitForSelector('#device-result:text-is("Denied")')
    t.equal((await poll(d.device_code)).body.code, 'access_denied')
  })

  t.test('admin token: approve for the picked organization', async (t) => {
    const org = await gw.request('POST', '/admin/v1/organizations', { admin: true, body: { name: 'Approved Org' } })
    const d = await startCode()
    const page = await (await browser.newContext()).newPage()
    await page.goto(pageUrl(d.verification_uri_complete))
    await page.fill('#signin-admin-token', ADMIN_TOKEN)
    await page.click('#signin-submit')
    await page.selectOption('#org-picker', org.body.id)
    await page.click('#org-continue')
    await page.click('#device-approve')
    await page.waitForSelector('#device-result:text-is("Approved")')
    const redeemed = await poll(d.device_code)
    t.equal(redeemed.body.organization_id, org.body.id)
    t.equal(redeemed.body.organization_name, 'Approved Org')
  })
}
