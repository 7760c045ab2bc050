import { describe, expect, it } from 'vitest';
import {
  Action,
  TableState,
  WireEvent,
  botLevelOf,
  botLevelText,
  canAsk,
  canShow,
  coinsForResult,
  endEarlyRequest,
  feltCards,
  initialState,
  leavingIsAQuit,
  legalCards,
  localTime,
  myAction,
  playerSeat,
  profilesWanted,
  reduce,
  seatAvatarId,
  seatName,
  teamName,
} from '../src/state';

const ME = 'p-me0001';
let seq = 0;
function ev(type: string, f: Partial<WireEvent> = {}): Action {
  seq += 1;
  return { kind: 'event', event: { seq: String(seq), type, seat: -1, player: '', cards: [], detail: '', value: '0', ...f } };
}
function run(s: TableState, ...actions: Action[]): TableState {
  return actions.reduce((acc, a) => reduce(acc, a, 1000), s);
}
function opened(game = 'classic', resumed = false, seat = 0): Action {
  return {
    kind: 'opened',
    opened: {
      resumed,
      seat,
      table: {
        tableId: 't-1',
        code: '123456',
        hostPlayer: ME,
        betCoins: '50',
        turnTimeMs: '15000',
        gameOptions: JSON.stringify({ game }),
        phase: 'waiting',
        round: '0',
        seq: '0',
        listed: true,
        seats: [
          { seat: 0, kind: 'person', player: ME, connected: true },
          { seat: 1, kind: 'bot', player: 'bot-1', connected: true },
          { seat: 2, kind: 'person', player: 'p-partner2', connected: true },
          { seat: 3, kind: 'empty', player: '' },
        ],
      },
    },
  };
}
function table(game = 'classic'): TableState {
  seq = 0;
  return run(initialState('t-1', ME), opened(game));
}
function dealt(game = 'classic', hand = ['2C', '5C', 'KD', 'AH', '3S']): TableState {
  return run(
    table(game),
    ev('seated', { seat: 3, player: 'bot-3', detail: 'bot' }),
    ev('game_started', { value: '1' }),
    ev('count_in', { value: '9000' }),
    ev('staking', { value: '200' }),
    ev('round_started', { value: '1', detail: 'ab'.repeat(32) }),
    ev('round', { seat: 0, detail: 'dealer 3' }),
    ev('hand', { seat: 0, cards: hand, detail: game === 'kaat' ? 'full' : 'first_five' }),
    ev('turn', { seat: 0, value: '20000' }),
  );
}

describe('opened', () => {
  it('builds the table from TableInfo', () => {
    const s = table();
    expect(s.code).toBe('123456');
    expect(s.mySeat).toBe(0);
    expect(s.betCoins).toBe(50);
    expect(s.seats.map((x) => x.kind)).toEqual(['person', 'bot', 'person', 'empty']);
    expect(s.hostSeat).toBe(0);
    expect(s.connection).toBe('open');
    expect(s.game).toBe('classic');
  });
  it('resumed=false replaces the view, resumed=true keeps it', () => {
    const s = dealt();
    expect(s.round?.hand.length).toBe(5);
    const resumed = run(s, opened('classic', true));
    expect(resumed.round?.hand.length).toBe(5);
    expect(resumed.lastSeq).toBe(s.lastSeq);
    const fresh = run(s, opened('classic', false));
    expect(fresh.round).toBeNull();
    expect(fresh.lastSeq).toBe(0);
  });
  it('proto3 JSON: a seat left out is seat 0 (defaults may be omitted)', () => {
    const s = run(initialState('t', ME), { kind: 'opened', opened: { table: { tableId: 't' } } });
    expect(s.mySeat).toBe(0);
    const e = reduce(s, { kind: 'event', event: { seq: '1', type: 'turn', value: '5' } }, 0);
    expect(e.round?.toAct).toBe(0);
  });
  it('the bot level: from TableInfo.botLevel; left out or "" is easy', () => {
    expect(table().botLevel).toBe('easy'); // left out (proto3 JSON)
    for (const level of ['easy', 'normal', 'strong']) {
      const a = opened();
      if (a.kind === 'opened') a.opened.table!.botLevel = level;
      expect(run(initialState('t', ME), a).botLevel).toBe(level);
    }
    const blank = opened();
    if (blank.kind === 'opened') blank.opened.table!.botLevel = '';
    expect(run(initialState('t', ME), blank).botLevel).toBe('easy');
    // a resumed view takes the level of the new TableInfo too
    const strong = opened('classic', true);
    if (strong.kind === 'opened') strong.opened.table!.botLevel = 'strong';
    expect(run(dealt(), strong).botLevel).toBe('strong');
    expect(initialState('t', ME).botLevel).toBe('easy');
    expect(botLevelOf(undefined)).toBe('easy');
    expect(botLevelOf('Normal')).toBe('normal');
    expect(botLevelText('')).toBe('bots: easy');
    expect(botLevelText('strong')).toBe('bots: strong');
  });
  it('a bad gameOptions string falls back to classic', () => {
    const a = opened();
    if (a.kind === 'opened') a.opened.table!.gameOptions = '{nope';
    expect(run(initialState('t', ME), a).game).toBe('classic');
  });
});

