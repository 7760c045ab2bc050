// The unary client API over HTTP + JSON (docs/client-api.md §1.2, §1.4): a guest session
// kept in localStorage, refreshed before it expires, signed in again on UNAUTHENTICATED.

export interface Session {
  playerId: string;
  role: string;
  accessToken: string;
  accessExpiresAtMs: number;
  refreshToken: string;
  refreshExpiresAtMs: number;
}

export interface TableOptionsWire {
  gameOptions: string;
  betCoins: string;
  turnTimeMs: string;
  public: boolean;
  /** How the table's bots play: "easy", "normal" or "strong"; left out / "" = easy. */
  botLevel?: string;
}
export interface TableRef {
  tableId: string;
  code: string;
  inviteLink: string;
  options?: TableOptionsWire;
  hostPlayer: string;
  seat: number;
}
export interface Profile {
  playerId: string;
  displayName: string;
  avatarId: number;
  role: string;
  coins: string;
}
/** What any signed-in player may see of another (GetPublicProfiles). */
export interface PublicProfile {
  playerId: string;
  displayName: string;
  avatarId: number; // 1..64; 0 = drawn from the id
}
export interface GameTypeStats {
  game: string;
  played: string;
  won: string;
  lost: string;
  quits: string;
  courts: string;
  goonCourts: string;
}
export interface Stats {
  byGame: GameTypeStats[];
  total?: GameTypeStats;
}
export interface ListedTable {
  table: TableRef;
  seatsTaken: number;
  phase: string;
}

export class ApiError extends Error {
  constructor(
    public code: number, // gRPC code
    public status: string,
    message: string,
    public httpStatus = 0,
  ) {
    super(message);
  }
}

export interface KeyValueStore {
  getItem(k: string): string | null;
  setItem(k: string, v: string): void;
  removeItem(k: string): void;
}

const REFRESH_EARLY_MS = 60_000;
const CALL_TIMEOUT_MS = 10_000;
const UNAUTHENTICATED = 16;
/** GetPublicProfiles takes at most this many ids per call. */
export const PUBLIC_PROFILES_MAX = 16;
const PLAYER_ID = /^[A-Za-z0-9_-]{1,64}$/;

