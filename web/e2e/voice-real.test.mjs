// Voice notes on the whole real path (issue 14): the gateway, moderation (probe, store,
// table lock check), the table's announcement, the admin API. Chromium's fake microphone
// records real WebM/Opus with MediaRecorder.
//   A and B at a table: A records, the note is stored and announced, B's page plays it
//   (GET /v1/voice/<id>: 200 audio/webm) and B reports it; an admin (courtpiece-admin
//   grant + token) lists the report and resolves it with a mute; in the next round A's
//   voice_start is refused by the table (it asks moderation first) and A's page says so.
// Needs, besides GATEWAY_URL: COURTPIECE_E2E_BIN (the build's bin directory),
// COURTPIECE_E2E_PG_URL (the stack's database) and COURTPIECE_E2E_SIGNING_KEY (the lobby's
// signing key) for courtpiece-admin; tests/web_e2e.sh sets them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { DESKTOP, PHONE, launch, newPage, shot, shotBoth, signIn } from './lib.mjs';

const BASE = process.env.GATEWAY_URL;
const BIN = process.env.COURTPIECE_E2E_BIN;
const PG_URL = process.env.COURTPIECE_E2E_PG_URL;
const SIGNING_KEY = process.env.COURTPIECE_E2E_SIGNING_KEY;
let browser;
before(async () => {
  assert.ok(BASE, 'set GATEWAY_URL to the gateway, e.g. http://127.0.0.1:8080');
  assert.ok(BIN && PG_URL && SIGNING_KEY, 'set COURTPIECE_E2E_BIN, COURTPIECE_E2E_PG_URL and COURTPIECE_E2E_SIGNING_KEY (tests/web_e2e.sh does)');
  browser = await launch();
});
after(async () => {
  await browser?.close();
});

const run = `${Date.now() % 100000}`;

async function call(path, body, token) {
  const res = await fetch(`${BASE}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  const j = await res.json();
  return { status: res.status, body: j };
}

/** A guest made admin with courtpiece-admin, and an admin token for it. */
async function adminToken() {
  const login = await call('/v1/GuestLogin', { deviceSecret: randomBytes(24).toString('hex'), displayName: `Judge ${run}` });
  assert.equal(login.status, 200, JSON.stringify(login.body));
  const id = login.body.playerId;
  const env = { ...process.env, COURTPIECE_PG_URL: PG_URL, COURTPIECE_LOBBY_SIGNING_KEY: SIGNING_KEY };
  execFileSync(`${BIN}/courtpiece-admin`, ['grant', id, '--reason', 'web e2e moderator', '--operator', 'e2e'], { env });
  return execFileSync(`${BIN}/courtpiece-admin`, ['token', id, '--ttl', '15m'], { env, stdio: ['ignore', 'pipe', 'ignore'] })
    .toString()
    .trim();
}

async function playerId(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('cp.session') ?? '{}').playerId);
}

test('voice: record, play, report, admin mutes, the next note is refused as muted', async () => {
  const a = await newPage(browser, BASE, DESKTOP);
  const b = await newPage(browser, BASE, PHONE);
  const fetched = [];
  b.on('response', (r) => {
    if (/\/v1\/voice\/n-/.test(r.url())) fetched.push({ status: r.status(), type: r.headers()['content-type'] });
  });
  const uploads = [];
  a.on('response', (r) => {
    if (r.url().endsWith('/v1/voice') && r.request().method() === 'POST') uploads.push(r.status());
  });

  await signIn(a, `Voice A ${run}`);
  await a.getByRole('tab', { name: 'Create a table' }).click();
  await a.getByRole('button', { name: 'Create table' }).click();
  const code = (await a.getByTestId('table-code').innerText()).trim();
  await signIn(b, `Voice B ${run}`);
  await b.getByLabel('Table code or invite link').fill(code);
  await b.getByRole('button', { name: 'Join', exact: true }).click();
  await a.waitForFunction(() => document.querySelectorAll('.seat.person').length === 2, null, { timeout: 15000 });
  const author = await playerId(a);

  // A records (real WebM/Opus from the fake microphone) and stops after 2 s.
  await a.getByRole('button', { name: /Record a voice note/ }).click();
  await b.locator('.mic-badge').waitFor({ timeout: 5000 }); // B sees who is recording
  await a.waitForTimeout(600);
  await shotBoth(a, 'real-voice-recording');
  await a.waitForTimeout(1400);
  await a.getByRole('button', { name: 'Send the voice note' }).click();
  // The table announces it; B plays it 1 s later and may report it until 5 s after it ends.
  const report = b.getByRole('button', { name: 'Report' });
  await report.waitFor({ timeout: 15000 });
  assert.deepEqual(uploads, [200]);
  for (let i = 0; i < 50 && fetched.length === 0; i++) await b.waitForTimeout(100);
  assert.deepEqual(fetched, [{ status: 200, type: 'audio/webm' }]);
  await shot(b, 'real-voice-report');
  await report.click();
  await b.locator('.note', { hasText: 'reported' }).waitFor({ timeout: 5000 });

  // The admin API lists the report (filed by the table to moderation) and resolves it.
  const token = await adminToken();
  let listed;
  for (let i = 0; i < 50; i++) {
    listed = await call('/admin/v1/ListReports', { status: 'REPORT_STATUS_OPEN', author }, token);
    assert.equal(listed.status, 200, JSON.stringify(listed.body));
    if (listed.body.reports.length > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(listed.body.reports.length, 1, JSON.stringify(listed.body));
  const rep = listed.body.reports[0];
  assert.equal(rep.author, author);
  assert.equal(rep.reporter, await playerId(b));
  const player = await call('/admin/v1/ListReports', {}, (await call('/v1/GuestLogin', { deviceSecret: randomBytes(24).toString('hex'), displayName: `Nosy ${run}` })).body.accessToken);
  assert.equal(player.status, 403);
  const resolved = await call('/admin/v1/ResolveReport', { reportId: rep.reportId, action: 'ACTION_MUTE_FOR', muteForMs: String(3600000), reason: 'web e2e: abusive note' }, token);
  assert.equal(resolved.status, 200, JSON.stringify(resolved.body));
  assert.equal(resolved.body.mute.playerId, author);
  assert.equal(resolved.body.resolved[0].status, 'REPORT_STATUS_ACTIONED');

  // The next round (bots fill the empty seats): A's next note is refused, muted, in A's page:
  // by the table at voice_start (it asks moderation first), so nothing is uploaded.
  await a.getByRole('button', { name: /Start now/ }).click();
  // The count-in opens the next round's allowance (RULES.md §5.1).
  await a.waitForFunction(() => /Round starts in/.test(document.body.innerText) || !!document.querySelector('[data-testid=hand]'), null, { timeout: 20000 });
  const record = a.getByRole('button', { name: /Record a voice note/ });
  await record.waitFor({ timeout: 20000 });
  await a.waitForFunction(() => !document.querySelector('button.mic')?.hasAttribute('disabled'), null, { timeout: 20000 });
  await record.click();
  const muted = a.getByTestId('voice-msg').filter({ hasText: "You can't send voice notes until" });
  await muted.waitFor({ timeout: 10000 });
  assert.equal(await a.getByTestId('voice-msg').getAttribute('data-reason'), 'muted');
  assert.deepEqual(uploads, [200]);
  // Muted for a time: the microphone stays off, so A does not take the recording slot again.
  assert.equal(await a.locator('button.mic').getAttribute('disabled'), '');
  console.log('voice: muted message:', await muted.innerText());
  await shotBoth(a, 'real-voice-muted');
  await a.context().close();
  await b.context().close();
});