describe('names and pictures (GetPublicProfiles)', () => {
  const faces = (...p: { playerId?: string; displayName?: string; avatarId?: number }[]): Action => ({ kind: 'profiles', profiles: p });

  it('wants the people seated whose profile is unknown, never bots or empty seats', () => {
    let s = table();
    expect(profilesWanted(s)).toEqual([ME, 'p-partner2']);
    s = run(s, faces({ playerId: 'p-partner2', displayName: 'Rani', avatarId: 12 }));
    expect(profilesWanted(s)).toEqual([ME]);
    s = run(s, ev('seated', { seat: 3, player: 'p-x9', detail: 'person' }));
    expect(profilesWanted(s)).toEqual([ME, 'p-x9']);
    s = run(s, ev('unseated', { seat: 3, player: 'p-x9', detail: 'left' }), ev('seated', { seat: 3, player: 'bot-3', detail: 'bot' }));
    expect(profilesWanted(s)).toEqual([ME]);
  });

  it('shows the name and avatar once known; "Player XXXX" before; bots keep their label', () => {
    let s = table();
    expect(seatName(s, 2)).toBe('Player NER2');
    expect(seatAvatarId(s, 2)).toBe(0);
    s = run(s, faces({ playerId: 'p-partner2', displayName: 'Rani', avatarId: 12 }, { playerId: 'bot-1', displayName: 'Imposter', avatarId: 3 }));
    expect(seatName(s, 2)).toBe('Rani');
    expect(seatAvatarId(s, 2)).toBe(12);
    expect(seatName(s, 1)).toBe('Bot 2');
    expect(seatAvatarId(s, 1)).toBe(0);
    expect(s.profiles['bot-1']).toBeUndefined();
    expect(seatName(s, 0)).toBe('You');
    expect(seatName(s, 3)).toBe('Empty');
    // proto3 JSON leaves avatar 0 out: drawn from the id
    s = run(s, faces({ playerId: ME, displayName: 'Me Myself' }));
    expect(s.profiles[ME]).toEqual({ displayName: 'Me Myself', avatarId: 0 });
    expect(seatAvatarId(s, 0)).toBe(0);
    // the log names people by their names from then on
    s = run(s, ev('away', { seat: 2, player: 'p-partner2', detail: 'disconnected' }));
    expect(s.log[s.log.length - 1].text).toBe('Rani lost the connection');
  });

  it('lines written before a name was known are renamed when it arrives', () => {
    let s = run(table(), ev('seated', { seat: 3, player: 'p-late8A2C', detail: 'person' }), ev('away', { seat: 3, player: 'p-late8A2C', detail: 'disconnected' }));
    expect(s.log.map((l) => l.text)).toContain('Player 8A2C sat down');
    s = run(s, faces({ playerId: 'p-late8A2C', displayName: 'Dev' }));
    const texts = s.log.map((l) => l.text);
    expect(texts).toContain('Dev sat down');
    expect(texts).toContain('Dev lost the connection');
    expect(texts.some((t) => t.includes('Player 8A2C'))).toBe(false);
  });

  it('the same answer again changes nothing; names survive a fresh view and JSON', () => {
    let s = run(table(), faces({ playerId: 'p-partner2', displayName: 'Rani', avatarId: 12 }));
    expect(reduce(s, faces({ playerId: 'p-partner2', displayName: 'Rani', avatarId: 12 }), 0)).toBe(s);
    expect(reduce(s, faces(), 0)).toBe(s);
    s = run(s, opened('classic', false, 0));
    expect(seatName(s, 2)).toBe('Rani');
    const back = JSON.parse(JSON.stringify(s)) as TableState;
    expect(seatName(back, 2)).toBe('Rani');
    expect(seatAvatarId(back, 2)).toBe(12);
  });
});

