// The table's view model: a pure function of the Play stream (opened, events, results,
// notices, connection changes). No DOM, no timers, no I/O: the time comes in as an argument.
// docs/client-api.md §3 is the contract; every event type it lists is handled here.
import { isHidden, sortHand, suitOf } from './cards';

export type SeatKind = 'empty' | 'person' | 'bot';
export type Presence = 'present' | 'disconnected' | 'left' | 'bot_driving';

export interface SeatView {
  seat: number;
  kind: SeatKind;
  player: string;
  presence: Presence;
  keepUntilMs: number;
  handSize: number;
}

export interface PlayedCard {
  seat: number;
  card: string;
}

export interface TrickView {
  leader: number;
  winner: number;
  cards: PlayedCard[];
}

export interface RoundView {
  no: number;
  caller: number; // kaat: the leader
  dealer: number;
  hand: string[];
  handKind: 'first_five' | 'full';
  /** The trump suit as this seat knows it, "" unknown / none yet. */
  trump: string;
  /** hidden: the caller laid the trump face down. */
  hiddenLaid: boolean;
  /** hidden, caller only: the face-down card. */
  hiddenCard: string;
  trumpShown: boolean;
  trumpShownBy: number;
  trumpSetBy: number; // kaat
  askedBy: number; // hidden: asked during the current trick
  current: PlayedCard[];
  tricks: TrickView[];
  tricksWon: [number, number];
  count: [number, number];
  pile: number;
  pickups: { seat: number; count: number }[];
  stack: number;
  marker: number;
  stackPayouts: { team: number; points: number }[];
  toAct: number;
  turnDeadlineMs: number;
  over: null | { winner: number; kind: string; points: number };
  seedCommitment: string;
  seed: string;
  /** in a view: hand_sizes already counts the trick in progress (until to_act) */
  sizesFromView: boolean;
}

export interface RoundResult {
  round: number;
  team: number; // -1 draw
  kind: string;
  points: number;
  score: [number, number];
}

export interface FinishedGame {
  gameNo: number;
  team: number;
  score: [number, number];
  endedEarly: boolean;
  results: RoundResult[];
  courts: [number, number];
}

export interface VoteView {
  seat: number;
  asker: string;
  kind: 'bot' | 'swap';
  deadlineMs: number;
  votes: Record<number, 'yes' | 'no'>;
}

export interface VoiceNoteView {
  noteId: string;
  seat: number;
  player: string;
  playAtMs: number;
  reported: boolean;
}

export interface Refusal {
  commandId: number;
  type: string; // the command's type: "move" is shown by the hand
  code: number;
  message: string; // for the player (refusalText)
  serverMessage: string; // as the server said it (a reason word first, as "muted: ...")
  atMs: number;
}

export interface LogLine {
  atMs: number;
  text: string;
}

export type Connection = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** A player's public face (GetPublicProfiles); avatarId 0 = drawn from the id. */
export interface PublicFace {
  displayName: string;
  avatarId: number;
}
/** GetPublicProfiles' answer as JSON (proto3: zeros left out). */
export interface WirePublicProfile {
  playerId?: string;
  displayName?: string;
  avatarId?: number;
}

export interface TableState {
  tableId: string;
  code: string;
  me: string;
  mySeat: number; // -1 not seated
  /**
   * The seat I played this game from when the table unseated me at its end with a bot
   * playing for me (bot_driving_at_game_end: still paid): its results still read as mine
   * ("You won", my coins, "You" for that seat) until I sit again or a new game starts. -1: none.
   */
  lastSeat: number;
  /** The most people (not bots) seated when a round of this game was dealt; 0: none dealt
   * yet. Leaving once it is 2 or more is a quit (RULES.md §4.5, §4.9, §4.12). */
  peopleDealt: number;
  hostPlayer: string;
  hostSeat: number;
  betCoins: number;
  turnTimeMs: number;
  /** How the table's bots play: "easy", "normal" or "strong" (TableInfo.botLevel). */
  botLevel: string;
  /** The server's clock minus this device's (ms), estimated from live events; 0 until one. */
  serverOffsetMs: number;
  serverOffsetKnown: boolean;
  gameOptions: Record<string, unknown>;
  game: string;
  listed: boolean;
  phase: string;
  roundsDealt: number;
  lastSeq: number;
  seats: SeatView[];
  score: [number, number];
  gameNo: number;
  gameOver: null | { team: number; score: [number, number]; endedEarly: boolean };
  /** the last finished game, kept after the next one starts (the results screen) */
  finishedGame: null | FinishedGame;
  courts: [number, number];
  endEarly: number[]; // seats that agreed to end early
  round: RoundView | null;
  lastResult: RoundResult | null;
  results: RoundResult[]; // this game's rounds
  pot: number;
  countInUntilMs: number;
  autoStartAtMs: number;
  vote: VoteView | null;
  recording: null | { seat: number; player: string; untilMs: number };
  notes: VoiceNoteView[];
  refusal: Refusal | null;
  pending: Record<number, { type: string; move?: string; card?: string }>;
  connection: Connection;
  /** the gateway is moving the table ("reconnecting" notice) */
  moving: boolean;
  walletWaiting: boolean;
  /** the stream ended for good: NOT_FOUND, ABORTED... (the message) */
  ended: string;
  log: LogLine[];
  /** names and pictures of the people seen at this table, by player id */
  profiles: Record<string, PublicFace>;
}

export const LOG_MAX = 30;
/** A note plays this long after the server announced it (RULES.md §5.3). */
export const NOTE_PLAY_DELAY_MS = 1000;

/**
 * The server clock's offset from this device's, from an event that the server stamped with
 * `emittedAtServerMs` and that arrived `now`: each sample is low by the event's latency (and
 * by far for an event replayed in a view), so the estimate keeps the highest sample, letting
 * an old one go by 50 ms per sample (a device clock that was corrected).
 */
