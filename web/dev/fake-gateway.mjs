#!/usr/bin/env node
// A fake Court Piece gateway for development and the Playwright tests: the JSON API
// (POST /v1/<Method>), the Play WebSocket (/v1/play) with a small scripted table that deals
// and plays whole rounds of every game type (bots play at once), and the static files of
// web/dist. It follows docs/client-api.md closely enough to drive the UI; it is NOT the game's
// rules engine (libs/rules is) and keeps no state across restarts.
//
//   node dev/fake-gateway.mjs [--port 8090] [--static dist] [--seed 1] [--bot-delay-ms 250]
//                             [--count-in-ms 1500] [--access-ttl-ms 900000] [--voice]
// Test hooks (not part of the API): POST /test/notice {"tableId","type"} sends a notice to
// every stream of the table; POST /test/drop {"tableId"} closes every stream of the table
// with 1006-like code 4014; GET /test/tables lists the tables.
import { createServer } from 'node:http';
import { readFileSync, existsSync, statSync } from 'node:fs';
import { join, extname, resolve } from 'node:path';
import { WebSocketServer } from 'ws';

const args = process.argv.slice(2);
function opt(name, dflt) {
  const i = args.indexOf(`--${name}`);
  if (i < 0) return dflt;
  const v = args[i + 1];
  return v === undefined || v.startsWith('--') ? true : v;
}
const PORT = Number(opt('port', 8090));
const STATIC = opt('static', '') ? resolve(String(opt('static', 'dist'))) : '';
let seedState = Number(opt('seed', 1)) >>> 0 || 1;
const BOT_DELAY_MS = Number(opt('bot-delay-ms', 250));
const COUNT_IN_MS = Number(opt('count-in-ms', 1500));
const ACCESS_TTL_MS = Number(opt('access-ttl-ms', 15 * 60 * 1000));
let VOICE = !!opt('voice', false);
const AUTO_START_MS = Number(opt('auto-start-ms', 4000));
const VOTE_MS = 20000;

function rand() {
  // xorshift32: deterministic deals for the tests
  seedState ^= seedState << 13;
  seedState >>>= 0;
  seedState ^= seedState >>> 17;
  seedState ^= seedState << 5;
  seedState >>>= 0;
  return seedState / 4294967296;
}

// --- players and sessions ---------------------------------------------------------------
const players = new Map(); // device -> {id, name, coins, avatar}
let publicProfileCalls = 0; // GetPublicProfiles calls answered (the e2e test reads it)
const byId = new Map();
const tokens = new Map(); // token -> {player, exp}
const refreshTokens = new Map();
let nextToken = 1;

function session(p) {
  const access = `cp1.fake${nextToken++}.${p.id}`;
  const refresh = `r-${nextToken++}-${p.id}`;
  const exp = Date.now() + ACCESS_TTL_MS;
  tokens.set(access, { player: p.id, exp });
  refreshTokens.set(refresh, p.id);
  return {
    playerId: p.id,
    role: 'player',
    accessToken: access,
    accessExpiresAtMs: String(exp),
    refreshToken: refresh,
    refreshExpiresAtMs: String(Date.now() + 30 * 86400000),
    created: false,
  };
}
function auth(req) {
  const h = req.headers.authorization ?? '';
  const t = h.startsWith('Bearer ') ? h.slice(7) : '';
  return checkToken(t);
}
function checkToken(t) {
  const s = tokens.get(t);
  if (!s || s.exp < Date.now()) return null;
  return byId.get(s.player) ?? null;
}
class Status extends Error {
  constructor(code, name, msg) {
    super(msg);
    this.code = code;
    this.status = name;
  }
}
const HTTP = { 3: 400, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 12: 501, 14: 503, 16: 401 };
const bad = (m) => new Status(3, 'INVALID_ARGUMENT', m);
const notFound = (m) => new Status(5, 'NOT_FOUND', m);
const failed = (m) => new Status(9, 'FAILED_PRECONDITION', m);

// --- tables --------------------------------------------------------------------------------
const tables = new Map();
const byCode = new Map();
let nextTable = 1;
const requestIds = new Map();

const SUITS = ['C', 'D', 'H', 'S'];
const RANKS = '23456789TJQKA';
const rankOf = (c) => RANKS.indexOf(c[0]);
const suitOf = (c) => c[1];
const sortHand = (h) => [...h].sort((a, b) => SUITS.indexOf(suitOf(a)) * 13 + rankOf(a) - (SUITS.indexOf(suitOf(b)) * 13 + rankOf(b)));

function tableRef(t, seat = -1) {
  return {
    tableId: t.id,
    code: t.code,
    inviteLink: `http://127.0.0.1:${server.address()?.port ?? PORT}/t/${t.code}`,
    // botLevel as it was asked ("" is left out, as proto3 JSON leaves out a default)
    options: { gameOptions: t.gameOptions, betCoins: String(t.bet), turnTimeMs: String(t.turnTimeMs), public: t.public, ...(t.botLevelAsked ? { botLevel: t.botLevelAsked } : {}) },
    hostPlayer: t.host,
    seat,
  };
}

function makeTable(host, options) {
  let go;
  try {
    go = JSON.parse(options?.gameOptions || '{"game":"classic"}');
  } catch {
    throw bad('game_options: not JSON');
  }
  if (!['classic', 'piles', 'hidden', 'kaat', 'stack'].includes(go.game)) throw bad('game_options: option \'game\' must be one of "classic", "piles", "hidden", "kaat", "stack"');
  const bet = Number(options?.betCoins ?? 50);
  if (!(bet >= 25 && bet <= 1000)) throw bad('bet_coins must be 25..1000');
  const tt = Number(options?.turnTimeMs ?? 15000);
  if (!(tt >= 5000 && tt <= 30000)) throw bad('turn_time_ms must be 5000..30000');
  // As the table: "easy" (also "" or left out), "normal" or "strong". The fake's bots play
  // the same (the lowest legal card) at every level.
  const botLevel = options?.botLevel ?? '';
  if (!['', 'easy', 'normal', 'strong'].includes(botLevel)) throw bad('bot_level must be easy, normal or strong');
  let code;
  do code = String(100000 + Math.floor(rand() * 900000));
  while (byCode.has(code));
  const t = {
    id: `t-fake${nextTable++}`,
    code,
    host: host.id,
    gameOptions: JSON.stringify(go),
    go,
    game: go.game,
    target: Number(go.target ?? { classic: 5, stack: 7 }[go.game] ?? 10),
    bet,
    turnTimeMs: tt,
    public: !!options?.public,
    botLevelAsked: botLevel,
    botLevel: botLevel || 'easy',
    seats: [0, 1, 2, 3].map((s) => ({ seat: s, kind: 'empty', player: '', connected: false, left: false })),
    phase: 'waiting',
    seq: 0,
    streams: [[], [], [], []],
    conns: new Set(),
    score: [0, 0],
    gameNo: 0,
    roundNo: 0,
    dealer: Math.floor(rand() * 4),
    round: null,
    vote: null,
    recording: -1,
    notes: [],
    timers: new Set(),
    countInUntil: 0,
    autoStartAt: 0,
    pot: 0,
  };
  t.seats[0] = { seat: 0, kind: 'person', player: host.id, connected: false, left: false };
  tables.set(t.id, t);
  byCode.set(code, t);
  return t;
}

