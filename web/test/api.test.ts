import { describe, expect, it } from 'vitest';
import { Api, ApiError, KeyValueStore } from '../src/api';
import { backoffMs, closeMessage, isFinalClose } from '../src/conn';
import { buildGameOptions, buildTableOptions } from '../src/app';

class MemStore implements KeyValueStore {
  m = new Map<string, string>();
  getItem(k: string) {
    return this.m.get(k) ?? null;
  }
  setItem(k: string, v: string) {
    this.m.set(k, v);
  }
  removeItem(k: string) {
    this.m.delete(k);
  }
}

type Call = { method: string; body: any; auth: string };
function fakeFetch(handler: (c: Call) => { status: number; body: unknown }) {
  const calls: Call[] = [];
  const f = (async (url: string, init: any) => {
    const c = { method: String(url).replace('/v1/', ''), body: JSON.parse(init.body), auth: init.headers.authorization ?? '' };
    calls.push(c);
    const r = handler(c);
    return { ok: r.status === 200, status: r.status, json: async () => r.body } as Response;
  }) as unknown as typeof fetch;
  return { f, calls };
}
const session = (n: number, exp: number) => ({
  playerId: 'p-1',
  role: 'player',
  accessToken: `a${n}`,
  accessExpiresAtMs: String(exp),
  refreshToken: `r${n}`,
  refreshExpiresAtMs: String(exp + 1e9),
});

describe('Api sessions', () => {
  it('keeps one random device secret and signs in with it', async () => {
    const store = new MemStore();
    const { f, calls } = fakeFetch(() => ({ status: 200, body: session(1, 10_000_000) }));
    const api = new Api(store, f, () => 0);
    await api.guestLogin('Asha');
    expect(calls[0].method).toBe('GuestLogin');
    expect(calls[0].body.deviceSecret).toMatch(/^[A-Za-z0-9_-]{32,128}$/);
    expect(calls[0].body.deviceSecret).toBe(store.getItem('cp.device'));
    expect(new Api(store, f).session?.accessToken).toBe('a1');
    expect(new Api(store, f).deviceSecret).toBe(calls[0].body.deviceSecret);
  });
  it('refreshes a token that expires within a minute before the call', async () => {
    let now = 0;
    let n = 1;
    const { f, calls } = fakeFetch((c) => {
      if (c.method === 'Refresh') return { status: 200, body: session(++n, now + 900_000) };
      if (c.method === 'GuestLogin') return { status: 200, body: session(n, 100_000) };
      return { status: 200, body: { playerId: 'p-1', coins: '5' } };
    });
    const api = new Api(new MemStore(), f, () => now);
    await api.guestLogin('Asha');
    now = 50_000; // 50 s before expiry
    await api.getProfile();
    expect(calls.map((c) => c.method)).toEqual(['GuestLogin', 'Refresh', 'GetProfile']);
    expect(calls[1].body.refreshToken).toBe('r1');
    expect(calls[2].auth).toBe('Bearer a2');
  });
  it('on UNAUTHENTICATED refreshes once and retries; a refused refresh signs in again', async () => {
    let n = 1;
    let denyProfile = true;
    const { f, calls } = fakeFetch((c) => {
      if (c.method === 'GuestLogin') return { status: 200, body: session(++n, 1e12) };
      if (c.method === 'Refresh') return { status: 401, body: { code: 16, status: 'UNAUTHENTICATED', message: 'used refresh token' } };
      if (denyProfile) {
        denyProfile = false;
        return { status: 401, body: { code: 16, status: 'UNAUTHENTICATED', message: 'expired' } };
      }
      return { status: 200, body: { playerId: 'p-1' } };
    });
    const api = new Api(new MemStore(), f, () => 0);
    await api.guestLogin('Asha');
    await api.getProfile();
    expect(calls.map((c) => c.method)).toEqual(['GuestLogin', 'GetProfile', 'Refresh', 'GuestLogin', 'GetProfile']);
    expect(calls[3].body.displayName).toBe('Asha');
    expect(calls[4].auth).toBe('Bearer a3');
  });
  it('errors carry the gRPC code and message', async () => {
    const { f } = fakeFetch(() => ({ status: 404, body: { code: 5, status: 'NOT_FOUND', message: 'no table has code 123456' } }));
    const api = new Api(new MemStore(), f, () => 0);
    api.session = { playerId: 'p', role: 'player', accessToken: 'a', accessExpiresAtMs: 1e12, refreshToken: 'r', refreshExpiresAtMs: 1e12 };
    await expect(api.resolveCode('123456')).rejects.toMatchObject({ code: 5, message: 'no table has code 123456', httpStatus: 404 });
    expect(new ApiError(1, 'X', 'y')).toBeInstanceOf(Error);
  });
  it('a network failure is UNAVAILABLE', async () => {
    const f = (async () => {
      throw new TypeError('failed to fetch');
    }) as unknown as typeof fetch;
    const api = new Api(new MemStore(), f, () => 0);
    await expect(api.guestLogin('x')).rejects.toMatchObject({ code: 14 });
  });
});