export function withServerClock(s: TableState, emittedAtServerMs: number, now: number): TableState {
  if (!Number.isFinite(emittedAtServerMs) || emittedAtServerMs <= 0) return s;
  const sample = emittedAtServerMs - now;
  const serverOffsetMs = s.serverOffsetKnown ? Math.max(sample, s.serverOffsetMs - 50) : sample;
  return { ...s, serverOffsetMs, serverOffsetKnown: true };
}

/** A server time as this device's clock reads it. */
export function localTime(s: TableState, serverMs: number): number {
  return serverMs - s.serverOffsetMs;
}
const NOTES_MAX = 8;

export function emptySeats(): SeatView[] {
  return [0, 1, 2, 3].map((seat) => ({
    seat,
    kind: 'empty' as SeatKind,
    player: '',
    presence: 'present' as Presence,
    keepUntilMs: 0,
    handSize: 0,
  }));
}

export function initialState(tableId: string, me: string): TableState {
  return {
    tableId,
    code: '',
    me,
    mySeat: -1,
    lastSeat: -1,
    peopleDealt: 0,
    hostPlayer: '',
    hostSeat: -1,
    betCoins: 0,
    turnTimeMs: 15000,
    botLevel: 'easy',
    serverOffsetMs: 0,
    serverOffsetKnown: false,
    gameOptions: { game: 'classic' },
    game: 'classic',
    listed: false,
    phase: 'waiting',
    roundsDealt: 0,
    lastSeq: 0,
    seats: emptySeats(),
    score: [0, 0],
    gameNo: 0,
    gameOver: null,
    finishedGame: null,
    courts: [0, 0],
    endEarly: [],
    round: null,
    lastResult: null,
    results: [],
    pot: 0,
    countInUntilMs: 0,
    autoStartAtMs: 0,
    vote: null,
    recording: null,
    notes: [],
    refusal: null,
    pending: {},
    connection: 'connecting',
    moving: false,
    walletWaiting: false,
    ended: '',
    log: [],
    profiles: {},
  };
}

export function newRound(no: number): RoundView {
  return {
    no,
    caller: -1,
    dealer: -1,
    hand: [],
    handKind: 'full',
    trump: '',
    hiddenLaid: false,
    hiddenCard: '',
    trumpShown: false,
    trumpShownBy: -1,
    trumpSetBy: -1,
    askedBy: -1,
    current: [],
    tricks: [],
    tricksWon: [0, 0],
    count: [0, 0],
    pile: 0,
    pickups: [],
    stack: 0,
    marker: -1,
    stackPayouts: [],
    toAct: -1,
    turnDeadlineMs: 0,
    over: null,
    seedCommitment: '',
    seed: '',
    sizesFromView: false,
  };
}

// --- wire types (canonical JSON: int64 as strings) ---------------------------------------
export interface WireSeat {
  seat?: number;
  kind?: string;
  player?: string;
  connected?: boolean;
  away?: boolean;
}
export interface WireTableInfo {
  tableId?: string;
  code?: string;
  hostPlayer?: string;
  betCoins?: string | number;
  turnTimeMs?: string | number;
  gameOptions?: string;
  /** "easy", "normal" or "strong"; left out / "" = easy */
  botLevel?: string;
  phase?: string;
  seats?: WireSeat[];
  round?: string | number;
  seq?: string | number;
  listed?: boolean;
}
export interface WireOpened {
  table?: WireTableInfo;
  seat?: number;
  resumed?: boolean;
}
export interface WireEvent {
  seq?: string | number;
  type?: string;
  seat?: number;
  player?: string;
  cards?: string[];
  detail?: string;
  value?: string | number;
}
export interface WireResult {
  commandId?: string | number;
  code?: number;
  message?: string;
}
export interface WireNotice {
  type?: string;
  detail?: string;
}

export type Action =
  | { kind: 'opened'; opened: WireOpened }
  | { kind: 'event'; event: WireEvent }
  | { kind: 'result'; result: WireResult }
  | { kind: 'notice'; notice: WireNotice }
  | { kind: 'sent'; commandId: number; type: string; move?: string; card?: string }
  | { kind: 'connection'; connection: Connection }
  | { kind: 'ended'; message: string }
  | { kind: 'profiles'; profiles: WirePublicProfile[] }
  | { kind: 'clear_refusal' };

export function num(v: unknown, dflt = 0): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v !== '') {
    const n = Number(v);
    return Number.isFinite(n) ? n : dflt;
  }
  return dflt;
}

export function parseGameOptions(json: string | undefined): Record<string, unknown> {
  if (!json) return { game: 'classic' };
  try {
    const o = JSON.parse(json);
    if (o && typeof o === 'object' && !Array.isArray(o)) {
      if (typeof o.game !== 'string') o.game = 'classic';
      return o;
    }
  } catch {
    /* a bad string: show the defaults */
  }
  return { game: 'classic' };
}

/**
 * The table's bot levels (TableOptions.botLevel / TableInfo.botLevel). Bots take the empty
 * seats at "Start now"; a person's seat played for them (time ran out, away, five timeouts)
 * plays at a fixed fast level whatever the table's level.
 */
export const BOT_LEVELS: { id: string; name: string; blurb: string }[] = [
  { id: 'easy', name: 'Easy', blurb: 'Bots play by rules of thumb' },
  { id: 'normal', name: 'Normal', blurb: 'Bots search over sampled deals' },
  { id: 'strong', name: 'Strong', blurb: 'Bots search longer and play best' },
];

/** The level as the wire gives it: left out or "" is easy; a level unknown here is kept. */
export function botLevelOf(v: unknown): string {
  const s = typeof v === 'string' ? v.trim().toLowerCase() : '';
  return s === '' ? 'easy' : s;
}

/** "bots: strong", as the table's options are described. */
export function botLevelText(v: unknown): string {
  return `bots: ${botLevelOf(v)}`;
}