function later(t, ms, f) {
  const h = setTimeout(() => {
    t.timers.delete(h);
    f();
  }, ms);
  t.timers.add(h);
  return h;
}

function emitTo(t, seat, ev) {
  const s = t.seats[seat];
  if (s.kind !== 'person') return;
  t.seq += 1;
  const full = { seq: String(t.seq), type: ev.type, seat: ev.seat ?? -1, player: ev.player ?? '', cards: ev.cards ?? [], detail: ev.detail ?? '', value: String(ev.value ?? 0) };
  const q = t.streams[seat];
  q.push(full);
  if (q.length > 256) q.shift();
  for (const c of t.conns) if (c.seat === seat && c.player === s.player && c.live) c.sendJson({ event: full });
}
function emitAll(t, ev) {
  for (let s = 0; s < 4; s++) emitTo(t, s, ev);
}
const seatOf = (t, player) => t.seats.findIndex((x) => x.kind === 'person' && x.player === player);
const people = (t) => t.seats.filter((x) => x.kind === 'person').length;

function info(t) {
  return {
    tableId: t.id,
    code: t.code,
    hostPlayer: t.host,
    betCoins: String(t.bet),
    turnTimeMs: String(t.turnTimeMs),
    gameOptions: t.gameOptions,
    botLevel: t.botLevel,
    phase: t.phase,
    seats: t.seats.map((x) => ({ seat: x.seat, kind: x.kind, player: x.player, connected: x.kind !== 'person' || x.connected, away: x.kind === 'person' && !x.connected && !!t.round })),
    round: String(t.roundNo),
    seq: String(t.seq),
    listed: t.public,
  };
}

// --- the game ----------------------------------------------------------------------------------
function startGame(t) {
  t.autoStartAt = 0;
  for (let s = 0; s < 4; s++) {
    if (t.seats[s].kind === 'empty') {
      t.seats[s] = { seat: s, kind: 'bot', player: `bot-${s}`, connected: true, left: false };
      emitAll(t, { type: 'seated', seat: s, player: `bot-${s}`, detail: 'bot' });
    }
  }
  t.gameNo += 1;
  t.endEarly = new Set(); // agreements are per game, as the table's
  t.score = [0, 0];
  emitAll(t, { type: 'game_started', value: t.gameNo });
  countIn(t);
}
function countIn(t) {
  t.phase = 'count_in';
  t.countInUntil = Date.now() + COUNT_IN_MS;
  emitAll(t, { type: 'count_in', value: t.countInUntil });
  later(t, COUNT_IN_MS, () => {
    t.countInUntil = 0;
    t.phase = 'staking';
    t.pot = 4 * t.bet;
    for (const s of t.seats) if (s.kind === 'person') byId.get(s.player).coins -= t.bet;
    emitAll(t, { type: 'staking', value: t.pot });
    later(t, 100, () => startRound(t));
  });
}
function shuffled() {
  const d = [];
  for (const s of SUITS) for (const r of RANKS) d.push(r + s);
  for (let i = d.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [d[i], d[j]] = [d[j], d[i]];
  }
  return d;
}
function startRound(t) {
  t.roundNo += 1;
  t.phase = 'playing';
  const deck = shuffled();
  const caller = (t.dealer + 1) % 4;
  const r = {
    no: t.roundNo,
    caller,
    dealer: t.dealer,
    hands: [0, 1, 2, 3].map((s) => sortHand(deck.slice(s * 13, s * 13 + 13))),
    phase: t.game === 'kaat' ? 'play' : 'call',
    trump: '',
    trumpActive: false,
    hidden: '',
    shown: false,
    asked: -1,
    turn: caller,
    deadline: 0,
    current: [], // {seat, card, faceDown}
    leader: caller,
    tricks: [],
    won: [0, 0],
    count: [0, 0],
    pile: 0,
    lastWinner: -1,
    pickups: 0,
    stack: 0,
    marker: -1,
    timeouts: [0, 0, 0, 0],
  };
  t.round = r;
  emitAll(t, { type: 'round_started', detail: 'f'.repeat(64), value: r.no });
  for (let s = 0; s < 4; s++) {
    emitTo(t, s, { type: 'round', seat: caller, detail: `dealer ${t.dealer}` });
    emitTo(t, s, { type: 'hand', seat: s, cards: r.phase === 'call' ? sortHand(firstFive(r, s)) : r.hands[s], detail: r.phase === 'call' ? 'first_five' : 'full' });
  }
  drive(t);
}
function firstFive(r, s) {
  return r.firstFive?.[s] ?? (r.firstFive = [0, 1, 2, 3].map((x) => r.hands[x].filter((_, i) => i % 3 === 0).slice(0, 5)))[s];
}

function canFollow(r, s) {
  const led = r.current[0] && suitOf(r.current[0].card);
  return !!led && r.hands[s].some((c) => suitOf(c) === led);
}
function legalFor(t, s) {
  const r = t.round;
  if (r.phase === 'call') return t.game === 'hidden' ? firstFive(r, s) : SUITS;
  const h = r.hands[s];
  if (!r.current.length) return h;
  const led = suitOf(r.current[0].card);
  const f = h.filter((c) => suitOf(c) === led);
  if (f.length) return f;
  if (r.asked === s && r.shown) {
    const tr = h.filter((c) => suitOf(c) === r.trump);
    if (tr.length) return tr;
  }
  return h;
}