describe('connection rules', () => {
  it('backoff doubles from 0.5 s to 10 s with jitter', () => {
    expect(backoffMs(0, () => 0.5)).toBe(500);
    expect(backoffMs(1, () => 0.5)).toBe(1000);
    expect(backoffMs(5, () => 0.5)).toBe(10000);
    expect(backoffMs(50, () => 1)).toBe(12500);
    expect(backoffMs(0, () => 0)).toBe(375);
  });
  it('final closes: NOT_FOUND, ABORTED, PERMISSION_DENIED, INVALID_ARGUMENT, normal', () => {
    for (const c of [4005, 4010, 4007, 4003, 1000]) expect(isFinalClose(c)).toBe(true);
    for (const c of [4014, 4016, 4008, 1001, 1006, 4999]) expect(isFinalClose(c)).toBe(false);
    expect(closeMessage(4010, '')).toContain('another tab');
    expect(closeMessage(4005, 'unknown table')).toBe('This table is closed');
  });
});

describe('game options', () => {
  const base = { target: 10, courtBonus: 'court', kotPoints: 3, pile: '3-2-2', aceCannotWin: false, lastCard: '', sixPoint: false, dealFairness: true, bet: 50, turnS: 15, isPublic: false, botLevel: 'easy' };
  it('names exactly the options RULES.md §2 allows for each type', () => {
    expect(buildGameOptions({ ...base, game: 'classic', target: 5, courtBonus: 'kot', kotPoints: 4 })).toEqual({ game: 'classic', target: 5, deal_fairness: true, court_bonus: 'kot', kot_points: 4 });
    expect(buildGameOptions({ ...base, game: 'classic', target: 5 })).toEqual({ game: 'classic', target: 5, deal_fairness: true, court_bonus: 'court' });
    expect(buildGameOptions({ ...base, game: 'hidden', pile: '5-3-3', lastCard: 'AS', sixPoint: true, aceCannotWin: true })).toEqual({ game: 'hidden', target: 10, deal_fairness: true, pile: '5-3-3', ace_cannot_win_pile: true, last_card: 'AS', six_point: true });
    expect(buildGameOptions({ ...base, game: 'kaat', sixPoint: true })).toEqual({ game: 'kaat', target: 10, deal_fairness: true, pile: '3-2-2', ace_cannot_win_pile: false });
    expect(buildGameOptions({ ...base, game: 'stack', target: 9, dealFairness: false })).toEqual({ game: 'stack', target: 9, deal_fairness: false });
  });
});

describe('table options (CreateTable)', () => {
  const form = { game: 'classic', target: 5, courtBonus: 'court', kotPoints: 3, pile: '3-2-2', aceCannotWin: false, lastCard: '', sixPoint: false, dealFairness: true, bet: 75, turnS: 12, isPublic: true, botLevel: 'strong' };
  it('sends botLevel next to gameOptions, betCoins, turnTimeMs and public', async () => {
    const options = buildTableOptions(form);
    expect(options).toEqual({
      gameOptions: JSON.stringify({ game: 'classic', target: 5, deal_fairness: true, court_bonus: 'court' }),
      betCoins: '75',
      turnTimeMs: '12000',
      public: true,
      botLevel: 'strong',
    });
    expect(buildTableOptions({ ...form, botLevel: 'normal' }).botLevel).toBe('normal');
    expect(buildTableOptions({ ...form, botLevel: '' }).botLevel).toBe('easy');

    const { f, calls } = fakeFetch(() => ({ status: 200, body: { tableId: 't-1', code: '123456', options: { ...options }, hostPlayer: 'p-1', seat: -1 } }));
    const api = new Api(new MemStore(), f, () => 0);
    api.session = { playerId: 'p-1', role: 'player', accessToken: 'a', accessExpiresAtMs: 1e12, refreshToken: 'r', refreshExpiresAtMs: 1e12 };
    const ref = await api.createTable('ct-1', options);
    expect(calls[0].method).toBe('CreateTable');
    expect(calls[0].body).toEqual({ requestId: 'ct-1', options: { gameOptions: options.gameOptions, betCoins: '75', turnTimeMs: '12000', public: true, botLevel: 'strong' } });
    expect(ref.options?.botLevel).toBe('strong');
  });
  it('a refused level comes back as INVALID_ARGUMENT with the server message', async () => {
    const { f } = fakeFetch(() => ({ status: 400, body: { code: 3, status: 'INVALID_ARGUMENT', message: 'bot_level must be easy, normal or strong' } }));
    const api = new Api(new MemStore(), f, () => 0);
    api.session = { playerId: 'p-1', role: 'player', accessToken: 'a', accessExpiresAtMs: 1e12, refreshToken: 'r', refreshExpiresAtMs: 1e12 };
    await expect(api.createTable('ct-2', { ...buildTableOptions(form), botLevel: 'expert' })).rejects.toMatchObject({ code: 3, message: 'bot_level must be easy, normal or strong' });
  });
});