/** "tricks 3-2 count 1-0" -> [[3,2],[1,0]] */
export function parseTrickDetail(detail: string): { tricks: [number, number]; count: [number, number] } | null {
  const m = /tricks (\d+)-(\d+) count (\d+)-(\d+)/.exec(detail);
  if (!m) return null;
  return { tricks: [+m[1], +m[2]], count: [+m[3], +m[4]] };
}

function parseScore(text: string): [number, number] | null {
  const m = /(\d+)-(\d+)\s*$/.exec(text);
  return m ? [+m[1], +m[2]] : null;
}

export const COURT_KINDS = ['court', 'goon_court', 'kot', 'four_point', 'six_point'];

function log(s: TableState, now: number, text: string): LogLine[] {
  const out = [...s.log, { atMs: now, text }];
  return out.length > LOG_MAX ? out.slice(out.length - LOG_MAX) : out;
}

/** People (not bots) seated now, away or not. */
export function peopleSeated(s: TableState): number {
  return s.seats.filter((x) => x.kind === 'person').length;
}

/** Whether leaving now is counted as a quit (RULES.md §4.5, §4.9, §4.12; docs/table.md): a
 * round of this game was dealt with another person at the table, and the game is not over.
 * (Leaving in the round that ends the game is not one; nobody knows that in advance.) */
export function leavingIsAQuit(s: TableState): boolean {
  return s.mySeat >= 0 && s.peopleDealt >= 2 && !s.gameOver;
}

/** My seat for reading results: the one I sit in, else the one this game's end took (lastSeat). */
export function playerSeat(s: TableState): number {
  return s.mySeat >= 0 ? s.mySeat : s.lastSeat;
}

/**
 * The request to end the game early (§4.12), if anyone seated has agreed: the people seated
 * who agreed and those still to agree (the game ends when nobody is left to agree).
 */
export function endEarlyRequest(s: TableState): { agreed: number[]; waiting: number[] } | null {
  if (s.gameOver !== null || s.gameNo === 0) return null;
  const people = s.seats.filter((x) => x.kind === 'person').map((x) => x.seat);
  const agreed = people.filter((seat) => s.endEarly.includes(seat));
  if (agreed.length === 0) return null;
  return { agreed, waiting: people.filter((seat) => !s.endEarly.includes(seat)) };
}

export function seatName(s: TableState, seat: number): string {
  if (seat < 0 || seat > 3) return 'nobody';
  if (seat === s.mySeat) return 'You';
  const v = s.seats[seat];
  if (s.mySeat < 0 && seat === s.lastSeat && v.kind === 'empty') return 'You';
  if (v.kind === 'bot') return `Bot ${seat + 1}`;
  return displayNameOf(v.player, s.profiles);
}

/** The player's name from GetPublicProfiles when known; else a short stable label from the id. */
export function displayNameOf(player: string, profiles?: Record<string, PublicFace>): string {
  if (!player) return 'Empty';
  if (isBotId(player)) return `Bot ${Number(player.slice(4)) + 1}`;
  const known = profiles?.[player];
  if (known && known.displayName) return known.displayName;
  return shortLabel(player);
}

/** "Player 7D9C": what a person is called until their profile is known. */
function shortLabel(player: string): string {
  const tail = player.replace(/[^A-Za-z0-9]/g, '').slice(-4).toUpperCase();
  return `Player ${tail}`;
}

/** The seat's avatar id when the profile is known (1..64), else 0 (drawn from the id). */
export function seatAvatarId(s: TableState, seat: number): number {
  const v = s.seats[seat];
  if (!v || v.kind !== 'person') return 0;
  return s.profiles?.[v.player]?.avatarId ?? 0;
}

/** The table gives its bots the ids "bot-<seat>": they are not players and have no profile. */
export function isBotId(player: string): boolean {
  return /^bot-\d+$/.test(player);
}

/** The people seated whose profile this table does not know yet (to ask GetPublicProfiles). */
export function profilesWanted(s: TableState): string[] {
  const out: string[] = [];
  for (const v of s.seats) {
    if (v.kind !== 'person' || !v.player || isBotId(v.player)) continue;
    if (s.profiles?.[v.player] || out.includes(v.player)) continue;
    out.push(v.player);
  }
  return out;
}

function applyProfiles(s: TableState, list: WirePublicProfile[]): TableState {
  let profiles: Record<string, PublicFace> | null = null;
  for (const p of list) {
    const id = p.playerId ?? '';
    if (!id || isBotId(id)) continue;
    const face = { displayName: p.displayName ?? '', avatarId: num(p.avatarId) };
    const was = s.profiles?.[id];
    if (was && was.displayName === face.displayName && was.avatarId === face.avatarId) continue;
    profiles = profiles ?? { ...(s.profiles ?? {}) };
    profiles[id] = face;
  }
  if (!profiles) return s;
  // Lines written before a name was known say "Player 7D9C": name them now, so one person
  // is not called two ways in the same log.
  const named = profiles;
  const renames = list
    .map((p) => p.playerId ?? '')
    .filter((id) => id && !isBotId(id) && named[id]?.displayName)
    .map((id) => [shortLabel(id), named[id].displayName] as const);
  const log = renames.length
    ? s.log.map((l) => {
        let text = l.text;
        for (const [label, name] of renames) text = text.split(label).join(name);
        return text === l.text ? l : { ...l, text };
      })
    : s.log;
  return { ...s, profiles, log };
}

function mySeatOf(seats: SeatView[], me: string, fallback: number): number {
  if (!me) return fallback;
  const i = seats.findIndex((x) => x.kind === 'person' && x.player === me);
  return i >= 0 ? i : fallback;
}

function withRound(s: TableState, f: (r: RoundView) => RoundView): TableState {
  const r = s.round ?? newRound(s.roundsDealt);
  return { ...s, round: f(r) };
}

function setSeat(s: TableState, seat: number, patch: Partial<SeatView>): SeatView[] {
  return s.seats.map((x) => (x.seat === seat ? { ...x, ...patch } : x));
}