describe('seq', () => {
  it('keeps the highest seq and ignores a repeated one', () => {
    let s = table();
    s = reduce(s, { kind: 'event', event: { seq: '10', type: 'timeout', seat: 1, value: '1' } }, 0);
    expect(s.lastSeq).toBe(10);
    const again = reduce(s, { kind: 'event', event: { seq: '10', type: 'seated', seat: 3, player: 'x', detail: 'person' } }, 0);
    expect(again).toBe(s);
    s = reduce(s, { kind: 'event', event: { seq: '14', type: 'auto_start', value: '5' } }, 0);
    expect(s.lastSeq).toBe(14);
    expect(s.autoStartAtMs).toBe(5);
  });
});

describe('seating and presence', () => {
  it('seated, unseated, host, away, back, presence, bot_driving, bot_released, timeout', () => {
    let s = run(table(), ev('seated', { seat: 3, player: 'p-x9', detail: 'person' }));
    expect(s.seats[3]).toMatchObject({ kind: 'person', player: 'p-x9' });
    s = run(s, ev('away', { seat: 3, player: 'p-x9', detail: 'disconnected' }));
    expect(s.seats[3].presence).toBe('disconnected');
    s = run(s, ev('back', { seat: 3, player: 'p-x9' }));
    expect(s.seats[3].presence).toBe('present');
    s = run(s, ev('away', { seat: 3, detail: 'left' }));
    expect(s.seats[3].presence).toBe('left');
    s = run(s, ev('presence', { seat: 3, detail: 'disconnected', value: '777' }));
    expect(s.seats[3]).toMatchObject({ presence: 'disconnected', keepUntilMs: 777 });
    s = run(s, ev('bot_driving', { seat: 2 }));
    expect(s.seats[2].presence).toBe('bot_driving');
    s = run(s, ev('bot_released', { seat: 2 }));
    expect(s.seats[2].presence).toBe('present');
    s = run(s, ev('timeout', { seat: 2, value: '2' }));
    expect(s.log[s.log.length - 1].text).toContain('ran out of time');
    s = run(s, ev('unseated', { seat: 3, player: 'p-x9', detail: 'not_back_in_time' }));
    expect(s.seats[3].kind).toBe('empty');
    s = run(s, ev('host', { seat: 2, player: 'p-partner2' }));
    expect(s.hostSeat).toBe(2);
    expect(s.hostPlayer).toBe('p-partner2');
  });
  it('unseated at the game end with a bot playing for me: the results stay mine', () => {
    let s = dealt();
    s = run(
      s,
      ev('round_result', { seat: 0, detail: 'normal 1-0', value: '1' }),
      ev('game_over', { seat: 0, detail: 'won 1-0' }), // the server's order: over, then the seats freed
      ev('unseated', { seat: 0, player: ME, detail: 'bot_driving_at_game_end' }),
      ev('host', { seat: 2, player: 'p-partner2' }),
    );
    expect(s.mySeat).toBe(-1);
    expect(s.lastSeat).toBe(0);
    expect(playerSeat(s)).toBe(0);
    expect(teamName(s, 0)).toBe('You and your partner');
    expect(coinsForResult(s, s.results[0])).toBe(50);
    expect(seatName(s, 0)).toBe('You'); // the empty seat I played from
    expect(s.log.map((l) => l.text)).toContain('You were away at the game end: a bot played for you');
    expect(s.hostSeat).toBe(2);
    // Sitting again, or the next game, reads results from the seat I sit in.
    const again = run(s, ev('seated', { seat: 3, player: ME, detail: 'person' }));
    expect(again.mySeat).toBe(3);
    expect(again.lastSeat).toBe(-1);
    expect(run(s, ev('game_started', { value: '2' })).lastSeat).toBe(-1);
  });
  it('freed from the host seat: no longer shown as host, even before the next host is named', () => {
    const s = run(table(), ev('unseated', { seat: 0, player: ME, detail: 'left' }));
    expect(s.hostSeat).toBe(-1);
    expect(s.hostPlayer).toBe('');
    expect(s.lastSeat).toBe(-1); // left: not paid, the results are not read as mine
    const back = run(s, ev('seated', { seat: 0, player: ME, detail: 'person' }));
    expect(back.hostSeat).toBe(-1); // not host again by an old name
    expect(run(back, ev('host', { seat: 2, player: 'p-partner2' })).hostSeat).toBe(2);
  });
  it('leaving is a quit once a round of this game was dealt with another person, until the game ends', () => {
    const alone = run(
      initialState('t-1', ME),
      opened(),
      ev('unseated', { seat: 2, player: 'p-partner2', detail: 'left' }),
      ev('game_started', { value: '1' }),
      ev('round_started', { value: '1', detail: 'ab'.repeat(32) }),
    );
    expect(leavingIsAQuit(alone)).toBe(false); // bots only besides me: the game does not count
    let s = table();
    expect(leavingIsAQuit(s)).toBe(false); // no game
    s = run(s, ev('game_started', { value: '1' }), ev('count_in', { value: '9000' }));
    expect(leavingIsAQuit(s)).toBe(false); // before the first deal: free
    s = run(s, ev('round_started', { value: '1', detail: 'ab'.repeat(32) }));
    expect(leavingIsAQuit(s)).toBe(true);
    s = run(s, ev('unseated', { seat: 2, player: 'p-partner2', detail: 'left' }));
    expect(leavingIsAQuit(s)).toBe(true); // the other person left later: still counts
    s = run(s, ev('game_over', { seat: 0, detail: '5-2' }));
    expect(leavingIsAQuit(s)).toBe(false); // between games: free
    // A view of a game under way (a reload): its seed_commitment says a round was dealt.
    const view = run(table(), ev('seed_commitment', { detail: 'cd', value: '1' }), ev('score', { detail: '1-0' }));
    expect(leavingIsAQuit(view)).toBe(true);
  });
  it('a fresh view mid-round knows the pot and that a game is under way', () => {
    const s = run(
      table(),
      ev('score', { detail: '1-0' }),
      ev('round', { seat: 1, detail: 'dealer 0' }),
      ev('table_phase', { detail: 'playing', value: '2' }),
    );
    expect(s.pot).toBe(200); // 4 x bet 50
    expect(s.gameNo).toBeGreaterThan(0);
    expect(s.score).toEqual([1, 0]);
    // between rounds a view has no pot
    expect(run(table(), ev('score', { detail: '1-0' }), ev('table_phase', { detail: 'count_in', value: '2' })).pot).toBe(0);
  });
  it('my own unseat makes me not seated', () => {
    const s = run(table(), ev('unseated', { seat: 0, player: ME, detail: 'left' }));
    expect(s.mySeat).toBe(-1);
  });
  it('back of my own seat clears the round for the view that follows', () => {
    let s = dealt();
    s = run(s, ev('back', { seat: 0, player: ME }));
    expect(s.round).toBeNull();
    s = run(
      s,
      ev('seed_commitment', { detail: 'cd', value: '1' }),
      ev('score', { detail: '2-1' }),
      ev('round', { seat: 0, detail: 'dealer 3' }),
      ev('hand', { seat: 0, cards: ['AS', '2C'], detail: 'full' }),
      ev('tricks', { detail: 'tricks 5-6 count 5-6' }),
      ev('trick_cards', { seat: 1, cards: ['2H', 'AH', '3H', '4H'], detail: 'leader 0' }),
      ev('pile', { detail: '2' }),
      ev('hand_sizes', { detail: '2 2 3 3' }),
      ev('played', { seat: 2, cards: ['KS'] }),
      ev('to_act', { seat: 3 }),
      ev('table_phase', { detail: 'playing', value: '1' }),
    );
    expect(s.score).toEqual([2, 1]);
    expect(s.round?.hand).toEqual(['2C', 'AS']);
    expect(s.round?.tricks).toHaveLength(1);
    expect(s.round?.tricks[0].cards[1]).toEqual({ seat: 1, card: 'AH' });
    expect(s.round?.current).toEqual([{ seat: 2, card: 'KS' }]);
    expect(s.round?.count).toEqual([5, 6]);
    expect(s.round?.toAct).toBe(3);
    expect(s.seats.map((x) => x.handSize)).toEqual([2, 2, 3, 3]);
    expect(s.phase).toBe('playing');
    expect(s.round?.seedCommitment).toBe('cd');
  });
});

