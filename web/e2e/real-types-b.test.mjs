// The web client against the real suite: a whole round of kaat and of stack by clicking, four
// players (real.test.mjs has the whole classic game). GATEWAY_URL as in real.test.mjs.
import { test } from 'node:test';
import { DESKTOP, PHONE, newPage, shotBoth, signIn, watchTrick } from './lib.mjs';
import { createTable, joinByCode, latency, playRoundTimed, realSuite } from './real-lib.mjs';

const suite = realSuite();
const BASE = suite.base;
const run = suite.run;

for (const game of ['kaat', 'stack']) {
  test(`four players, a whole round of ${game} by clicking`, async () => {
    const pages = [];
    for (const [i, v] of [DESKTOP, PHONE, DESKTOP, PHONE].entries()) {
      const p = await newPage(suite.browser, BASE, v);
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