function validSeat(seat: number | undefined): seat is number {
  return typeof seat === 'number' && seat >= 0 && seat <= 3;
}

export function reduce(s: TableState, a: Action, now: number): TableState {
  switch (a.kind) {
    case 'opened':
      return applyOpened(s, a.opened, now);
    case 'event':
      return applyEvent(s, a.event, now);
    case 'result':
      return applyResult(s, a.result, now);
    case 'notice':
      return applyNotice(s, a.notice, now);
    case 'sent': {
      const pending = { ...s.pending, [a.commandId]: { type: a.type, move: a.move, card: a.card } };
      return { ...s, pending };
    }
    case 'connection': {
      if (a.connection === s.connection) return s;
      // Commands in flight on a dropped socket get no answer: forget them.
      const pending = a.connection === 'open' ? s.pending : {};
      return { ...s, connection: a.connection, pending };
    }
    case 'ended':
      return { ...s, connection: 'closed', ended: a.message, pending: {} };
    case 'profiles':
      return applyProfiles(s, a.profiles);
    case 'clear_refusal':
      return s.refusal ? { ...s, refusal: null } : s;
  }
}

export function applyOpened(s: TableState, o: WireOpened, now: number): TableState {
  const t = o.table ?? {};
  const seats = emptySeats().map((x) => {
    const w = (t.seats ?? []).find((ws) => (ws.seat ?? -1) === x.seat);
    if (!w) return x;
    const kind = (w.kind === 'person' || w.kind === 'bot' ? w.kind : 'empty') as SeatKind;
    const presence: Presence = kind !== 'person' || w.connected ? 'present' : w.away ? 'left' : 'disconnected';
    const prev = s.seats[x.seat];
    return {
      ...x,
      kind,
      player: w.player ?? '',
      presence: kind === 'person' && !w.connected ? 'disconnected' : presence,
      handSize: o.resumed && prev.player === w.player ? prev.handSize : 0,
    };
  });
  const gameOptions = parseGameOptions(t.gameOptions);
  const base: TableState = o.resumed
    ? { ...s }
    : {
        ...initialState(t.tableId ?? s.tableId, s.me),
        // a fresh view replaces the table, not the connection, the log or the names
        log: s.log,
        connection: s.connection,
        profiles: s.profiles ?? {},
      };
  const hostSeat = seats.findIndex((x) => x.player !== '' && x.player === t.hostPlayer);
  // proto3 JSON: a field left out is its default (0); "not seated" is an explicit -1
  const mySeat = typeof o.seat === 'number' ? o.seat : 0;
  const out: TableState = {
    ...base,
    tableId: t.tableId ?? s.tableId,
    code: t.code ?? '',
    hostPlayer: t.hostPlayer ?? '',
    hostSeat,
    betCoins: num(t.betCoins),
    turnTimeMs: num(t.turnTimeMs, 15000),
    botLevel: botLevelOf(t.botLevel),
    gameOptions,
    game: String(gameOptions.game ?? 'classic'),
    listed: !!t.listed,
    phase: t.phase ?? 'waiting',
    roundsDealt: num(t.round),
    seats,
    mySeat,
    lastSeq: o.resumed ? s.lastSeq : 0,
    moving: false,
    ended: '',
    connection: 'open',
    pending: o.resumed ? s.pending : {},
  };
  return {
    ...out,
    log: log(out, now, o.resumed ? 'Reconnected' : s.log.length ? 'Table reloaded' : 'Joined the table'),
  };
}

function updateHandSizesAfterPlay(s: TableState, seat: number): SeatView[] {
  return setSeat(s, seat, { handSize: Math.max(0, s.seats[seat].handSize - 1) });
}