function drive(t) {
  const r = t.round;
  if (!r || t.phase !== 'playing') return;
  const s = r.turn;
  const seat = t.seats[s];
  if (seat.kind === 'bot' || !seat.connected || seat.botDriving) {
    later(t, BOT_DELAY_MS, () => {
      if (t.round !== r || r.turn !== s || t.phase !== 'playing') return;
      autoMove(t, s);
    });
    return;
  }
  r.deadline = Date.now() + t.turnTimeMs;
  emitAll(t, { type: 'turn', seat: s, value: r.deadline });
  const d = r.deadline;
  later(t, t.turnTimeMs, () => {
    if (t.round !== r || r.turn !== s || r.deadline !== d) return;
    r.timeouts[s] += 1;
    emitAll(t, { type: 'timeout', seat: s, value: r.timeouts[s] });
    autoMove(t, s);
  });
}
function autoMove(t, s) {
  const r = t.round;
  const legal = legalFor(t, s);
  if (r.phase === 'call') {
    if (t.game === 'hidden') apply(t, s, { move: 'hide', card: legal[legal.length - 1] });
    else apply(t, s, { move: 'call', card: suitOf(r.hands[s][r.hands[s].length - 1]) });
  } else {
    // a weak but legal bot: the lowest legal card, trumps last
    const sorted = [...legal].sort((a, b) => (suitOf(a) === r.trump) - (suitOf(b) === r.trump) || rankOf(a) - rankOf(b));
    apply(t, s, { move: 'play', card: sorted[0] });
  }
}

