// The web client against the real suite, one player alone with bots: five timeouts hand the
// seat to a bot until "I'm back". GATEWAY_URL as in real.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PHONE, act, newPage, shotBoth, signIn } from './lib.mjs';
import { realSuite } from './real-lib.mjs';

const suite = realSuite();
const BASE = suite.base;
const run = suite.run;

// RULES.md §4.7: after five turns in a row run out, a bot plays for you until you act again;
// the page offers "I'm back" (the `take_back` command) and the next turn is yours.
test('five timeouts: a bot plays for you until you press "I\'m back"', async () => {
  const p = await newPage(suite.browser, BASE, PHONE);
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