export function applyEvent(s: TableState, e: WireEvent, now: number): TableState {
  const seq = num(e.seq);
  if (seq > 0 && seq <= s.lastSeq) return s; // never apply an event twice
  s = seq > s.lastSeq ? { ...s, lastSeq: seq } : s;
  const seat = typeof e.seat === 'number' ? e.seat : 0; // proto3: left out = 0
  const player = e.player ?? '';
  const detail = e.detail ?? '';
  const value = num(e.value);
  const cards = e.cards ?? [];
  const name = () => seatName(s, seat);

  switch (e.type) {
    // --- seating and presence ---------------------------------------------------------
    case 'seated': {
      if (!validSeat(seat)) return s;
      const kind: SeatKind = detail === 'bot' ? 'bot' : 'person';
      const seats = setSeat(s, seat, { kind, player, presence: 'present', keepUntilMs: 0 });
      const mySeat = mySeatOf(seats, s.me, s.mySeat);
      const fresh = s.seats[seat].player !== player;
      const out = {
        ...s,
        seats,
        mySeat,
        lastSeat: mySeat >= 0 ? -1 : s.lastSeat,
        hostSeat: s.hostPlayer === player ? seat : s.hostSeat,
      };
      return fresh ? { ...out, log: log(out, now, `${seatName(out, seat)} sat down`) } : out;
    }
    case 'unseated': {
      if (!validSeat(seat)) return s;
      const why: Record<string, string> = {
        left: 'left',
        not_back_in_time: 'was not back in time',
        seat_taken: 'lost the seat',
        not_enough_coins: 'had too few coins',
        bot_removed: 'was taken out',
        away_at_game_end: 'was away at the game end',
        bot_driving_at_game_end: 'was away at the game end',
      };
      // The same, said to you.
      const yours: Record<string, string> = {
        ...why,
        not_back_in_time: 'were not back in time',
        bot_removed: 'were taken out',
        away_at_game_end: 'were away at the game end',
        bot_driving_at_game_end: 'were away at the game end: a bot played for you',
      };
      const text = `${name()} ${why[detail] ?? 'left'}`;
      const seats = setSeat(s, seat, { kind: 'empty', player: '', presence: 'present', keepUntilMs: 0, handSize: 0 });
      const mine = seat === s.mySeat;
      return {
        ...s,
        seats,
        endEarly: s.endEarly.filter((x) => x !== seat), // a freed seat's agreement goes with it
        mySeat: mine ? -1 : s.mySeat,
        lastSeat: mine && detail === 'bot_driving_at_game_end' ? seat :
            mine                                               ? -1 :
                                                                 s.lastSeat,
        // A seat given up gives up hosting too: the table names the next host (a `host` event);
        // until then nobody here is shown as host by my old seat.
        hostSeat: mine && s.hostSeat === seat ? -1 : s.hostSeat,
        hostPlayer: mine && s.hostSeat === seat ? '' : s.hostPlayer,
        log: log(s, now, mine ? `You ${yours[detail] ?? 'left'}` : text),
      };
    }
    case 'host': {
      const hostSeat = validSeat(seat) ? seat : -1;
      const changed = player !== s.hostPlayer && s.hostPlayer !== '';
      const out = { ...s, hostPlayer: player, hostSeat };
      return changed ? { ...out, log: log(out, now, `${seatName(out, hostSeat)} is the host now`) } : out;
    }
    case 'away': {
      if (!validSeat(seat)) return s;
      const presence: Presence = detail === 'left' ? 'left' : 'disconnected';
      return {
        ...s,
        seats: setSeat(s, seat, { presence }),
        log: log(s, now, `${name()} ${presence === 'left' ? 'left: a bot plays for them' : 'lost the connection'}`),
      };
    }
    case 'back': {
      if (!validSeat(seat)) return s;
      const out = { ...s, seats: setSeat(s, seat, { presence: 'present' as Presence, keepUntilMs: 0 }) };
      if (seat === s.mySeat) {
        // A view of my seat follows: rebuild the round from it.
        return { ...out, round: null };
      }
      return { ...out, log: log(out, now, `${name()} is back`) };
    }
    case 'presence': {
      if (!validSeat(seat)) return s;
      const presence = (['present', 'disconnected', 'left', 'bot_driving'].includes(detail)
        ? detail
        : 'present') as Presence;
      return { ...s, seats: setSeat(s, seat, { presence, keepUntilMs: value }) };
    }
    case 'timeout':
      return { ...s, log: log(s, now, `${name()} ran out of time (${value} in a row)`) };
    case 'bot_driving':
      if (!validSeat(seat)) return s;
      return {
        ...s,
        seats: setSeat(s, seat, { presence: 'bot_driving' }),
        log: log(s, now, `A bot plays for ${seat === s.mySeat ? 'you' : name()} until ${seat === s.mySeat ? 'you act' : 'they act'}`),
      };
    case 'bot_released':
      if (!validSeat(seat)) return s;
      return { ...s, seats: setSeat(s, seat, { presence: 'present' }) };

    // --- game and round flow ------------------------------------------------------------
    case 'table_phase':
      // A view has no `staking` event: a round in play holds every seat's bet in the pot.
      return {
        ...s,
        phase: detail || s.phase,
        roundsDealt: value,
        pot: s.pot === 0 && detail === 'playing' ? 4 * s.betCoins : s.pot,
      };
    case 'auto_start':
      return { ...s, autoStartAtMs: value };
    case 'auto_start_cancelled':
      return { ...s, autoStartAtMs: 0 };
    case 'game_started':
      return {
        ...s,
        gameNo: value,
        lastSeat: -1, // a new game: results read from the seat I sit in
        peopleDealt: 0,
        score: [0, 0],
        courts: [0, 0],
        gameOver: null,
        results: [],
        lastResult: null,
        endEarly: [],
        autoStartAtMs: 0,
        round: null,
        log: log(s, now, `Game ${value} starts`),
      };
    case 'count_in':
      return { ...s, phase: 'count_in', countInUntilMs: value, autoStartAtMs: 0, gameOver: null, pot: 0 };
    case 'count_in_cancelled':
      return { ...s, phase: 'waiting', countInUntilMs: 0, log: log(s, now, 'Count-in stopped: someone left') };
    case 'staking':
      return { ...s, phase: 'staking', countInUntilMs: 0, pot: value };
    case 'stake_refused':
      return { ...s, phase: 'waiting', pot: 0, log: log(s, now, 'The stake was refused') };
    case 'deal_held':
      return { ...s, pot: value, log: log(s, now, 'Someone went away: the stake goes back') };
    case 'stake_returned':
      return { ...s, phase: 'waiting', pot: 0, log: log(s, now, 'Stakes returned') };
    case 'round_started':
      return {
        ...s,
        peopleDealt: Math.max(s.peopleDealt, peopleSeated(s)),
        phase: 'playing',
        roundsDealt: value,
        countInUntilMs: 0,
        lastResult: null,
        walletWaiting: false,
        round: { ...newRound(value), seedCommitment: detail },
        seats: s.seats.map((x) => ({ ...x, handSize: 0 })),
      };
    case 'round':
      return withRound(s, (r) => ({ ...r, caller: seat, dealer: num(detail.replace('dealer ', ''), -1) }));
    case 'turn':
      // value = the server's now + the turn time: a sample of the server's clock.
      return withRound(withServerClock(s, value - s.turnTimeMs, now), (r) => ({ ...r, toAct: seat, turnDeadlineMs: value }));
    case 'to_act':
      return withRound(s, (r) => ({ ...r, toAct: seat, sizesFromView: false }));
    case 'round_over':
      return withRound(s, (r) => {
        const [kind, pts] = detail.split(' ');
        return { ...r, toAct: -1, turnDeadlineMs: 0, over: { winner: seat, kind: kind ?? '', points: num(pts) } };
      });
    case 'round_result': {
      const [kind] = detail.split(' ');
      const score = parseScore(detail) ?? s.score;
      const res: RoundResult = { round: s.round?.no ?? s.roundsDealt, team: seat, kind: kind ?? '', points: value, score };
      const court = seat >= 0 && COURT_KINDS.includes(kind ?? '');
      const courts: [number, number] = [...s.courts] as [number, number];
      if (court) courts[seat] += 1;
      return {
        ...s,
        score,
        courts,
        lastResult: res,
        results: [...s.results, res],
        phase: court ? 'court_stake' : 'waiting',
        pot: court ? s.pot + 2 * s.betCoins : 0,
        round: s.round ? { ...s.round, toAct: -1, turnDeadlineMs: 0 } : s.round,
        log: log(s, now, resultText(s, res)),
      };
    }
    case 'round_abandoned':
      return { ...s, phase: 'waiting', pot: 0, round: s.round ? { ...s.round, toAct: -1, turnDeadlineMs: 0 } : null, log: log(s, now, 'The round was abandoned: stakes refunded') };
    case 'game_over': {
      const endedEarly = detail.startsWith('ended_early');
      const score = parseScore(detail) ?? s.score;
      return {
        ...s,
        score,
        phase: 'waiting',
        pot: 0,
        gameOver: { team: seat, score, endedEarly },
        finishedGame: { gameNo: s.gameNo, team: seat, score, endedEarly, results: s.results, courts: s.courts },
        endEarly: [],
        log: log(s, now, endedEarly ? 'The game was ended early' : `Game over: ${teamName(s, seat)} win ${score[0]}-${score[1]}`),
      };
    }
    case 'score': {
      // A score belongs to a game under way: a view (no `game_started`) learns there is one,
      // which "End game early" needs; its number comes with the next game_started.
      const score = parseScore(detail);
      return score ? { ...s, score, gameNo: s.gameNo || 1 } : s;
    }
    case 'seed_commitment':
      // Only in a view, and only once a round of the game was dealt.
      return withRound({ ...s, peopleDealt: Math.max(s.peopleDealt, peopleSeated(s)) }, (r) => ({ ...r, seedCommitment: detail }));
    case 'seed':
      return s.round ? { ...s, round: { ...s.round, seed: detail } } : s;

    // --- trump and the hidden trump ------------------------------------------------------
    case 'hand': {
      const kind = detail === 'first_five' ? 'first_five' : 'full';
      const out = withRound(s, (r) => ({ ...r, hand: sortHand(cards), handKind: kind }));
      return handSizesFromHand(out, kind, cards.length);
    }
    case 'trump':
      return withRound(s, (r) => ({ ...r, trump: detail, caller: r.caller >= 0 ? r.caller : seat }));
    case 'hidden': {
      const out = withRound(s, (r) => ({
        ...r,
        hiddenLaid: true,
        hiddenCard: cards[0] && !isHidden(cards[0]) ? cards[0] : r.hiddenCard,
        trump: cards[0] && !isHidden(cards[0]) ? suitOf(cards[0]) : r.trump,
      }));
      return { ...out, log: log(out, now, `${name()} laid the trump face down`) };
    }
    case 'asked': {
      const out = withRound(s, (r) => ({ ...r, askedBy: seat }));
      return { ...out, log: log(out, now, `${name()} asked to see the trump`) };
    }
    case 'shown':
      return { ...s, log: log(s, now, `${name()} shows the trump`) };
    case 'trump_shown': {
      const out = withRound(s, (r) => ({ ...r, trump: detail, trumpShown: true, trumpShownBy: seat }));
      // the face-down card goes back into the caller's hand
      const caller = out.round!.caller;
      const seats = validSeat(caller) && caller !== s.mySeat && s.round?.hiddenLaid
        ? setSeat(out, caller, { handSize: out.seats[caller].handSize + 1 })
        : out.seats;
      return { ...out, seats, log: log(out, now, `Trump is ${suitWord(detail)}`) };
    }
    case 'trump_set': {
      const out = withRound(s, (r) => ({ ...r, trump: detail, trumpSetBy: seat }));
      return { ...out, log: log(out, now, `${name()} cut: trump is ${suitWord(detail)}`) };
    }

    // --- tricks and piles ----------------------------------------------------------------
    case 'played': {
      if (!validSeat(seat)) return s;
      const card = cards[0] ?? '??';
      const out = withRound(s, (r) => {
        // A finished trick stays on the felt until the next lead: start a new one now.
        const current = r.current.length >= 4 ? [] : r.current;
        const hand = seat === s.mySeat ? r.hand.filter((c) => c !== card) : r.hand;
        return {
          ...r,
          current: [...current, { seat, card }],
          hand,
          toAct: -1,
          turnDeadlineMs: 0,
        };
      });
      if (s.round?.sizesFromView) return out;
      return { ...out, seats: updateHandSizesAfterPlay(out, seat) };
    }
    case 'trick': {
      const parsed = parseTrickDetail(detail);
      return withRound(s, (r) => {
        const leader = r.current.length ? r.current[0].seat : -1;
        const trick: TrickView = { leader, winner: seat, cards: r.current };
        const n = r.tricks.length;
        let marker = r.marker;
        if (s.game === 'stack') {
          if (seat === r.marker) marker = -1;
          else if (n > 0) marker = seat;
        }
        return {
          ...r,
          tricks: [...r.tricks, trick],
          // keep `current` (4 cards) on the felt until the next lead
          tricksWon: parsed ? parsed.tricks : r.tricksWon,
          count: parsed ? parsed.count : r.count,
          pile: r.pile + 1,
          stack: r.stack + 1,
          marker,
          askedBy: -1,
        };
      });
    }
    case 'tricks': {
      const parsed = parseTrickDetail(detail);
      return parsed ? withRound(s, (r) => ({ ...r, tricksWon: parsed.tricks, count: parsed.count })) : s;
    }
    case 'trick_cards': {
      const leader = num(detail.replace('leader ', ''), 0);
      const trick: TrickView = {
        leader,
        winner: seat,
        cards: cards.map((card, i) => ({ seat: (leader + i) % 4, card })),
      };
      return withRound(s, (r) => ({ ...r, tricks: [...r.tricks, trick], current: r.current.length === 0 || r.current.length >= 4 ? trick.cards : r.current }));
    }
    case 'pickup': {
      const count = num(detail);
      const out = withRound(s, (r) => ({ ...r, pile: 0, pickups: [...r.pickups, { seat, count }] }));
      return { ...out, log: log(out, now, `${name()} picked up ${count} ${count === 1 ? 'trick' : 'tricks'}`) };
    }
    case 'pile':
      return withRound(s, (r) => ({ ...r, pile: num(detail) }));
    case 'stack_payout': {
      const points = num(detail);
      const out = withRound(s, (r) => ({ ...r, stack: 0, marker: -1, stackPayouts: [...r.stackPayouts, { team: seat, points }] }));
      return { ...out, log: log(out, now, `${teamName(s, seat)} take the stack: ${points}`) };
    }
    case 'stack':
      return withRound(s, (r) => ({ ...r, marker: seat, stack: num(detail) }));
    case 'hand_sizes': {
      const sizes = detail.split(' ').map((x) => num(x));
      if (s.round) s = { ...s, round: { ...s.round, sizesFromView: true } };
      return { ...s, seats: s.seats.map((x, i) => ({ ...x, handSize: sizes[i] ?? 0 })) };
    }

    // --- votes ----------------------------------------------------------------------------
    case 'vote': {
      const kind = detail === 'swap' ? 'swap' : 'bot';
      const vote: VoteView = { seat, asker: player, kind, deadlineMs: value, votes: {} };
      return { ...s, vote };
    }
    case 'voted':
      if (!s.vote || !validSeat(seat)) return s;
      return { ...s, vote: { ...s.vote, votes: { ...s.vote.votes, [seat]: detail === 'no' ? 'no' : 'yes' } } };
    case 'vote_result': {
      const what = s.vote?.kind === 'swap' ? 'Partner swap' : 'Bot';
      const word = detail === 'passed' ? 'agreed' : detail === 'rejected' ? 'refused' : 'cancelled';
      return { ...s, vote: null, log: log(s, now, `${what} vote ${word}`) };
    }
    case 'swapped': {
      const other = value;
      if (!validSeat(seat) || !validSeat(other)) return s;
      const a = s.seats[seat];
      const b = s.seats[other];
      const seats = s.seats.map((x) =>
        x.seat === seat ? { ...b, seat } : x.seat === other ? { ...a, seat: other } : x,
      );
      const mySeat = mySeatOf(seats, s.me, s.mySeat === seat ? other : s.mySeat === other ? seat : s.mySeat);
      const hostSeat = seats.findIndex((x) => x.player === s.hostPlayer);
      return { ...s, seats, mySeat, hostSeat, log: log(s, now, 'Partners swapped') };
    }
    case 'end_early':
      return {
        ...s,
        ...(s.endEarly.includes(seat) // told again (a view after a reconnect): one agreement, one line
          ? {}
          : { endEarly: [...s.endEarly, seat], log: log(s, now, `${name()} agreed to end the game`) }),
      };

    // --- voice notes --------------------------------------------------------------------------
    case 'voice_recording':
      return { ...s, recording: { seat, player, untilMs: value } };
    case 'voice_idle':
      return { ...s, recording: null };
    case 'voice_note': {
      // value = the announce's time + 1 s on the server's clock (§5.3).
      const clocked = withServerClock(s, value - NOTE_PLAY_DELAY_MS, now);
      const notes = [...s.notes, { noteId: detail, seat, player, playAtMs: value, reported: false }];
      return { ...clocked, recording: null, notes: notes.slice(-NOTES_MAX) };
    }
    case 'reported':
      return {
        ...s,
        notes: s.notes.map((n) => (n.noteId === detail ? { ...n, reported: true } : n)),
        log: log(s, now, 'Voice note reported'),
      };
    default:
      return s; // unknown event types may be added: ignore them
  }
}