function apply(t, s, m) {
  const r = t.round;
  if (!r || t.phase !== 'playing') throw failed('no round in play');
  if (r.turn !== s) throw failed('not your turn');
  r.deadline = 0;
  if (m.move === 'call') {
    if (r.phase !== 'call') throw failed('trump is already named');
    if (t.game === 'hidden') throw failed('hidden expects a hide, not a call');
    if (!SUITS.includes(m.card)) throw bad('call a suit: C, D, H or S');
    r.trump = m.card;
    r.trumpActive = true;
    r.phase = 'play';
    emitAll(t, { type: 'trump', seat: s, detail: m.card });
    for (let x = 0; x < 4; x++) emitTo(t, x, { type: 'hand', seat: x, cards: r.hands[x], detail: 'full' });
    return drive(t);
  }
  if (m.move === 'hide') {
    if (t.game !== 'hidden') throw failed('only hidden has a hide');
    if (r.phase !== 'call') throw failed('the trump is already hidden');
    if (!firstFive(r, s).includes(m.card)) throw failed(`${m.card} is not among the caller's first five cards`);
    r.hidden = m.card;
    r.trump = suitOf(m.card);
    r.hands[s] = r.hands[s].filter((c) => c !== m.card);
    r.phase = 'play';
    for (let x = 0; x < 4; x++) emitTo(t, x, { type: 'hidden', seat: s, cards: x === s ? [m.card] : [] });
    for (let x = 0; x < 4; x++) emitTo(t, x, { type: 'hand', seat: x, cards: r.hands[x], detail: 'full' });
    return drive(t);
  }
  if (r.phase === 'call') throw failed(`seat ${s} must call trump first`);
  if (m.move === 'ask' || m.move === 'show') {
    if (t.game !== 'hidden') throw failed(`only hidden has an ${m.move}`);
    if (r.shown) throw failed('the trump is already shown');
    if (m.move === 'ask' && s === r.caller) throw failed('the caller shows, never asks');
    if (m.move === 'show' && s !== r.caller) throw failed('only the caller shows the trump');
    if (m.move === 'ask' && !r.current.length) throw failed('the leader cannot ask');
    if (m.move === 'ask' && canFollow(r, s)) throw failed(`seat ${s} can follow suit`);
    r.asked = s;
    emitAll(t, { type: m.move === 'ask' ? 'asked' : 'shown', seat: s });
    showTrump(t, s);
    return drive(t);
  }
  if (m.move !== 'play') throw bad(`move: unknown kind "${m.move}" (call, hide, play, ask, show)`);
  const card = m.card;
  if (!/^[2-9TJQKA][CDHS]$/.test(card ?? '')) throw bad(`not a card: ${card}`);
  if (!r.hands[s].includes(card)) throw failed(`seat ${s} does not hold ${card}`);
  const legal = legalFor(t, s);
  if (!legal.includes(card)) {
    const led = r.current[0] && suitOf(r.current[0].card);
    const need = led && r.hands[s].some((c) => suitOf(c) === led) ? led : r.trump;
    const name = { C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' }[need];
    throw failed(need === led ? `seat ${s} holds ${name}` : `seat ${s} saw the trump and holds ${name}`);
  }
  const led = r.current[0] && suitOf(r.current[0].card);
  let faceDown = false;
  if (t.game === 'hidden' && !r.shown && s === r.caller && led && suitOf(card) !== led) faceDown = true;
  if (t.game === 'kaat' && !r.trump && led && suitOf(card) !== led) {
    r.trump = suitOf(card);
    r.trumpActive = true;
    emitAll(t, { type: 'trump_set', seat: s, detail: r.trump });
  }
  r.hands[s] = r.hands[s].filter((c) => c !== card);
  r.current.push({ seat: s, card, faceDown });
  for (let x = 0; x < 4; x++) emitTo(t, x, { type: 'played', seat: s, cards: [faceDown && x !== s ? '??' : card] });
  if (t.game === 'hidden' && !r.shown && s === r.caller && r.hands[s].length === 0 && r.hidden) showTrump(t, s);
  if (r.current.length < 4) {
    r.turn = (s + 1) % 4;
    return drive(t);
  }
  finishTrick(t);
}

function showTrump(t, s) {
  const r = t.round;
  r.shown = true;
  r.trumpActive = true;
  r.hands[r.caller] = sortHand([...r.hands[r.caller], r.hidden]);
  emitAll(t, { type: 'trump_shown', seat: s, detail: r.trump });
  emitTo(t, r.caller, { type: 'hand', seat: r.caller, cards: r.hands[r.caller], detail: 'full' });
}

function finishTrick(t) {
  const r = t.round;
  const led = suitOf(r.current[0].card);
  let best = r.current[0];
  const power = (p) => {
    if (p.faceDown) return -1;
    const su = suitOf(p.card);
    let rank = rankOf(p.card);
    if (t.game === 'stack' && r.marker === p.seat && rank === 12) rank = -1; // a marked ace ranks lowest
    if (r.trumpActive && r.trump && su === r.trump && su !== led) return 100 + rank;
    if (su === led) return rank;
    return -1;
  };
  for (const p of r.current) if (power(p) > power(best)) best = p;
  const w = best.seat;
  const team = w % 2;
  r.won[team] += 1;
  r.tricks.push({ leader: r.current[0].seat, winner: w, cards: r.current.map((p) => p.card), faceDown: r.current.map((p) => p.faceDown) });
  const n = r.tricks.length;
  let pickup = 0;
  let payout = 0;
  if (t.game === 'classic') r.count[team] += 1;
  else if (t.game === 'stack') {
    r.stack += 1;
    if (w === r.marker || n === 13) {
      payout = r.stack;
      r.count[team] += r.stack;
      r.stack = 0;
      r.marker = -1;
    } else if (n > 1) r.marker = w;
  } else {
    r.pile += 1;
    const min = (t.go.pile === '5-3-3' ? [5, 3] : [3, 2])[r.pickups ? 1 : 0];
    const active = t.game !== 'hidden' || r.shown;
    if ((active && r.lastWinner === w && r.pile >= min) || n === 13) {
      pickup = r.pile;
      r.count[team] += r.pile;
      r.pile = 0;
      r.pickups += 1;
    }
  }
  r.lastWinner = w;
  emitAll(t, { type: 'trick', seat: w, detail: `tricks ${r.won[0]}-${r.won[1]} count ${r.count[0]}-${r.count[1]}` });
  if (pickup) emitAll(t, { type: 'pickup', seat: w, detail: String(pickup) });
  if (payout) emitAll(t, { type: 'stack_payout', seat: team, detail: String(payout) });
  r.current = [];
  r.asked = -1;
  r.leader = w;
  r.turn = w;
  // round end
  let over = null;
  if (t.game === 'classic' && (r.count[0] >= 7 || r.count[1] >= 7)) {
    const wt = r.count[0] >= 7 ? 0 : 1;
    over = { winner: wt, kind: r.count[1 - wt] === 0 ? 'court' : 'normal' };
  } else if (t.game === 'stack' && (t.score[0] + r.count[0] >= t.target || t.score[1] + r.count[1] >= t.target || n === 13)) {
    const wt = r.count[0] > r.count[1] ? 0 : 1;
    over = { winner: wt, kind: 'normal', points: 0 };
  } else if (['piles', 'hidden', 'kaat'].includes(t.game)) {
    for (const tm of [0, 1]) if (r.count[tm] >= 7 && r.count[1 - tm] >= 1) over = { winner: tm, kind: 'normal' };
    if (!over && n === 13) {
      const wt = r.count[0] > r.count[1] ? 0 : 1;
      over = { winner: wt, kind: r.count[1 - wt] === 0 ? (wt === r.caller % 2 ? 'court' : 'goon_court') : 'normal' };
    }
  }
  if (over) return endRound(t, over);
  drive(t);
}

function endRound(t, over) {
  const r = t.round;
  const pts = t.game === 'stack' ? 0 : { normal: 1, court: 2, goon_court: 3 }[over.kind] ?? 1;
  if (t.game === 'stack') {
    t.score[0] += r.count[0];
    t.score[1] += r.count[1];
  } else t.score[over.winner] += pts;
  const points = t.game === 'stack' ? r.count[over.winner] : pts;
  t.phase = 'waiting';
  r.turn = -1;
  emitAll(t, { type: 'round_over', seat: over.winner, detail: `${over.kind} ${points}` });
  emitAll(t, { type: 'round_result', seat: over.winner, detail: `${over.kind} ${t.score[0]}-${t.score[1]}`, value: points });
  emitAll(t, { type: 'seed', detail: 'e'.repeat(64), value: r.no });
  const court = over.kind !== 'normal';
  for (const s of t.seats) {
    if (s.kind !== 'person') continue;
    const p = byId.get(s.player);
    if (s.seat % 2 === over.winner) p.coins += t.bet * (court ? 3 : 2);
    else if (court) p.coins -= t.bet;
  }
  t.pot = 0;
  t.dealer = (t.dealer + 1) % 4;
  const gameOver = t.game === 'stack' || t.score[0] >= t.target || t.score[1] >= t.target;
  if (gameOver) {
    const wt = t.score[0] > t.score[1] ? 0 : 1;
    emitAll(t, { type: 'game_over', seat: wt, detail: `${t.score[0]}-${t.score[1]}` });
    for (const x of t.seats) {
      if (x.kind !== 'person') continue;
      const st = ((byId.get(x.player).stats ??= {})[t.game] ??= { played: 0, won: 0, lost: 0 });
      st.played += 1;
      if (x.seat % 2 === wt) st.won += 1;
      else st.lost += 1;
    }
    for (let s = 0; s < 4; s++) {
      const x = t.seats[s];
      if (x.kind === 'person' && !x.connected) {
        t.seats[s] = { seat: s, kind: 'empty', player: '', connected: false };
        emitAll(t, { type: 'unseated', seat: s, player: x.player, detail: 'away_at_game_end' });
      }
    }
    // the next game starts by itself once every seat is held by a bot or a present person
    // (as the table does: someone away holds it back until they are back, RULES.md §4.3)
    const game = t.gameNo;
    const next = () => {
      if (t.phase !== 'waiting' || t.gameNo !== game) return;
      if (t.seats.every((x) => x.kind === 'bot' || (x.kind === 'person' && x.connected))) {
        t.round = null;
        startGame(t);
      } else {
        later(t, 500, next);
      }
    };
    later(t, AUTO_START_MS, next);
    return;
  }
  later(t, 1500, () => {
    if (t.phase === 'waiting' && t.round === r) countIn(t);
  });
}

function maybeAutoStart(t) {
  if (t.gameNo > 0 || t.phase !== 'waiting') return;
  if (t.seats.every((x) => x.kind === 'bot' || (x.kind === 'person' && x.connected))) {
    t.autoStartAt = Date.now() + AUTO_START_MS;
    emitAll(t, { type: 'auto_start', value: t.autoStartAt });
    const at = t.autoStartAt;
    later(t, AUTO_START_MS, () => {
      if (t.autoStartAt === at && t.gameNo === 0) startGame(t);
    });
  }
}

// --- commands ------------------------------------------------------------------------------------
function command(t, player, c) {
  const s = seatOf(t, player);
  if (c.type === 'join') {
    if (s >= 0) throw new Status(6, 'ALREADY_EXISTS', 'already seated at this table');
    const p = byId.get(player);
    if (p.coins < 2 * t.bet) throw failed(`sitting down needs ${2 * t.bet} coins`);
    const free = [2, 1, 3, 0].find((x) => t.seats[x].kind === 'empty');
    if (free === undefined) throw new Status(8, 'RESOURCE_EXHAUSTED', 'the table is full');
    t.seats[free] = { seat: free, kind: 'person', player, connected: true, left: false };
    for (const conn of t.conns) if (conn.player === player) conn.seat = free;
    emitAll(t, { type: 'seated', seat: free, player, detail: 'person' });
    for (let o = 0; o < 4; o++) if (o !== free && t.seats[o].kind !== 'empty') emitTo(t, free, { type: 'seated', seat: o, player: t.seats[o].player, detail: t.seats[o].kind });
    emitTo(t, free, { type: 'host', seat: seatOf(t, t.host), player: t.host });
    maybeAutoStart(t);
    return;
  }
  if (s < 0) throw new Status(7, 'PERMISSION_DENIED', `${player} is not seated`);
  switch (c.type) {
    case 'leave': {
      if (t.round && t.phase === 'playing') {
        t.seats[s].connected = false;
        t.seats[s].left = true;
        emitAll(t, { type: 'away', seat: s, player, detail: 'left' });
        if (t.round.turn === s) drive(t);
        return;
      }
      emitAll(t, { type: 'unseated', seat: s, player, detail: 'left' });
      t.seats[s] = { seat: s, kind: 'empty', player: '', connected: false };
      return;
    }
    case 'start_now':
      if (t.gameNo > 0) throw failed('the game has already started');
      return startGame(t);
    case 'remove_bot': {
      const x = t.seats[c.seat ?? -1];
      if (!x || x.kind !== 'bot') throw bad('no bot in that seat');
      if (t.phase === 'playing') throw failed('bots stay until the round ends');
      t.seats[c.seat] = { seat: c.seat, kind: 'empty', player: '', connected: false };
      emitAll(t, { type: 'unseated', seat: c.seat, player: x.player, detail: 'bot_removed' });
      return;
    }
    case 'ask_bot':
    case 'swap_partner': {
      if (t.vote) throw failed('a vote is already running');
      const swap = c.type === 'swap_partner';
      const target = c.seat ?? -1;
      if (swap && player !== t.host) throw new Status(7, 'PERMISSION_DENIED', 'only the host swaps');
      if (swap && target !== (s + 1) % 4 && target !== (s + 3) % 4) throw bad("swap with an opponent's seat");
      if (!swap && t.seats[target]?.kind !== 'empty') throw bad('a bot can only take an empty or waiting seat');
      const asked = swap ? [(s + 1) % 4, (s + 3) % 4] : [0, 1, 2, 3].filter((o) => o !== s && o !== target);
      const pending = asked.filter((o) => t.seats[o].kind === 'person').map((o) => t.seats[o].player);
      const deadline = Date.now() + VOTE_MS;
      t.vote = { swap, seat: target, asker: player, pending, deadline, hostSeat: s };
      emitAll(t, { type: 'vote', seat: target, player, detail: swap ? 'swap' : 'bot', value: deadline });
      if (!pending.length) return resolveVote(t, true);
      const v = t.vote;
      later(t, VOTE_MS, () => t.vote === v && resolveVote(t, true));
      return;
    }
    case 'vote': {
      const v = t.vote;
      if (!v || !v.pending.includes(player)) throw failed('no vote is asking you');
      v.pending = v.pending.filter((p) => p !== player);
      emitAll(t, { type: 'voted', seat: s, player, detail: c.yes ? 'yes' : 'no' });
      if (!c.yes) return resolveVote(t, false);
      if (!v.pending.length) resolveVote(t, true);
      return;
    }
    case 'end_early': {
      if (!t.gameNo) throw failed('no game to end');
      if (t.endEarly?.has(player)) return; // as the table: agreeing again tells nobody twice
      emitAll(t, { type: 'end_early', seat: s, player });
      t.endEarly = new Set([...(t.endEarly ?? []), player]);
      if (t.seats.every((x) => x.kind !== 'person' || !x.connected || t.endEarly.has(x.player))) {
        if (t.round && t.phase === 'playing') emitAll(t, { type: 'round_abandoned', value: t.round.no });
        t.round = null;
        t.phase = 'waiting';
        emitAll(t, { type: 'game_over', seat: -1, detail: `ended_early ${t.score[0]}-${t.score[1]}` });
        t.endEarly = new Set();
      }
      return;
    }
    case 'move':
      return apply(t, s, { move: c.move, card: c.card });
    case 'voice_start': {
      // As the real table: moderation is asked first (docs/client-api.md).
      const muted = mutedMessage(player, true);
      if (muted) throw new Status(7, 'PERMISSION_DENIED', muted);
      if (people(t) < 2) throw failed('no voice notes with only one person at the table');
      if (t.recording >= 0) throw failed(`seat ${t.recording} is recording`);
      t.recording = s;
      emitAll(t, { type: 'voice_recording', seat: s, player, value: Date.now() + 7000 });
      return;
    }
    case 'voice_sent':
      // As the real table: notes are announced after moderation stored them (POST /v1/voice).
      throw new Status(3, 'INVALID_ARGUMENT', 'voice_sent: the table announces voice notes itself after the upload');
    case 'voice_discard':
      if (t.recording !== s) throw failed('you are not recording');
      t.recording = -1;
      emitAll(t, { type: 'voice_idle', seat: s, detail: 'discarded' });
      return;
    case 'report': {
      const n = t.notes.find((x) => x.id === c.noteId);
      if (!n) throw notFound('no such voice note');
      if (n.author === player) throw new Status(7, 'PERMISSION_DENIED', 'nobody reports their own note');
      emitTo(t, s, { type: 'reported', seat: seatOf(t, n.author), detail: n.id });
      return;
    }
    default:
      throw bad(`type: unknown command "${c.type}"`);
  }
}

function resolveVote(t, passed) {
  const v = t.vote;
  t.vote = null;
  emitAll(t, { type: 'vote_result', seat: v.seat, detail: passed ? 'passed' : 'rejected' });
  if (!passed) return;
  if (!v.swap) {
    t.seats[v.seat] = { seat: v.seat, kind: 'bot', player: `bot-${v.seat}`, connected: true };
    emitAll(t, { type: 'seated', seat: v.seat, player: `bot-${v.seat}`, detail: 'bot' });
    maybeAutoStart(t);
  } else {
    const partner = (v.hostSeat + 2) % 4;
    const a = t.seats[partner];
    t.seats[partner] = { ...t.seats[v.seat], seat: partner };
    t.seats[v.seat] = { ...a, seat: v.seat };
    for (const c of t.conns) c.seat = seatOf(t, c.player);
    emitAll(t, { type: 'swapped', seat: partner, player: t.seats[partner].player, value: v.seat });
  }
}

function view(t, s) {
  const r = t.round;
  const out = [];
  for (let o = 0; o < 4; o++) if (t.seats[o].kind !== 'empty') out.push({ type: 'seated', seat: o, player: t.seats[o].player, detail: t.seats[o].kind });
  if (t.gameNo) out.push({ type: 'score', detail: `${t.score[0]}-${t.score[1]}` });
  if (r && t.phase === 'playing') {
    out.push({ type: 'round', seat: r.caller, detail: `dealer ${r.dealer}` });
    out.push({ type: 'hand', seat: s, cards: r.phase === 'call' ? firstFive(r, s) : r.hands[s], detail: r.phase === 'call' ? 'first_five' : 'full' });
    if (r.hidden && s === r.caller && !r.shown) out.push({ type: 'hidden', seat: r.caller, cards: [r.hidden] });
    if (r.trump && (r.shown || t.game !== 'hidden' || s === r.caller)) out.push({ type: 'trump', seat: r.caller, detail: r.trump });
    out.push({ type: 'tricks', detail: `tricks ${r.won[0]}-${r.won[1]} count ${r.count[0]}-${r.count[1]}` });
    for (const tr of r.tricks) out.push({ type: 'trick_cards', seat: tr.winner, cards: tr.cards.map((c, i) => (tr.faceDown[i] && (tr.leader + i) % 4 !== s ? '??' : c)), detail: `leader ${tr.leader}` });
    out.push({ type: 'pile', detail: String(r.pile) });
    if (t.game === 'stack') out.push({ type: 'stack', seat: r.marker, detail: String(r.stack) });
    out.push({ type: 'hand_sizes', detail: r.hands.map((h) => h.length).join(' ') });
    for (const p of r.current) out.push({ type: 'played', seat: p.seat, cards: [p.faceDown && p.seat !== s ? '??' : p.card] });
    out.push({ type: 'to_act', seat: r.turn });
  }
  out.push({ type: 'table_phase', detail: t.phase, value: t.roundNo });
  out.push({ type: 'host', seat: seatOf(t, t.host), player: t.host });
  for (const x of t.seats) {
    if (x.kind !== 'person') continue;
    out.push({ type: 'presence', seat: x.seat, player: x.player, detail: x.connected ? 'present' : x.left ? 'left' : 'disconnected' });
    if (t.endEarly?.has(x.player)) out.push({ type: 'end_early', seat: x.seat, player: x.player });
  }
  if (r && t.phase === 'playing' && r.deadline) out.push({ type: 'turn', seat: r.turn, value: r.deadline });
  if (t.countInUntil) out.push({ type: 'count_in', value: t.countInUntil });
  if (t.autoStartAt) out.push({ type: 'auto_start', value: t.autoStartAt });
  if (t.vote) out.push({ type: 'vote', seat: t.vote.seat, player: t.vote.asker, detail: t.vote.swap ? 'swap' : 'bot', value: t.vote.deadline });
  for (const e of out) emitTo(t, s, e);
}

// --- HTTP ------------------------------------------------------------------------------------
const unary = {
  GuestLogin(body) {
    const d = body.deviceSecret ?? '';
    if (!/^[A-Za-z0-9_-]{32,128}$/.test(d)) throw bad('device_secret: 32..128 chars of [A-Za-z0-9_-]');
    let p = players.get(d);
    let created = false;
    if (!p) {
      const name = (body.displayName ?? '').trim();
      if (name && (name.length < 2 || name.length > 20)) throw bad('display_name: 2..20 characters');
      if (/admin|\bbot\b/i.test(name)) throw bad('display_name: must not impersonate staff or bots');
      const id = `p-${(players.size + 1).toString(16).padStart(4, '0')}${Math.floor(rand() * 1e8).toString(16)}`;
      p = { id, name: name || `Guest ${id.slice(-4)}`, coins: 1000, avatar: 0 };
      players.set(d, p);
      byId.set(id, p);
      created = true;
    }
    return { ...session(p), created };
  },
  Refresh(body) {
    const id = refreshTokens.get(body.refreshToken);
    if (!id) throw new Status(16, 'UNAUTHENTICATED', 'unknown refresh token');
    refreshTokens.delete(body.refreshToken);
    return session(byId.get(id));
  },
  GetProfile(_b, p) {
    return { playerId: p.id, displayName: p.name, avatarId: p.avatar, role: 'player', coins: String(p.coins), createdAtMs: '0' };
  },
  UpdateProfile(b, p) {
    if (b.displayName) p.name = b.displayName;
    if (b.avatarId) p.avatar = b.avatarId;
    return unary.GetProfile(b, p);
  },
  // As the lobby: at most 16 ids, each 1..64 of [A-Za-z0-9_-]; unknown ids (bots) absent;
  // sorted by id. Counts the calls for the e2e tests (GET /test/profile-calls).
  GetPublicProfiles(b) {
    const ids = b.playerIds ?? [];
    if (!Array.isArray(ids) || ids.length > 16) throw bad(`player_ids: at most 16 ids, got ${ids.length}`);
    ids.forEach((id, i) => {
      if (typeof id !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(id)) throw bad(`player_ids[${i}]: must be 1..64 chars of [A-Za-z0-9_-]`);
    });
    publicProfileCalls++;
    const known = [...new Set(ids)].sort().map((id) => byId.get(id)).filter(Boolean);
    return { profiles: known.map((x) => ({ playerId: x.id, displayName: x.name, avatarId: x.avatar })) };
  },
  GetStats(_b, p) {
    const row = (game, x) => ({ game, played: String(x.played), won: String(x.won), lost: String(x.lost), quits: '0', courts: '0', goonCourts: '0' });
    const by = Object.entries(p.stats ?? {}).map(([g, x]) => row(g, x));
    const sum = Object.values(p.stats ?? {}).reduce((a, x) => ({ played: a.played + x.played, won: a.won + x.won, lost: a.lost + x.lost }), { played: 0, won: 0, lost: 0 });
    return { playerId: p.id, byGame: by, total: row('', sum) };
  },
  RecentResults() {
    return { results: [] };
  },
  CreateTable(b, p) {
    const key = `${p.id}/${b.requestId}`;
    if (requestIds.has(key)) return tableRef(requestIds.get(key));
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(b.requestId ?? '')) throw bad('request_id: 1..64 chars of [A-Za-z0-9_-]');
    const t = makeTable(p, b.options);
    requestIds.set(key, t);
    return tableRef(t);
  },
  ResolveCode(b) {
    const m = /(?:^|\/t\/)(\d{6})\/?$/.exec(String(b.code ?? '').trim());
    if (!m) throw bad('code: 6 digits or an invite link');
    const t = byCode.get(m[1]);
    if (!t) throw notFound(`no table has code ${m[1]}`);
    return tableRef(t);
  },
  ListOpenTables(b) {
    const list = [...tables.values()].filter((t) => t.public && t.seats.some((x) => x.kind === 'empty') && (!b.game || b.game === t.game));
    return { tables: list.map((t) => ({ table: tableRef(t), seatsTaken: t.seats.filter((x) => x.kind !== 'empty').length, phase: t.phase })) };
  },
  QuickJoin(b, p) {
    if (!b.game) throw bad('game: required');
    let t = [...tables.values()].find((x) => x.public && x.game === b.game && x.gameNo === 0 && x.seats.some((s) => s.kind === 'empty') && seatOf(x, p.id) < 0);
    if (!t) {
      t = makeTable(p, { gameOptions: JSON.stringify({ game: b.game }), betCoins: '100', turnTimeMs: '15000', public: true });
      return tableRef(t, 0);
    }
    const free = [2, 1, 3, 0].find((x) => t.seats[x].kind === 'empty');
    t.seats[free] = { seat: free, kind: 'person', player: p.id, connected: false, left: false };
    emitAll(t, { type: 'seated', seat: free, player: p.id, detail: 'person' });
    return tableRef(t, free);
  },
  MyTables(_b, p) {
    return { tables: [...tables.values()].filter((t) => seatOf(t, p.id) >= 0).map((t) => tableRef(t)) };
  },
};