describe('game and round flow', () => {
  it('count-in, staking, deal, turn, call, play, trick, round over and result', () => {
    let s = dealt();
    expect(s.pot).toBe(200);
    expect(s.phase).toBe('playing');
    expect(s.seats.map((x) => x.handSize)).toEqual([5, 5, 5, 5]);
    expect(myAction(s)).toBe('call');
    s = run(s, ev('trump', { seat: 0, detail: 'H' }), ev('hand', { seat: 0, detail: 'full', cards: ['2C', '5C', 'KD', 'AH', '3S', '4S', '5S', '6S', '7S', '8S', '9S', 'TS', 'JS'] }));
    expect(s.round?.trump).toBe('H');
    expect(s.seats.map((x) => x.handSize)).toEqual([13, 13, 13, 13]);
    s = run(s, ev('turn', { seat: 0, value: '30000' }));
    expect(myAction(s)).toBe('play');
    expect(legalCards(s).size).toBe(13); // I lead: anything
    s = run(s, ev('played', { seat: 0, cards: ['KD'] }), ev('played', { seat: 1, cards: ['2D'] }), ev('played', { seat: 2, cards: ['AD'] }));
    expect(s.round?.hand).not.toContain('KD');
    expect(s.seats[0].handSize).toBe(12);
    s = run(s, ev('played', { seat: 3, cards: ['3D'] }), ev('trick', { seat: 2, detail: 'tricks 1-0 count 1-0' }));
    expect(s.round?.tricksWon).toEqual([1, 0]);
    expect(feltCards(s.round).winner).toBe(2);
    expect(feltCards(s.round).cards).toHaveLength(4);
    s = run(s, ev('played', { seat: 2, cards: ['4C'] }));
    expect(s.round?.current).toEqual([{ seat: 2, card: '4C' }]);
    s = run(s, ev('turn', { seat: 0, value: '1' }));
    expect([...legalCards(s)].sort()).toEqual(['2C', '5C']); // follow suit
    s = run(s, ev('round_over', { seat: 0, detail: 'court 2' }), ev('round_result', { seat: 0, detail: 'court 2-0', value: '2' }), ev('seed', { detail: 'ff', value: '1' }));
    expect(s.round?.over).toEqual({ winner: 0, kind: 'court', points: 2 });
    expect(s.score).toEqual([2, 0]);
    expect(s.courts).toEqual([1, 0]);
    expect(s.phase).toBe('court_stake');
    expect(s.pot).toBe(300);
    expect(coinsForResult(s, s.lastResult!)).toBe(100);
    expect(s.round?.seed).toBe('ff');
    expect(myAction(s)).toBe('');
    s = run(s, ev('game_over', { seat: 0, detail: '5-3' }));
    expect(s.gameOver).toEqual({ team: 0, score: [5, 3], endedEarly: false });
    s = run(s, ev('auto_start', { value: '99' }), ev('auto_start_cancelled'));
    expect(s.autoStartAtMs).toBe(0);
  });
  it('count_in_cancelled, stake_refused, deal_held, stake_returned, round_abandoned, ended early', () => {
    let s = run(table(), ev('count_in', { value: '5' }));
    expect(s.phase).toBe('count_in');
    s = run(s, ev('count_in_cancelled'));
    expect(s.phase).toBe('waiting');
    expect(s.countInUntilMs).toBe(0);
    s = run(s, ev('staking', { value: '200' }), ev('stake_refused'));
    expect(s.pot).toBe(0);
    s = run(s, ev('staking', { value: '200' }), ev('deal_held', { value: '200' }), ev('stake_returned', { value: '200' }));
    expect(s.pot).toBe(0);
    s = dealt();
    s = run(s, ev('end_early', { seat: 0, player: ME }), ev('end_early', { seat: 2 }));
    expect(s.endEarly).toEqual([0, 2]);
    s = run(s, ev('round_abandoned', { value: '1' }), ev('game_over', { seat: -1, detail: 'ended_early 0-0' }));
    expect(s.gameOver?.endedEarly).toBe(true);
    expect(s.endEarly).toEqual([]);
  });
  it('an end-early request names who agreed and who is still to; a freed seat takes its agreement away', () => {
    let s = dealt();
    expect(endEarlyRequest(s)).toBeNull();
    s = run(s, ev('end_early', { seat: 2 }));
    expect(endEarlyRequest(s)).toEqual({ agreed: [2], waiting: [0] });
    s = run(s, ev('end_early', { seat: 2 })); // told twice (a view after a reconnect): one agreement
    expect(s.endEarly).toEqual([2]);
    expect(s.log.filter((l) => l.text.endsWith('agreed to end the game')).length).toBe(1);
    s = run(s, ev('unseated', { seat: 2, detail: 'left' }));
    expect(s.endEarly).toEqual([]);
    expect(endEarlyRequest(s)).toBeNull();
    s = run(s, ev('end_early', { seat: 0, player: ME }));
    expect(endEarlyRequest(s)).toEqual({ agreed: [0], waiting: [] });
    s = run(s, ev('game_over', { seat: -1, detail: 'ended_early 0-0' }));
    expect(endEarlyRequest(s)).toBeNull();
  });
  it('a losing draw and a lost round in coins', () => {
    let s = dealt();
    s = run(s, ev('round_result', { seat: 1, detail: 'normal 0-1', value: '1' }));
    expect(coinsForResult(s, s.lastResult!)).toBe(-50);
    expect(s.phase).toBe('waiting');
  });
});