function handSizesFromHand(s: TableState, kind: string, mine: number): TableState {
  // A hand event: the first five, or the full hand after the call / the deal.
  const r = s.round!;
  const played = r.tricks.length > 0 || r.current.length > 0;
  if (played) {
    return s.mySeat >= 0 ? { ...s, seats: setSeat(s, s.mySeat, { handSize: mine }) } : s;
  }
  const each = kind === 'first_five' ? 5 : 13;
  const seats = s.seats.map((x) => {
    if (x.seat === s.mySeat) return { ...x, handSize: mine };
    if (x.kind === 'empty') return { ...x, handSize: 0 };
    // a hidden caller keeps one card face down
    const size = kind === 'full' && r.hiddenLaid && x.seat === r.caller ? 12 : each;
    return { ...x, handSize: size };
  });
  return { ...s, seats };
}

export function applyResult(s: TableState, r: WireResult, now: number): TableState {
  const id = num(r.commandId);
  const sent = s.pending[id];
  const pending = { ...s.pending };
  delete pending[id];
  const code = r.code ?? 0;
  if (code === 0) {
    const clear = s.refusal && sent && (sent.type === s.refusal.type || sent.type === 'move');
    return { ...s, pending, refusal: clear ? null : s.refusal };
  }
  const type = sent?.type ?? 'command';
  return {
    ...s,
    pending,
    refusal: {
      commandId: id,
      type,
      code,
      message: refusalText(code, r.message ?? ''),
      serverMessage: r.message ?? '',
      atMs: now,
    },
  };
}

