/**
 * The console's campaigns page in Chromium: a running campaign's progress, pause and resume from the page, and one
 * campaign's contacts with each attempt's outcome. Screenshots go to test/artifacts/.
 */
import t from 'tap'
import { mkdirSync } from 'node:fs'
import { chromium, type Browser } from 'playwright-core'
import { toolSkip } from '../helpers/tool-required.js'
import { CHROMIUM, skipReason } from './e2e-harness.js'
import { eventually } from '../helpers/eventually.js'
import { campaignBody, campaignTenant, runCampaign, startCampaignWorld, startScriptedApi } from '../campaigns/campaign-setup.js'

const skip = toolSkip(skipReason()) || undefined
if (skip !== undefined) {
  t.plan(0, skip)
} else {
  const ARTIFACTS = new URL('../artifacts/', import.meta.url).pathname
  mkdirSync(ARTIFACTS, { recursive: true })
  const { c } = await startCampaignWorld()
  t.teardown(() => c.gw.close())
  // Slow calls, one at a time: the campaign is still running when the page looks at it and pauses it (at 150 ms a
  // step it finished before the pause on a loaded machine).
  const { api } = await startScriptedApi(c, {}, { kind: 'no-answer' }, 400)
  t.teardown(() => api.close())
  const tenant = await campaignTenant(c, api)
  const numbers = Array.from({ length: 6 }, (_, i) => `+1415555${String(700 + i).padStart(4, '0')}`)
  const id = await runCampaign(
    c,
    tenant,
    campaignBody(tenant, { name: 'Renewals', max_concurrency: 1 }),
    numbers.map((phone_number) => ({ phone_number })),
  )
  const browser: Browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] })
  t.teardown(() => browser.close())
  const page = await (await browser.newContext({ viewport: { width: 1360, height: 900 } })).newPage()
  const pageErrors: string[] = []
  page.on('pageerror', (e) => pageErrors.push(String(e)))

  t.test('the campaigns list shows progress; pause and resume from the page', async (t) => {
    await page.goto(`${c.gw.url}/console`)
    await page.fill('#signin-key', tenant.apiKey)
    await page.click('#signin-submit')
    await page.waitForSelector('#content')
    await page.goto(`${c.gw.url}/console#/campaigns`)
    const row = `#campaigns tr[data-campaign-id="${id}"]`
    await page.waitForSelector(`${row} [data-status="running"]`)
    t.match(await page.textContent(row), /Renewals/)
    t.match(await page.textContent(`${row} .dialled`), /\/ 6$/)
    await page.screenshot({ path: `${ARTIFACTS}console-campaigns.png`, fullPage: true })
    await page.click(`${row} .campaign-pause`)
    await page.waitForSelector(`${row} [data-status="paused"]`)
    const paused = await c.gw.request('GET', `/v1/campaigns/${id}`, { key: tenant.apiKey })
    t.equal(paused.body.status, 'paused', 'the page paused it')
    await page.click(`${row} .campaign-resume`)
    await page.waitForSelector(`${row} [data-status="running"]`)
    t.equal((await c.gw.request('GET', `/v1/campaigns/${id}`, { key: tenant.apiKey })).body.status, 'running')
  })

  t.test("one campaign: its progress and each contact's attempts", async (t) => {
    await page.click(`#campaigns tr[data-campaign-id="${id}"] a`)
    await page.waitForSelector('#campaign-progress')
    await page.waitForSelector('#campaign-contacts tr[data-status="done"] .history a', { timeout: 20_000 })
    const contacts = await c.gw.request('GET', `/v1/campaigns/${id}/contacts`, { key: tenant.apiKey })
    const done = contacts.body.contacts.find((x: { status: string }) => x.status === 'done')
    const cell = await page.textContent(`#campaign-contacts tr[data-contact-id="${done.id}"]`)
    t.match(cell, new RegExp(`\\${done.phone_number}.*no_answer`))
    const link = await page.getAttribute(`#campaign-contacts tr[data-contact-id="${done.id}"] .history a`, 'href')
    t.equal(link, `#/session/${tenant.agentId}/${done.history[0].session_id}`, 'each attempt links to its call')
    await eventually(
      async () => ((await page.textContent('#campaign-progress .remaining'))?.trim() === '0' ? true : undefined),
      30_000,
      'the campaign to finish on the page',
    )
    await page.screenshot({ path: `${ARTIFACTS}console-campaign.png`, fullPage: true })
    t.same(pageErrors, [])
  })
}