describe('hidden trump', () => {
  it('caller hides, others see a back; ask, show, face-down throws', () => {
    let s = dealt('hidden');
    expect(myAction(s)).toBe('hide');
    s = run(s, ev('hidden', { seat: 0, cards: ['AH'] }), ev('hand', { seat: 0, detail: 'full', cards: ['2C', '5C', 'KD', '3S', '4S', '5S', '6S', '7S', '8S', '9S', 'TS', 'JS'] }));
    expect(s.round?.hiddenCard).toBe('AH');
    expect(s.round?.trump).toBe('H');
    expect(s.round?.hiddenLaid).toBe(true);
    expect(s.seats[0].handSize).toBe(12);
    expect(s.seats[1].handSize).toBe(13);
    // opponent leads hearts; I cannot follow: I may show (caller), not ask
    s = run(s, ev('played', { seat: 3, cards: ['2H'] }), ev('turn', { seat: 0, value: '1' }));
    expect(canShow(s)).toBe(true);
    expect(canAsk(s)).toBe(false);
    // I throw face down: others get "??"
    s = run(s, ev('played', { seat: 0, cards: ['2C'] }));
    expect(s.round?.current[1]).toEqual({ seat: 0, card: '2C' });
    s = run(s, ev('played', { seat: 1, cards: ['??'] }));
    expect(feltCards(s.round).cards[2].card).toBe('??');
    s = run(s, ev('asked', { seat: 2 }), ev('shown', { seat: 0 }), ev('trump_shown', { seat: 2, detail: 'H' }));
    expect(s.round?.trumpShown).toBe(true);
    expect(s.round?.askedBy).toBe(2);
  });
  it('a non-caller who cannot follow may ask, and must then play a trump', () => {
    let s = run(table('hidden'), ev('seated', { seat: 3, player: 'bot-3', detail: 'bot' }), ev('round_started', { value: '1' }), ev('round', { seat: 1, detail: 'dealer 0' }), ev('hand', { seat: 0, cards: ['2C', 'AD', '5D'], detail: 'full' }));
    s = run(s, ev('hidden', { seat: 1 }), ev('played', { seat: 1, cards: ['KS'] }), ev('turn', { seat: 0, value: '1' }));
    expect(s.round?.hiddenCard).toBe('');
    expect(s.round?.trump).toBe('');
    expect(canAsk(s)).toBe(true);
    expect(canShow(s)).toBe(false);
    s = run(s, ev('asked', { seat: 0 }), ev('trump_shown', { seat: 0, detail: 'D' }), ev('turn', { seat: 0, value: '2' }));
    expect([...legalCards(s)].sort()).toEqual(['5D', 'AD']);
    expect(canAsk(s)).toBe(false);
    expect(s.seats[1].handSize).toBeGreaterThanOrEqual(0);
  });
});