const SUIT_WORDS = 'clubs|diamonds|hearts|spades';
export function refusalText(code: number, message: string): string {
  if (code === 14) return 'The table is moving to another server: try again in a moment';
  if (code === 8) return 'Too many commands: slow down';
  if (!message) return `Refused (code ${code})`;
  let m: RegExpExecArray | null;
  if ((m = new RegExp(`^seat \\d holds (${SUIT_WORDS})$`).exec(message))) return `Follow suit: you have ${m[1]}`;
  if ((m = new RegExp(`^seat \\d saw the trump and holds (${SUIT_WORDS})$`).exec(message)))
    return `You asked to see the trump: play ${m[1]}`;
  if (message === 'not your turn') return 'Not your turn yet';
  // the seat's auto-play (a bot for me) holds the turn: the button is "I'm back"
  if (/^a bot is playing for you: take_back first$/.test(message)) return 'A bot is playing for you: press "I\'m back" first';
  const text = message.replace(/^seat (\d) /, (_, d) => `seat ${Number(d) + 1} `);
  return text.charAt(0).toUpperCase() + text.slice(1);
}

export function applyNotice(s: TableState, n: WireNotice, now: number): TableState {
  switch (n.type) {
    case 'reconnecting':
      return { ...s, moving: true, log: log(s, now, 'Reconnecting…') };
    case 'reconnected':
      return { ...s, moving: false, log: log(s, now, 'Reconnected') };
    case 'wallet_unavailable':
      return { ...s, walletWaiting: true };
    case 'wallet_available':
      return { ...s, walletWaiting: false };
    default:
      return s;
  }
}