const MIME = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.css': 'text/css', '.svg': 'image/svg+xml', '.json': 'application/json' };
const voiceNotes = new Map();
const mutes = new Map(); // player id -> {until (ms; 0: until lifted), uploadOnly}
// Moderation's refusal of a muted player ("muted: ..."), or null. `atStart`: the table's
// check before voice_start, which a mute set with uploadOnly (moderation not answering the
// table in time, so only the upload refuses) passes.
function mutedMessage(playerId, atStart) {
  const mute = mutes.get(playerId);
  if (mute === undefined || (atStart && mute.uploadOnly)) return null;
  const until = mute.until ? ` ${new Date(mute.until).toISOString().replace(/\.\d+Z$/, 'Z')}` : ' they lift it';
  return `muted: an admin stopped your voice notes until${until}`;
}

function sendJson(res, code, obj) {
  res.writeHead(code, { 'content-type': 'application/json' });
  res.end(JSON.stringify(obj));
}
function readBody(req, max = 65536) {
  return new Promise((ok, fail) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => {
      n += c.length;
      if (n > max) {
        fail(new Status(8, 'RESOURCE_EXHAUSTED', 'body too large'));
        req.destroy();
      } else chunks.push(c);
    });
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

const server = createServer(async (req, res) => {
  const url = new URL(req.url, 'http://x');
  try {
    if (url.pathname === '/v1/voice' && req.method === 'POST') {
      // As the gateway + moderation: the raw recording, the table in a header; moderation's
      // refusals with their reason words; the table announces the accepted note.
      const p = auth(req);
      if (!p) throw new Status(16, 'UNAUTHENTICATED', 'missing token');
      if (!VOICE) throw new Status(12, 'UNIMPLEMENTED', 'voice notes are not available');
      const type = String(req.headers['content-type'] ?? 'application/octet-stream').split(';')[0].trim();
      if (!/^audio\/.+|^application\/octet-stream$/.test(type)) {
        return sendJson(res, 415, { code: 3, status: 'INVALID_ARGUMENT', message: `unsupported content type ${type}` });
      }
      const tableId = req.headers['x-courtpiece-table-id'];
      if (!tableId) throw bad('bad_request: header x-courtpiece-table-id is required');
      const body = await readBody(req, 528 * 1024);
      const muted = mutedMessage(p.id, false);
      if (muted) throw new Status(7, 'PERMISSION_DENIED', muted);
      const t = tables.get(String(tableId));
      if (!t) throw notFound(`no_table: no table ${tableId}`);
      const s = seatOf(t, p.id);
      if (s < 0) throw new Status(7, 'PERMISSION_DENIED', `not_seated: you are not seated at ${tableId}`);
      if (t.recording !== s) throw failed(`no_lock: you do not hold the recording lock at table ${tableId}`);
      const id = `n-${voiceNotes.size + 1}`;
      voiceNotes.set(id, { body, type });
      t.recording = -1;
      const playAt = Date.now() + 1000;
      const durationMs = 2000;
      t.notes.push({ id, author: p.id, until: playAt + durationMs + 5000, playAt });
      emitAll(t, { type: 'voice_note', seat: s, player: p.id, detail: id, value: playAt });
      return sendJson(res, 200, { noteId: id, round: String(t.round?.no ?? 0), durationMs: String(durationMs), format: 'webm/opus', replayed: false });
    }
    if (url.pathname.startsWith('/v1/voice/') && req.method === 'GET') {
      const n = voiceNotes.get(decodeURIComponent(url.pathname.slice(10)));
      if (!n || !auth(req)) return sendJson(res, 404, { code: 5, status: 'NOT_FOUND', message: 'no such note' });
      res.writeHead(200, { 'content-type': n.type });
      return res.end(n.body);
    }
    if (url.pathname.startsWith('/v1/')) {
      if (req.method !== 'POST') return sendJson(res, 405, { code: 12, status: 'UNIMPLEMENTED', message: 'POST only' });
      const method = url.pathname.slice(4);
      const f = unary[method];
      if (!f) throw notFound(`unknown method ${method}`);
      let body;
      try {
        body = JSON.parse((await readBody(req)).toString() || '{}');
      } catch {
        throw bad('body is not JSON');
      }
      let p = null;
      if (method !== 'GuestLogin' && method !== 'Refresh') {
        p = auth(req);
        if (!p) throw new Status(16, 'UNAUTHENTICATED', 'missing, malformed or expired token');
      }
      return sendJson(res, 200, f(body, p));
    }
    if (url.pathname.startsWith('/test/')) {
      const body = req.method === 'POST' ? JSON.parse((await readBody(req)).toString() || '{}') : {};
      if (url.pathname === '/test/voice') {
        VOICE = !!body.on;
        return sendJson(res, 200, { voice: VOICE });
      }
      if (url.pathname === '/test/mute') {
        // {playerId, untilMs, uploadOnly} (untilMs 0: until lifted; uploadOnly: the table's
        // check before voice_start misses it); {playerId, lift: true} lifts it
        if (body.lift) mutes.delete(body.playerId);
        else mutes.set(body.playerId, { until: Number(body.untilMs ?? 0), uploadOnly: !!body.uploadOnly });
        return sendJson(res, 200, { muted: [...mutes.keys()] });
      }
      if (url.pathname === '/test/profile-calls') return sendJson(res, 200, { calls: publicProfileCalls });
      if (url.pathname === '/test/tables') return sendJson(res, 200, [...tables.values()].map((t) => ({ id: t.id, code: t.code, phase: t.phase, seats: t.seats, score: t.score })));
      const t = tables.get(body.tableId) ?? [...tables.values()].at(-1);
      if (!t) throw notFound('no table');
      if (url.pathname === '/test/notice') {
        for (const c of t.conns) c.sendJson({ notice: { type: body.type, detail: 'test' } });
        return sendJson(res, 200, {});
      }
      if (url.pathname === '/test/drop') {
        for (const c of [...t.conns]) if (!body.player || c.player === body.player) c.ws.close(4014, 'test: dropped');
        return sendJson(res, 200, {});
      }
      throw notFound('no such test hook');
    }
    // static files: index.html for / and /t/<code>; hashed files under /assets/
    if (!STATIC) return sendJson(res, 404, { code: 5, status: 'NOT_FOUND', message: 'no static dir' });
    let file = url.pathname === '/' || /^\/t\/\d{6}\/?$/.test(url.pathname) ? 'index.html' : url.pathname.slice(1);
    const full = resolve(join(STATIC, file));
    if (!full.startsWith(STATIC) || !existsSync(full) || statSync(full).isDirectory()) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      return res.end('not found');
    }
    const headers = { 'content-type': MIME[extname(full)] ?? 'application/octet-stream' };
    headers['cache-control'] = file.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache';
    res.writeHead(200, headers);
    res.end(readFileSync(full));
  } catch (e) {
    if (e instanceof Status) return sendJson(res, HTTP[e.code] ?? 500, { code: e.code, status: e.status, message: e.message });
    console.error(e);
    sendJson(res, 500, { code: 13, status: 'INTERNAL', message: String(e?.message ?? e) });
  }
});