describe('kaat, piles, stack', () => {
  it('kaat: no call, trump_set by the first cut', () => {
    let s = dealt('kaat', ['2C', '3C']);
    expect(myAction(s)).toBe('play');
    s = run(s, ev('trump_set', { seat: 2, detail: 'S' }));
    expect(s.round?.trump).toBe('S');
    expect(s.round?.trumpSetBy).toBe(2);
  });
  it('piles: the pile grows per trick and a pickup empties it', () => {
    let s = dealt('piles');
    s = run(s, ev('trick', { seat: 1, detail: 'tricks 0-1 count 0-0' }), ev('trick', { seat: 1, detail: 'tricks 0-2 count 0-0' }), ev('trick', { seat: 1, detail: 'tricks 0-3 count 0-0' }));
    expect(s.round?.pile).toBe(3);
    s = run(s, ev('pickup', { seat: 1, detail: '3' }));
    expect(s.round?.pile).toBe(0);
    expect(s.round?.pickups).toEqual([{ seat: 1, count: 3 }]);
  });
  it('stack: marker and payouts as RULES §2.5 example', () => {
    let s = dealt('stack');
    s = run(s, ev('trick', { seat: 0, detail: 'tricks 1-0 count 0-0' }));
    expect(s.round).toMatchObject({ stack: 1, marker: -1 });
    s = run(s, ev('trick', { seat: 1, detail: 'tricks 1-1 count 0-0' }));
    expect(s.round).toMatchObject({ stack: 2, marker: 1 });
    s = run(s, ev('trick', { seat: 1, detail: 'tricks 1-2 count 0-3' }), ev('stack_payout', { seat: 1, detail: '3' }));
    expect(s.round).toMatchObject({ stack: 0, marker: -1 });
    expect(s.round?.stackPayouts).toEqual([{ team: 1, points: 3 }]);
    s = run(s, ev('stack', { seat: 3, detail: '4' }));
    expect(s.round).toMatchObject({ stack: 4, marker: 3 });
  });
});