describe('Api public profiles', () => {
  const signedIn = () => {
    const store = new MemStore();
    store.setItem('cp.session', JSON.stringify({ ...session(1, 1e12), accessExpiresAtMs: 1e12 }));
    return store;
  };
  const known: Record<string, { displayName: string; avatarId?: number }> = {
    'p-ana': { displayName: 'Ana', avatarId: 7 },
    'p-bo': { displayName: 'Bo' }, // avatar 0 is left out of proto3 JSON
  };
  const lobby = (c: Call) => {
    if (c.method !== 'GetPublicProfiles') return { status: 404, body: { code: 5, status: 'NOT_FOUND', message: 'x' } };
    const ids: string[] = c.body.playerIds;
    if (ids.length > 16) return { status: 400, body: { code: 3, status: 'INVALID_ARGUMENT', message: 'too many' } };
    return { status: 200, body: { profiles: ids.filter((id) => known[id]).map((id) => ({ playerId: id, ...known[id] })) } };
  };

  it('asks only for ids never asked, never for bots, and caches absent ids too', async () => {
    const { f, calls } = fakeFetch(lobby);
    const api = new Api(signedIn(), f, () => 0);
    const got = await api.publicProfiles(['p-ana', 'bot-1', 'p-gone', 'p-ana', 'p-bo']);
    expect(got).toEqual([
      { playerId: 'p-ana', displayName: 'Ana', avatarId: 7 },
      { playerId: 'p-bo', displayName: 'Bo', avatarId: 0 },
    ]);
    expect(calls.map((c) => c.method)).toEqual(['GetPublicProfiles']);
    expect(calls[0].body).toEqual({ playerIds: ['p-ana', 'p-gone', 'p-bo'] });
    expect(calls[0].auth).toBe('Bearer a1');
    // All cached, the unknown one as absent: no second call.
    expect(await api.publicProfiles(['p-bo', 'p-gone', 'bot-3'])).toEqual([{ playerId: 'p-bo', displayName: 'Bo', avatarId: 0 }]);
    expect(calls.length).toBe(1);
  });

  it('shares a call in flight and splits more than 16 ids', async () => {
    const { f, calls } = fakeFetch(lobby);
    const api = new Api(signedIn(), f, () => 0);
    const [a, b] = await Promise.all([api.publicProfiles(['p-ana']), api.publicProfiles(['p-ana', 'p-bo'])]);
    expect(a.map((p) => p.displayName)).toEqual(['Ana']);
    expect(b.map((p) => p.displayName)).toEqual(['Ana', 'Bo']);
    expect(calls.map((c) => c.body.playerIds)).toEqual([['p-ana'], ['p-bo']]);
    const many = Array.from({ length: 20 }, (_, i) => `p-x${i}`);
    expect(await api.publicProfiles(many)).toEqual([]);
    expect(calls.slice(2).map((c) => c.body.playerIds.length)).toEqual([16, 4]);
  });

  it('caches nothing when the call fails, so the next one asks again', async () => {
    let down = true;
    const { f, calls } = fakeFetch((c) => (down ? { status: 503, body: { code: 14, status: 'UNAVAILABLE', message: 'lobby down' } } : lobby(c)));
    const api = new Api(signedIn(), f, () => 0);
    await expect(api.publicProfiles(['p-ana'])).rejects.toMatchObject({ code: 14 });
    down = false;
    expect(await api.publicProfiles(['p-ana'])).toEqual([{ playerId: 'p-ana', displayName: 'Ana', avatarId: 7 }]);
    expect(calls.length).toBe(2);
  });
});