const wss = new WebSocketServer({ noServer: true, maxPayload: 16 * 1024 });
server.on('upgrade', (req, sock, head) => {
  if (new URL(req.url, 'http://x').pathname !== '/v1/play') return sock.destroy();
  wss.handleUpgrade(req, sock, head, (ws) => onPlay(ws));
});

function onPlay(ws) {
  const conn = {
    ws,
    player: '',
    seat: -1,
    table: null,
    live: false,
    sendJson: (o) => ws.readyState === 1 && ws.send(JSON.stringify(o)),
  };
  const firstTimer = setTimeout(() => ws.close(4003, 'open expected within 10 s'), 10000);
  ws.on('message', (data, binary) => {
    if (binary) return ws.close(4003, 'text frames only');
    let m;
    try {
      m = JSON.parse(String(data));
    } catch {
      return ws.close(4003, 'bad JSON');
    }
    if (!conn.table) {
      clearTimeout(firstTimer);
      if (!m.open) return ws.close(4003, 'the first message must be open');
      const p = checkToken(m.open.accessToken ?? '');
      if (!p) return ws.close(4016, 'missing, malformed or expired token');
      const t = tables.get(m.open.tableId);
      if (!t) return ws.close(4005, 'unknown table');
      for (const c of [...t.conns]) if (c.player === p.id) c.ws.close(4010, 'another connection took the seat');
      conn.player = p.id;
      conn.table = t;
      conn.seat = seatOf(t, p.id);
      t.conns.add(conn);
      const last = Number(m.open.lastSeq ?? 0);
      const q = conn.seat >= 0 ? t.streams[conn.seat] : [];
      const resumed = conn.seat >= 0 && last > 0 && q.length > 0 && Number(q[0].seq) <= last + 1 && last <= t.seq;
      conn.sendJson({ opened: { table: info(t), seat: conn.seat, resumed } });
      if (resumed) for (const e of q) if (Number(e.seq) > last) conn.sendJson({ event: e });
      conn.live = true;
      if (conn.seat >= 0) {
        const x = t.seats[conn.seat];
        const wasAway = !x.connected;
        x.connected = true;
        x.left = false;
        if (wasAway && (t.round || t.gameNo)) {
          emitAll(t, { type: 'back', seat: conn.seat, player: p.id });
          view(t, conn.seat);
        } else if (!resumed) view(t, conn.seat);
        if (t.round && t.round.turn === conn.seat && !t.round.deadline) drive(t);
        maybeAutoStart(t);
      }
      return;
    }
    if (m.open) return ws.close(4003, 'a second open');
    const c = m.command;
    if (!c) return ws.close(4003, 'command expected');
    const t = conn.table;
    let code = 0;
    let message = '';
    try {
      command(t, conn.player, c);
      conn.seat = seatOf(t, conn.player);
    } catch (e) {
      if (!(e instanceof Status)) {
        console.error(e);
        code = 13;
        message = 'internal';
      } else {
        code = e.code;
        message = e.message;
      }
    }
    conn.sendJson({ result: { commandId: String(c.commandId ?? '0'), code, message } });
  });
  ws.on('close', () => {
    clearTimeout(firstTimer);
    const t = conn.table;
    if (!t) return;
    t.conns.delete(conn);
    const s = seatOf(t, conn.player);
    if (s < 0) return;
    if ([...t.conns].some((c) => c.player === conn.player)) return;
    const x = t.seats[s];
    if (!x.connected) return;
    x.connected = false;
    emitAll(t, { type: 'away', seat: s, player: conn.player, detail: 'disconnected' });
    if (t.round && t.round.turn === s && t.phase === 'playing') drive(t);
    if (t.recording === s) {
      t.recording = -1;
      emitAll(t, { type: 'voice_idle', seat: s, detail: 'disconnected' });
    }
  });
}

server.listen(PORT, '127.0.0.1', () => {
  console.log(JSON.stringify({ listening: `127.0.0.1:${server.address().port}` }));
});