// --- derived values for the renderer ---------------------------------------------------------
export function suitWord(suit: string): string {
  return ({ C: 'clubs', D: 'diamonds', H: 'hearts', S: 'spades' } as Record<string, string>)[suit] ?? 'unknown';
}

export function teamOf(seat: number): number {
  return seat < 0 ? -1 : seat % 2;
}

export function teamName(s: TableState, team: number): string {
  if (team < 0) return 'Nobody';
  const mine = playerSeat(s);
  if (mine >= 0) return teamOf(mine) === team ? 'You and your partner' : 'Your opponents';
  return team === 0 ? 'Seats 1 & 3' : 'Seats 2 & 4';
}

export function resultText(s: TableState, r: RoundResult): string {
  if (r.team < 0) return `Round ${r.round} is a draw`;
  const kinds: Record<string, string> = {
    normal: '',
    court: ' with a Court!',
    goon_court: ' with a Goon Court!',
    kot: ' with a Kot!',
    four_point: ' with a four-pointer!',
    six_point: ' with a six-pointer!',
  };
  return `${teamName(s, r.team)} win round ${r.round}${kinds[r.kind] ?? ''} (+${r.points})`;
}

/** Coins this seat made in the last round: +bet per share won, doubled for a Court. */
export function coinsForResult(s: TableState, r: RoundResult): number {
  const mine = playerSeat(s);
  if (r.team < 0 || mine < 0) return 0;
  const mult = COURT_KINDS.includes(r.kind) ? 2 : 1;
  return (teamOf(mine) === r.team ? 1 : -1) * mult * s.betCoins;
}

/** What my seat may do now: "call" (name trump), "hide", "play", or "" (wait). */
export function myAction(s: TableState): '' | 'call' | 'hide' | 'play' {
  const r = s.round;
  if (!r || r.over || s.mySeat < 0 || r.toAct !== s.mySeat || s.phase !== 'playing') return '';
  if (r.handKind === 'first_five') return s.game === 'hidden' ? 'hide' : 'call';
  return 'play';
}

/** The led suit of the trick in progress, "" when I lead. */
export function ledSuit(r: RoundView): string {
  if (r.current.length === 0 || r.current.length >= 4) return '';
  const c = r.current[0].card;
  return isHidden(c) ? '' : suitOf(c);
}

/**
 * The cards I may play, as far as the client can know: follow suit; after asking to see a
 * hidden trump, a trump if I hold one. The server decides; it refuses what is wrong.
 */
export function legalCards(s: TableState): Set<string> {
  const r = s.round;
  const out = new Set<string>();
  if (!r || myAction(s) !== 'play') return out;
  const led = ledSuit(r);
  let allowed = r.hand;
  if (led && r.hand.some((c) => suitOf(c) === led)) {
    allowed = r.hand.filter((c) => suitOf(c) === led);
  } else if (led && s.game === 'hidden' && r.trumpShown && r.trump &&
    (r.askedBy === s.mySeat || (r.trumpShownBy === s.mySeat && s.mySeat === r.caller)) &&
    r.hand.some((c) => suitOf(c) === r.trump)) {
    allowed = r.hand.filter((c) => suitOf(c) === r.trump);
  }
  allowed.forEach((c) => out.add(c));
  return out;
}

/** hidden: may I ask to see the trump now (not the caller, cannot follow, not leading)? */
export function canAsk(s: TableState): boolean {
  const r = s.round;
  if (!r || s.game !== 'hidden' || myAction(s) !== 'play' || r.trumpShown) return false;
  if (s.mySeat === r.caller) return false;
  const led = ledSuit(r);
  return !!led && !r.hand.some((c) => suitOf(c) === led);
}

/** hidden: may I (the caller) show the trump now? */
export function canShow(s: TableState): boolean {
  const r = s.round;
  if (!r || s.game !== 'hidden' || myAction(s) !== 'play' || r.trumpShown || !r.hiddenLaid) return false;
  if (s.mySeat !== r.caller) return false;
  const led = ledSuit(r);
  if (!led) {
    const last = r.tricks[r.tricks.length - 1];
    return r.tricks.length > 0 && !!last && last.winner === s.mySeat;
  }
  return !r.hand.some((c) => suitOf(c) === led);
}

/** The cards on the felt: the trick in progress, or the finished one until the next lead. */
export function feltCards(r: RoundView | null): { cards: PlayedCard[]; winner: number } {
  if (!r) return { cards: [], winner: -1 };
  const last = r.tricks[r.tricks.length - 1];
  if (r.current.length >= 4 && last) return { cards: r.current, winner: last.winner };
  return { cards: r.current, winner: -1 };
}

export function isHost(s: TableState): boolean {
  return s.me !== '' && s.me === s.hostPlayer;
}

export function inRound(s: TableState): boolean {
  return s.phase === 'playing' && !!s.round && !s.round.over;
}