describe('votes and swaps', () => {
  it('vote, voted, vote_result, swapped moves me', () => {
    let s = run(table(), ev('vote', { seat: 3, player: 'p-partner2', detail: 'bot', value: '21000' }));
    expect(s.vote).toMatchObject({ seat: 3, kind: 'bot', deadlineMs: 21000 });
    s = run(s, ev('voted', { seat: 0, player: ME, detail: 'yes' }));
    expect(s.vote?.votes[0]).toBe('yes');
    s = run(s, ev('vote_result', { seat: 3, detail: 'passed' }), ev('seated', { seat: 3, player: 'bot-3', detail: 'bot' }));
    expect(s.vote).toBeNull();
    expect(s.seats[3].kind).toBe('bot');
    // the host (me, seat 0) swaps partner (seat 2) with seat 1
    s = run(s, ev('swapped', { seat: 2, player: 'bot-1', value: '1' }));
    expect(s.seats[2].player).toBe('bot-1');
    expect(s.seats[1].player).toBe('p-partner2');
    expect(s.mySeat).toBe(0);
  });
  it('swapped when I am the partner moves my seat', () => {
    seq = 0;
    let s = run(initialState('t-1', 'p-partner2'), opened('classic', false, 2));
    expect(s.mySeat).toBe(2);
    s = run(s, ev('swapped', { seat: 2, player: 'bot-1', value: '1' }));
    expect(s.mySeat).toBe(1);
  });
});

describe('voice', () => {
  it('recording, note, idle, reported', () => {
    let s = run(table(), ev('voice_recording', { seat: 2, player: 'p-partner2', value: '8000' }));
    expect(s.recording).toEqual({ seat: 2, player: 'p-partner2', untilMs: 8000 });
    s = run(s, ev('voice_note', { seat: 2, player: 'p-partner2', detail: 'n-1', value: '9000' }));
    expect(s.recording).toBeNull();
    expect(s.notes).toEqual([{ noteId: 'n-1', seat: 2, player: 'p-partner2', playAtMs: 9000, reported: false }]);
    s = run(s, ev('reported', { seat: 2, detail: 'n-1' }));
    expect(s.notes[0].reported).toBe(true);
    s = run(s, ev('voice_recording', { seat: 2, value: '1' }), ev('voice_idle', { seat: 2, detail: 'discarded' }));
    expect(s.recording).toBeNull();
  });
});

describe('the server clock', () => {
  it('is estimated from live turn and voice_note events: the highest sample wins', () => {
    seq = 0;
    // This device's clock is 10 s behind the server's: a turn stamped at server 21,000 with a
    // 15 s turn time arrives when the device reads 11,020 (20 ms on the way).
    let s = reduce(table(), ev('turn', { seat: 1, value: String(21000 + 15000) }), 11020);
    expect(s.serverOffsetKnown).toBe(true);
    expect(s.serverOffsetMs).toBe(9980);
    // A slower event lowers nothing; a quicker one raises the estimate.
    s = reduce(s, ev('turn', { seat: 2, value: String(22000 + 15000) }), 12100);
    expect(s.serverOffsetMs).toBe(9930); // max(9900, 9980 - 50)
    s = reduce(s, ev('voice_note', { seat: 2, player: 'p-partner2', detail: 'n-1', value: String(23000 + 1000) }), 13005);
    expect(s.serverOffsetMs).toBe(9995);
    // The note plays 1 s after its announce on this device's clock too.
    expect(localTime(s, s.notes[0].playAtMs)).toBe(14005);
  });
  it('ignores events without a time', () => {
    const s = reduce(table(), ev('turn', { seat: 1, value: '0' }), 5000);
    expect(s.serverOffsetKnown).toBe(false);
    expect(s.serverOffsetMs).toBe(0);
  });
});