export function randomSecret(bytes = 32): string {
  const a = new Uint8Array(bytes);
  crypto.getRandomValues(a);
  // base64url: 43 chars of [A-Za-z0-9_-] for 32 bytes
  let s = '';
  a.forEach((b) => (s += String.fromCharCode(b)));
  return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function parseSession(j: Record<string, unknown>): Session {
  return {
    playerId: String(j.playerId ?? ''),
    role: String(j.role ?? 'player'),
    accessToken: String(j.accessToken ?? ''),
    accessExpiresAtMs: Number(j.accessExpiresAtMs ?? 0),
    refreshToken: String(j.refreshToken ?? ''),
    refreshExpiresAtMs: Number(j.refreshExpiresAtMs ?? 0),
  };
}

export class Api {
  session: Session | null = null;
  private refreshing: Promise<Session> | null = null;
  /** Public profiles by player id for this session; null = asked, not a player. */
  private faces = new Map<string, PublicProfile | null>();
  private facesAsked = new Map<string, Promise<void>>();

  constructor(
    private store: KeyValueStore,
    private fetchFn: typeof fetch = (...a) => fetch(...a),
    private now: () => number = () => Date.now(),
    private base = '',
  ) {
    try {
      const raw = store.getItem('cp.session');
      if (raw) this.session = JSON.parse(raw);
    } catch {
      this.session = null;
    }
  }

  get deviceSecret(): string {
    let s = this.store.getItem('cp.device');
    if (!s || !/^[A-Za-z0-9_-]{32,128}$/.test(s)) {
      s = randomSecret();
      this.store.setItem('cp.device', s);
    }
    return s;
  }

  get playerId(): string {
    return this.session?.playerId ?? '';
  }

  signedIn(): boolean {
    return !!this.session;
  }

  signOut(): void {
    this.session = null;
    this.faces.clear();
    this.store.removeItem('cp.session');
  }

  private save(s: Session): Session {
    this.session = s;
    this.store.setItem('cp.session', JSON.stringify(s));
    return s;
  }

  private async post(method: string, body: unknown, token: string): Promise<Record<string, unknown>> {
    const ctl = typeof AbortController !== 'undefined' ? new AbortController() : null;
    const timer = ctl ? setTimeout(() => ctl.abort(), CALL_TIMEOUT_MS) : null;
    let res: Response;
    try {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (token) headers.authorization = `Bearer ${token}`;
      res = await this.fetchFn(`${this.base}/v1/${method}`, {
        method: 'POST',
        headers,
        body: JSON.stringify(body ?? {}),
        signal: ctl?.signal,
      });
    } catch (e) {
      throw new ApiError(14, 'UNAVAILABLE', 'The server cannot be reached: check the connection');
    } finally {
      if (timer) clearTimeout(timer);
    }
    let j: Record<string, unknown> = {};
    try {
      j = await res.json();
    } catch {
      j = {};
    }
    if (!res.ok) {
      throw new ApiError(
        Number(j.code ?? (res.status === 401 ? UNAUTHENTICATED : 2)),
        String(j.status ?? 'UNKNOWN'),
        String(j.message ?? `HTTP ${res.status}`),
        res.status,
      );
    }
    return j;
  }

  async guestLogin(displayName: string): Promise<Session> {
    const j = await this.post('GuestLogin', { deviceSecret: this.deviceSecret, displayName }, '');
    if (displayName) this.store.setItem('cp.name', displayName);
    return this.save(parseSession(j));
  }

  /** A fresh session: Refresh, or (refresh refused) GuestLogin again with the same device. */
  renew(): Promise<Session> {
    if (this.refreshing) return this.refreshing;
    const run = async () => {
      const s = this.session;
      if (s && s.refreshToken && s.refreshExpiresAtMs > this.now()) {
        try {
          return this.save(parseSession(await this.post('Refresh', { refreshToken: s.refreshToken }, '')));
        } catch (e) {
          if (!(e instanceof ApiError) || e.code !== UNAUTHENTICATED) throw e;
        }
      }
      return this.guestLogin(this.store.getItem('cp.name') ?? '');
    };
    this.refreshing = run().finally(() => {
      this.refreshing = null;
    });
    return this.refreshing;
  }

  /** The access token, refreshed first when it expires within a minute. */
  async token(force = false): Promise<string> {
    const s = this.session;
    if (!s) throw new ApiError(UNAUTHENTICATED, 'UNAUTHENTICATED', 'not signed in');
    if (force || s.accessExpiresAtMs - REFRESH_EARLY_MS <= this.now()) {
      return (await this.renew()).accessToken;
    }
    return s.accessToken;
  }

  /** When to refresh ahead of expiry (ms from now), for a timer. */
  refreshInMs(): number {
    if (!this.session) return -1;
    return Math.max(1000, this.session.accessExpiresAtMs - REFRESH_EARLY_MS - this.now());
  }

  async call<T>(method: string, body: unknown = {}): Promise<T> {
    const token = await this.token();
    try {
      return (await this.post(method, body, token)) as T;
    } catch (e) {
      if (e instanceof ApiError && e.code === UNAUTHENTICATED) {
        return (await this.post(method, body, await this.token(true))) as T;
      }
      throw e;
    }
  }

  getProfile = () => this.call<Profile>('GetProfile');
  updateProfile = (displayName: string, avatarId: number) =>
    this.call<Profile>('UpdateProfile', { displayName, avatarId });
  getStats = () => this.call<Stats>('GetStats', {});

  /**
   * The names and avatars of these players, cached per id for the session: only ids never
   * asked are sent (16 per call, calls in flight are shared); ids the lobby does not know
   * (the table's bots "bot-<seat>", malformed ids) are remembered as absent and not asked
   * again. A failed call caches nothing (the next call asks again) and rejects.
   */
  async publicProfiles(ids: string[]): Promise<PublicProfile[]> {
    const fresh: string[] = [];
    for (const id of ids) {
      if (this.faces.has(id) || this.facesAsked.has(id) || fresh.includes(id)) continue;
      if (!PLAYER_ID.test(id) || /^bot-\d+$/.test(id)) {
        this.faces.set(id, null);
        continue;
      }
      fresh.push(id);
    }
    for (let i = 0; i < fresh.length; i += PUBLIC_PROFILES_MAX) {
      const chunk = fresh.slice(i, i + PUBLIC_PROFILES_MAX);
      const asked = this.call<{ profiles?: Partial<PublicProfile>[] }>('GetPublicProfiles', { playerIds: chunk })
        .then((j) => {
          for (const id of chunk) this.faces.set(id, null);
          for (const p of j.profiles ?? []) {
            const id = String(p.playerId ?? '');
            if (!chunk.includes(id)) continue;
            this.faces.set(id, { playerId: id, displayName: String(p.displayName ?? ''), avatarId: Number(p.avatarId ?? 0) });
          }
        })
        .finally(() => {
          for (const id of chunk) this.facesAsked.delete(id);
        });
      for (const id of chunk) this.facesAsked.set(id, asked);
    }
    const waits = new Set<Promise<void>>();
    for (const id of ids) {
      const w = this.facesAsked.get(id);
      if (w) waits.add(w);
    }
    await Promise.all(waits);
    const out: PublicProfile[] = [];
    for (const id of new Set(ids)) {
      const p = this.faces.get(id);
      if (p) out.push(p);
    }
    return out;
  }
  createTable = (requestId: string, options: TableOptionsWire) =>
    this.call<TableRef>('CreateTable', { requestId, options });
  resolveCode = (code: string) => this.call<TableRef>('ResolveCode', { code });
  listOpenTables = (game = '') =>
    this.call<{ tables?: ListedTable[] }>('ListOpenTables', { game, limit: 30 });
  quickJoin = (game: string, requestId: string) =>
    this.call<TableRef>('QuickJoin', { game, requestId, betMinCoins: '0', betMaxCoins: '0' });
  myTables = () => this.call<{ tables?: TableRef[] }>('MyTables', {});
}

export function newRequestId(prefix: string): string {
  return `${prefix}-${randomSecret(12)}`;
}
