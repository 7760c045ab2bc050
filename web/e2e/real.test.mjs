// The web client against the real suite (gateway serving web/dist, lobby, table, wallet,
// Postgres, Redis). GATEWAY_URL is the gateway's HTTP address, e.g. http://127.0.0.1:8080.
// Four browser contexts: sign in, create, join by code / link / quick join, play by clicking
// a whole game (classic to 1) and a whole round of every game type, reload mid-round, close a
// tab and come back, a voice note. Screenshots and figures go to test-results/real-*.
//   GATEWAY_URL=http://127.0.0.1:8080 npm run e2e:real
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { DESKTOP, PHONE, RESULTS, act, launch, newPage, shotBoth, signIn, watchTrick } from './lib.mjs';

const BASE = process.env.GATEWAY_URL;
let browser;
before(async () => {
  assert.ok(BASE, 'set GATEWAY_URL to the gateway, e.g. http://127.0.0.1:8080');
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const run = `${Date.now() % 100000}`;

async function createTable(page, game, { target, isPublic = false } = {}) {
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

async function joinByCode(page, code) {
  await page.getByLabel('Table code or invite link').fill(code);
  await page.getByRole('button', { name: 'Join', exact: true }).click();
  await page.locator('.seat.pos-bottom', { hasText: 'You' }).waitFor({ timeout: 15000 });
}

async function toLobby(page) {
  const back = page.getByRole('button', { name: 'Leave the table' });
  if (await back.count()) await back.click();
  await page.getByRole('tab', { name: 'Join a game' }).waitFor();
}

/** Plays by clicking on every page until each shows the round's end; times each card. */
async function playRoundTimed(pages, clicks, { reload } = {}) {
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
async function latency(pages, clicks, reloaded = null) {
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

test('four players: create, join by code / link / quick join, a whole game, reload, come back, voice', async () => {
  const host = await newPage(browser, BASE, DESKTOP);
  const p2 = await newPage(browser, BASE, PHONE);
  const p3 = await newPage(browser, BASE, DESKTOP);
  const p4 = await newPage(browser, BASE, PHONE);
  await signIn(host, `Host ${run}`);
  await host.getByTestId('coins').waitFor();
  await shotBoth(host, 'real-lobby');
  const code = await createTable(host, 'classic', { target: 1, isPublic: true });
  await signIn(p2, `Code ${run}`);
  await joinByCode(p2, code);
  await signIn(p3, `Link ${run}`, `/t/${code}`);
  await p3.locator('.seat.pos-bottom', { hasText: 'You' }).waitFor({ timeout: 15000 });
  await signIn(p4, `Quick ${run}`);
  await p4.getByRole('button', { name: 'Play now' }).click();
  await p4.locator('.seat.pos-bottom', { hasText: 'You' }).waitFor({ timeout: 15000 });
  const pages = [host, p2, p3, p4];
  for (const p of pages) await p.waitForFunction(() => document.querySelectorAll('.seat.person').length === 4, null, { timeout: 15000 });
  await shotBoth(host, 'real-table-full');

  // the game starts 7 s after the fourth seat; count-in 7 s; then the deal
  for (const p of pages) await p.getByTestId('hand').waitFor({ timeout: 40000 });
  for (const p of pages) await watchTrick(p);
  const clicks = [];
  let reloaded = null;
  await playRoundTimed(pages, clicks, {
    reload: async () => {
      await p3.reload();
      await p3.getByTestId('hand').waitFor({ timeout: 15000 });
      await watchTrick(p3);
      reloaded = { page: p3, since: await p3.evaluate(() => performance.timeOrigin + performance.now()) };
    },
  });
  await shotBoth(host, 'real-game-over');
  // Classic counts tricks: the round's winners took at least 7 (the panel once showed 0-0).
  const tricks = await host.locator('.roundinfo tr', { hasText: 'Tricks' }).locator('td').allInnerTexts();
  assert.equal(tricks.length, 2);
  assert.ok(Math.max(...tricks.map(Number)) >= 7, `tricks in the round panel: ${tricks}`);
  const lat = await latency(pages, clicks, reloaded);
  writeFileSync(`${RESULTS}latency-real.json`, JSON.stringify(lat, null, 2));
  console.log('card on all four screens (real suite):', JSON.stringify(lat));

  for (const p of pages) {
    const stay = p.getByRole('button', { name: 'Stay for the next game' });
    if (await stay.count()) await stay.click();
  }
  // a voice note: recorded with Chromium's fake microphone; played and reported, or (no
  // moderation service yet) the clear message and the lock released
  await host.getByRole('button', { name: /Record a voice note/ }).click();
  await host.waitForTimeout(1500);
  await host.getByRole('button', { name: 'Send the voice note' }).click();
  const report = p2.getByRole('button', { name: 'Report' });
  const unavailable = host.getByTestId('voice-msg').filter({ hasText: 'not available on this server' });
  await Promise.race([report.waitFor({ timeout: 15000 }), unavailable.waitFor({ timeout: 15000 })]);
  if (await report.count()) {
    await report.click();
    await p2.locator('.note', { hasText: 'reported' }).waitFor();
  } else {
    console.log('voice notes: not available on this server (no moderation service): discard sent');
  }

  // close a tab and come back: a new tab finds the table under "Your tables"
  const ctx = p4.context();
  await p4.close();
  const back = await ctx.newPage();
  await back.goto('/');
  await back.getByRole('button', { name: 'Resume' }).first().click();
  await back.locator('.seat.pos-bottom', { hasText: 'You' }).waitFor({ timeout: 15000 });
  await shotBoth(back, 'real-came-back');
  for (const p of [host, p2, p3, back]) await p.context().close();
});

for (const game of ['piles', 'hidden', 'kaat', 'stack']) {
  test(`four players, a whole round of ${game} by clicking`, async () => {
    const pages = [];
    for (const [i, v] of [DESKTOP, PHONE, DESKTOP, PHONE].entries()) {
      const p = await newPage(browser, BASE, v);
      await signIn(p, `${game} ${i} ${run}`.slice(0, 20));
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

// RULES.md §4.7: after five turns in a row run out, a bot plays for you until you act again;
// the page offers "I'm back" (the `take_back` command) and the next turn is yours.
test('five timeouts: a bot plays for you until you press "I\'m back"', async () => {
  const p = await newPage(browser, BASE, PHONE);
  await signIn(p, `solo ${run}`.slice(0, 20));
  await p.getByRole('tab', { name: 'Create a table' }).click();
  await p.locator('input[name=game][value=classic]').check({ force: true });
  await p.getByLabel(/Turn time/).fill('5');
  await p.getByRole('button', { name: 'Create table' }).click();
  await p.getByTestId('start-now').click();
  const back = p.getByTestId('take-back');
  await back.waitFor({ timeout: 120000 }); // five of my turns ran out (5 s each)
  await shotBoth(p, 'real-bot-plays-for-you');
  await back.click();
  await back.waitFor({ state: 'detached', timeout: 10000 });
  // Mine again: the next turn waits for me (a card I can click), not for the bot.
  await p.locator('.hand .card.legal').first().waitFor({ timeout: 60000 });
  assert.ok(await act(p), 'a legal card was played by clicking after taking the seat back');
  await p.context().close();
});