describe('results, refusals, notices, connection', () => {
  it('a refused move is shown by type; a later accepted move clears it', () => {
    let s = dealt();
    s = reduce(s, { kind: 'sent', commandId: 1, type: 'move', move: 'play', card: '3S' }, 0);
    s = reduce(s, { kind: 'result', result: { commandId: '1', code: 9, message: 'seat 0 holds hearts' } }, 5);
    expect(s.refusal).toEqual({
      commandId: 1,
      type: 'move',
      code: 9,
      message: 'Follow suit: you have hearts',
      serverMessage: 'seat 0 holds hearts',
      atMs: 5,
    });
    expect(s.pending).toEqual({});
    s = reduce(s, { kind: 'sent', commandId: 2, type: 'move', move: 'play', card: 'AH' }, 0);
    s = reduce(s, { kind: 'result', result: { commandId: '2', code: 0 } }, 6);
    expect(s.refusal).toBeNull();
  });
  it('rule refusals read as advice; others keep the server message', () => {
    let s = reduce(table(), { kind: 'result', result: { commandId: '1', code: 9, message: 'seat 2 saw the trump and holds spades' } }, 0);
    expect(s.refusal?.message).toBe('You asked to see the trump: play spades');
    s = reduce(s, { kind: 'result', result: { commandId: '2', code: 9, message: 'not your turn' } }, 0);
    expect(s.refusal?.message).toBe('Not your turn yet');
    s = reduce(s, { kind: 'result', result: { commandId: '3', code: 9, message: 'sitting down needs 100 coins' } }, 0);
    expect(s.refusal?.message).toBe('Sitting down needs 100 coins');
    s = reduce(s, { kind: 'result', result: { commandId: '4', code: 9, message: 'seat 2 is recording' } }, 0);
    expect(s.refusal?.message).toBe('Seat 3 is recording');
  });
  it('a move refused while a bot move is being decided for my seat shows like other refusals', () => {
    let s = dealt();
    s = reduce(s, { kind: 'sent', commandId: 5, type: 'move', move: 'play', card: '2C' }, 0);
    s = reduce(s, { kind: 'result', result: { commandId: '5', code: 9, message: 'your time ran out: a card is being played for you' } }, 7);
    expect(s.refusal).toEqual({
      commandId: 5,
      type: 'move',
      code: 9,
      message: 'Your time ran out: a card is being played for you',
      serverMessage: 'your time ran out: a card is being played for you',
      atMs: 7,
    });
    s = reduce(s, { kind: 'sent', commandId: 6, type: 'move', move: 'play', card: '2C' }, 0);
    s = reduce(s, { kind: 'result', result: { commandId: '6', code: 9, message: 'a bot is playing for you: take_back first' } }, 8);
    expect(s.refusal).toMatchObject({ type: 'move', code: 9, message: 'A bot is playing for you: press "I\'m back" first' });
  });
  it('code 14 and 8 get their own text; unknown events are ignored', () => {
    let s = table();
    s = reduce(s, { kind: 'result', result: { commandId: '7', code: 14, message: 'x' } }, 0);
    expect(s.refusal?.message).toContain('moving');
    s = reduce(s, { kind: 'result', result: { commandId: '8', code: 8, message: 'x' } }, 0);
    expect(s.refusal?.message).toContain('slow down');
    expect(s.refusal?.type).toBe('command');
    const same = run(s, ev('some_future_event'));
    expect(same.seats).toBe(s.seats);
    expect(reduce(s, { kind: 'clear_refusal' }, 0).refusal).toBeNull();
  });
  it('notices: reconnecting / reconnected / wallet', () => {
    let s = table();
    s = reduce(s, { kind: 'notice', notice: { type: 'reconnecting' } }, 0);
    expect(s.moving).toBe(true);
    s = reduce(s, { kind: 'notice', notice: { type: 'reconnected' } }, 0);
    expect(s.moving).toBe(false);
    s = reduce(s, { kind: 'notice', notice: { type: 'wallet_unavailable' } }, 0);
    expect(s.walletWaiting).toBe(true);
    s = reduce(s, { kind: 'notice', notice: { type: 'wallet_available' } }, 0);
    expect(s.walletWaiting).toBe(false);
  });
  it('a dropped connection forgets commands in flight; ended is final', () => {
    let s = reduce(table(), { kind: 'sent', commandId: 3, type: 'join' }, 0);
    s = reduce(s, { kind: 'connection', connection: 'reconnecting' }, 0);
    expect(s.pending).toEqual({});
    expect(s.connection).toBe('reconnecting');
    s = reduce(s, { kind: 'ended', message: 'the table is closed' }, 0);
    expect(s).toMatchObject({ connection: 'closed', ended: 'the table is closed' });
  });
  it('the state survives JSON (sessionStorage) unchanged', () => {
    const s = dealt('hidden');
    expect(JSON.parse(JSON.stringify(s))).toEqual(s);
  });
});
