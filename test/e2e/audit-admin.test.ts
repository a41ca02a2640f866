import { existsSync } from 'node:fs'
import { afterAll, describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { createPage } from '@nuxt/test-utils/e2e'
import { decodeJwt } from 'jose'
import { setupApp } from './app'
import { startServerProcess, type ServerProcess } from './server-processes'
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../support/chromium'

// The audit admin page of a built app (test/fixtures/client: `audit.adminPage: '/admin/security'`, admins read
// the whole log) in Chromium: an administrator finds a user, sees their sessions and audit trail, ends a session
// and impersonates them; anyone else gets the 403 page. A build without `adminPage` (org-access) has neither the
// page nor its endpoints.
if (!existsSync(CHROMIUM_PATH)) throw new Error(`Chromium not found at ${CHROMIUM_PATH}: apt-get install -y chromium, or set CHROMIUM_PATH`)
const server = await setupApp('client', {}, { browser: true, browserOptions: { type: 'chromium', launch: { executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS } } })
const PAGE = '/admin/security'

const others: ServerProcess[] = []
afterAll(() => Promise.all(others.map(s => s.stop())))

/** A fresh browser context logged in as a fixture user through the login page; its session id. */
async function loggedIn(user: 'alice' | 'bob'): Promise<{ page: Page, sid: string }> {
  const page = await createPage()
  const token = page.waitForResponse(r => new URL(r.url()).pathname === '/auth/token' && r.status() === 200)
  await page.goto(`${server.url}/login`)
  await page.waitForSelector('html[data-hydrated]')
  await page.locator(`[data-testid="login-${user}"]`).click()
  const { accessToken } = await (await token).json() as { accessToken: string }
  await page.waitForURL(url => url.pathname === '/dashboard')
  await page.locator('[data-testid="signed-in"]').waitFor()
  return { page, sid: decodeJwt(accessToken).sid as string }
}

/** The admin page, loaded and answered by the server (its access check done). */
async function openAdminPage(page: Page): Promise<void> {
  const checked = page.waitForResponse(r => new URL(r.url()).pathname === '/auth/audit/users')
  await page.goto(`${server.url}${PAGE}`)
  await checked
  await page.waitForSelector('html[data-hydrated]')
}

const cells = (page: Page, table: string) => page.getByRole('table', { name: table }).locator('tbody tr')

describe('the audit admin page in a real browser', () => {
  it('an administrator finds a user, sees their sessions and trail, ends one session, then impersonates them', async () => {
    const bob1 = await loggedIn('bob')
    const bob2 = await loggedIn('bob')
    const { page } = await loggedIn('alice')
    await openAdminPage(page)
    await expect.poll(() => page.getByRole('button', { name: 'Search' }).isEnabled()).toBe(true)

    await page.getByLabel('User id or email').fill('bob')
    const trail = page.waitForResponse(r => new URL(r.url()).pathname === '/auth/audit' && new URL(r.url()).searchParams.get('user') === 'bob')
    await page.getByRole('button', { name: 'Search' }).click()
    await page.getByRole('heading', { name: 'User bob' }).waitFor()
    expect((await trail).status()).toBe(200)
    await expect.poll(() => cells(page, 'Sessions').count()).toBe(2)
    const rows = await cells(page, 'Sessions').locator('th').allTextContents()
    expect(rows.map(text => text.trim()).sort()).toEqual([bob1.sid, bob2.sid].sort())

    // End bob's first session: its row goes, the trail shows who ended it.
    const ended = page.waitForResponse(r => r.request().method() === 'DELETE' && r.url().endsWith(`/sessions/${bob1.sid}`))
    await cells(page, 'Sessions').filter({ hasText: bob1.sid }).getByRole('button', { name: 'End session' }).click()
    expect((await ended).status()).toBe(200)
    await page.getByRole('status').filter({ hasText: `Session ${bob1.sid} ended.` }).waitFor()
    await expect.poll(() => cells(page, 'Sessions').locator('th').allTextContents()).toEqual([bob2.sid])
    const revoked = cells(page, 'Audit trail').filter({ has: page.locator('th', { hasText: /^session\.revoked$/ }) }).filter({ hasText: bob1.sid })
    await revoked.first().waitFor()
    expect(await revoked.first().locator('td').allTextContents()).toEqual([expect.any(String), 'success', 'alice', 'bob', bob1.sid, expect.any(String), 'reason: host'])

    // That session can no longer refresh; the other one lives.
    expect((await bob1.page.request.post(`${server.url}/auth/refresh`)).status()).toBe(401)
    expect((await bob2.page.request.post(`${server.url}/auth/refresh`)).status()).toBe(200)

    // Impersonation is on: the administrator continues as bob, away from the page.
    await page.getByLabel('Reason').fill('support ticket 7')
    await page.getByRole('button', { name: 'Impersonate' }).click()
    await page.waitForURL(url => url.pathname === '/dashboard')
    await page.locator('[data-testid="impersonation-banner"]').filter({ hasText: 'Impersonating Bob Builder (you are Alice Admin)' }).waitFor()
  })

  it('a user without the permission gets the 403 page; a visitor goes to the login page and back', async () => {
    const { page } = await loggedIn('bob')
    const check = page.waitForResponse(r => new URL(r.url()).pathname === '/auth/audit/users')
    await page.goto(`${server.url}${PAGE}`)
    const refused = await check
    expect(refused.status()).toBe(403)
    expect(await refused.json()).toMatchObject({ error: 'permission_denied' })
    await page.getByText('403').first().waitFor()
    expect(await page.getByRole('heading', { name: 'Security' }).count()).toBe(0)

    const visitor = await createPage()
    await visitor.goto(`${server.url}${PAGE}`)
    await visitor.waitForURL(url => url.pathname === '/login')
    expect(new URL(visitor.url()).searchParams.get('redirect')).toBe(PAGE)
  })

  it('a build without adminPage has neither the page nor its endpoints', async () => {
    const plain = await startServerProcess({}, 'org-access')
    others.push(plain)
    expect((await plain.fetch(PAGE, { headers: { accept: 'text/html' } })).status).toBe(404)
    for (const path of ['/auth/audit/users?q=bob', '/auth/audit/users/bob/sessions']) expect((await plain.fetch(path)).status, path).toBe(404)
    expect((await plain.fetch('/auth/audit/users/bob/sessions/abc', { method: 'DELETE' })).status).toBe(404)
  })
})
