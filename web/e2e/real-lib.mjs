// Helpers of the real-suite browser tests (real*.test.mjs): create and join a table by
// clicking, play a round by clicking while timing each card, the card latency figures.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { DESKTOP, PHONE, act, launch, newPage, shotBoth, signIn, watchTrick } from './lib.mjs';

/** One browser per test file; `run` tells this run's players apart. */
export function realSuite() {
  const suite = { base: process.env.GATEWAY_URL, browser: null, run: `${Date.now() % 100000}` };
  before(async () => {
    assert.ok(suite.base, 'set GATEWAY_URL to the gateway, e.g. http://127.0.0.1:8080');
    suite.browser = await launch();
  });
  after(async () => {
    await suite.browser?.close();
  });
  return suite;
}

export async function createTable(page, game, { target, isPublic = false } = {}) {
  await page.getByRole('tab', { name: 'Create a table' }).click();
  await page.locator(`input[name=game][value=${game}]`).check({ force: true });
  if (target !== undefined) {
    const t = page.getByLabel(/Target/);
    if ((await t.evaluate((el) => el.tagName)) === 'SELECT') await t.selectOption(String(target));
    else await t.fill(String(target));
  }
  if (isPublic) await page.getByLabel(/Public/).check();
  await page.getByRole('button', { name: 'Create table' }).click();
  return (await page.getByTestId('table-code').innerText()).trim();
}

export async function joinByCode(page, code) {
  await page.getByLabel('Table code or invite link').fill(code);
  await page.getByRole('button', { name: 'Join', exact: true }).click();
  await page.locator('.seat.pos-bottom', { hasText: 'You' }).waitFor({ timeout: 15000 });
}

export async function toLobby(page) {
  const back = page.getByRole('button', { name: 'Leave the table' });
  if (await back.count()) await back.click();
  await page.getByRole('tab', { name: 'Join a game' }).waitFor();
}

/** Plays by clicking on every page until each shows the round's end; times each card. */
export async function playRoundTimed(pages, clicks, { reload } = {}) {
  const end = Date.now() + 240000;
  let reloaded = !reload;
  while (Date.now() < end) {
    const ends = await Promise.all(pages.map((p) => p.locator('.round-end, .gameover').count()));
    if (ends.every((n) => n > 0)) return;
    let acted = false;
    for (const p of pages) {
      const legal = p.locator('.hand .card.legal');
      const hide = await p.locator('.prompt', { hasText: 'face down' }).count();
      if (hide) {
        await p.locator('.hand .card').first().click();
        acted = true;
      } else if ((await legal.count()) > 0 && (await p.locator('.prompt .suitbtn').count()) === 0) {
        const r = await p.evaluate(() => {
          const el = document.querySelector('.hand .card.legal');
          if (!el) return null;
          const t0 = performance.timeOrigin + performance.now();
          el.click();
          return { card: el.getAttribute('data-card'), t0 };
        });
        if (r) {
          clicks.push(r);
          acted = true;
          await p.waitForSelector(`.hand [data-card="${r.card}"]`, { state: 'detached', timeout: 5000 }).catch(() => {});
        }
      } else acted = (await act(p)) || acted;
    }
    if (!reloaded && clicks.length >= 6) {
      reloaded = true;
      await reload(pages);
    }
    if (!acted) await pages[0].waitForTimeout(40);
  }
  throw new Error('the round did not end in time');
}

/**
 * Click -> the card on every screen. A page that reloaded (`reloaded`: the page and when its
 * watcher restarted) did not watch cards clicked before that: it drew them from the fresh
 * view, so for those cards only the other screens count (counting the reload's own time as
 * a card's latency once made the p95 620 ms).
 */
export async function latency(pages, clicks, reloaded = null) {
  const lat = [];
  for (const c of clicks) {
    const watching = pages.filter((p) => !(reloaded && p === reloaded.page && c.t0 < reloaded.since));
    const seen = await Promise.all(watching.map((p) => p.evaluate((card) => window.__seen?.[card] ?? null, c.card)));
    if (seen.every((x) => x !== null && x >= c.t0 - 5)) lat.push(Math.max(...seen) - c.t0);
  }
  lat.sort((a, b) => a - b);
  const q = (f) => lat[Math.min(lat.length - 1, Math.floor(f * lat.length))];
  return { samples: lat.length, p50_ms: q(0.5), p95_ms: q(0.95), max_ms: lat[lat.length - 1] };
}

/** One test per game type: four players (desktop and phone) play a whole round by clicking. */
export function wholeRoundTests(games) {
  const suite = realSuite();
  for (const game of games) {
    test(`four players, a whole round of ${game} by clicking`, async () => {
      const pages = [];
      for (const [i, v] of [DESKTOP, PHONE, DESKTOP, PHONE].entries()) {
        const p = await newPage(suite.browser, suite.base, v);
        await signIn(p, `${game} ${i} ${suite.run}`.slice(0, 20));
        pages.push(p);
      }
      const code = await createTable(pages[0], game);
      for (const p of pages.slice(1)) await joinByCode(p, code);
      for (const p of pages) await p.getByTestId('hand').waitFor({ timeout: 40000 });
      for (const p of pages) await watchTrick(p);
      const clicks = [];
      await playRoundTimed(pages, clicks);
      await shotBoth(pages[0], `real-${game}-round-end`);
      console.log(`${game}: card on all four screens:`, JSON.stringify(await latency(pages, clicks)));
      for (const p of pages) await p.context().close();
    });
  }
}
