// Helpers for the Playwright tests (playwright-core + Debian's Chromium).
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';

const require = createRequire(import.meta.url);
export const RESULTS = new URL('../test-results/', import.meta.url).pathname;
mkdirSync(RESULTS, { recursive: true });
export const PHONE = { width: 360, height: 740 };
export const DESKTOP = { width: 1280, height: 800 };

export async function startFake(extra = []) {
  const web = new URL('..', import.meta.url).pathname;
  const p = spawn(process.execPath, ['dev/fake-gateway.mjs', '--port', '0', '--static', 'dist', '--bot-delay-ms', '120', '--count-in-ms', '800', '--auto-start-ms', '1500', ...extra], { cwd: web, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((ok, fail) => {
    let buf = '';
    p.stdout.on('data', (d) => {
      buf += d;
      const m = /"listening":"([^"]+)"/.exec(buf);
      if (m) ok(`http://${m[1]}`);
    });
    p.on('exit', (c) => fail(new Error(`fake gateway exited ${c}`)));
  });
  return { url, stop: () => p.kill('SIGTERM') };
}

export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream', '--autoplay-policy=no-user-gesture-required', '--no-sandbox'],
  });
}

export async function newPage(browser, base, viewport = DESKTOP) {
  const ctx = await browser.newContext({ viewport, baseURL: base, permissions: ['microphone', 'clipboard-read', 'clipboard-write'] });
  const page = await ctx.newPage();
  page.on('pageerror', (e) => console.error('page error:', e.message));
  return page;
}

export async function signIn(page, name, path = '/') {
  await page.goto(path);
  await page.getByLabel('Your name').fill(name);
  await page.getByRole('button', { name: 'Play as guest' }).click();
}

export async function shot(page, name) {
  const v = page.viewportSize();
  await page.screenshot({ path: `${RESULTS}${name}-${v.width}x${v.height}.png` });
}

/** Screenshots at both sizes, the page's own size last. */
export async function shotBoth(page, name) {
  const own = page.viewportSize();
  for (const v of [PHONE, DESKTOP]) {
    await page.setViewportSize(v);
    await page.waitForTimeout(150);
    await shot(page, name);
  }
  await page.setViewportSize(own);
}

const AXE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
/** axe-core's findings on the page (WCAG 2 A/AA rules). */
export async function axe(page, name) {
  await page.addScriptTag({ content: AXE });
  const r = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const res = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21aa'] } });
    return res.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) }));
  });
  writeFileSync(`${RESULTS}axe-${name}.json`, JSON.stringify(r, null, 2));
  return r;
}

/** Does my next move if it is my turn: call / hide / a legal card. True if it acted. */
export async function act(page) {
  const suit = page.locator('.prompt .suitbtn');
  if ((await suit.count()) > 0) {
    await suit.first().click({ timeout: 2000 }).catch(() => {});
    await page.waitForSelector('.prompt .suitbtn', { state: 'detached', timeout: 3000 }).catch(() => {});
    return true;
  }
  const legal = page.locator('.hand .card.legal');
  if ((await legal.count()) > 0) {
    const card = await legal.first().getAttribute('data-card').catch(() => null);
    if (!card) return false;
    await legal.first().click({ timeout: 2000 }).catch(() => {});
    await page.waitForSelector(`.hand [data-card="${card}"]`, { state: 'detached', timeout: 3000 }).catch(() => {});
    return true;
  }
  return false;
}

/** Plays on every page until each shows the end of a round (or `until` says done). */
export async function playRound(pages, { timeoutMs = 120000, until } = {}) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (Date.now() > end) throw new Error('the round did not end in time');
    let done = true;
    for (const p of pages) {
      if (until ? !(await until(p)) : (await p.locator('.round-end, .gameover').count()) === 0) done = false;
    }
    if (done) return;
    let acted = false;
    for (const p of pages) acted = (await act(p)) || acted;
    if (!acted) await pages[0].waitForTimeout(40);
  }
}

/** Records, in every page, when each face-up card first shows on the felt (epoch ms). */
export async function watchTrick(page) {
  await page.evaluate(() => {
    window.__seen = {};
    const mark = () => {
      for (const el of document.querySelectorAll('.trick [data-card]')) {
        const c = el.getAttribute('data-card');
        if (!(c in window.__seen)) window.__seen[c] = performance.timeOrigin + performance.now();
      }
    };
    new MutationObserver(mark).observe(document.body, { subtree: true, childList: true });
  });
}
