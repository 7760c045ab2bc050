// The screens: sign-in, lobby (profile, create, join, open tables, my tables) and the table.
import { useEffect, useRef, useState } from 'preact/hooks';
import { Api, ApiError, ListedTable, Profile, Stats, TableOptionsWire, TableRef, newRequestId } from './api';
import { RANKS, SUITS, SUIT_SYMBOL } from './cards';
import { BOT_LEVELS, botLevelOf, botLevelText, parseGameOptions } from './state';
import { TableScreen } from './table';
import { Avatar } from './ui';

export const GAMES: { id: string; name: string; blurb: string }[] = [
  { id: 'classic', name: 'Classic', blurb: 'First to 7 tricks wins the round' },
  { id: 'piles', name: 'Piles', blurb: 'Win two in a row to pick up the pile' },
  { id: 'hidden', name: 'Hidden trump', blurb: 'The caller lays trump face down' },
  { id: 'kaat', name: 'Rung Kaat', blurb: 'The first cut sets the trump' },
  { id: 'stack', name: 'Stack', blurb: 'Two tricks in a row take the stack' },
];

export function gameLabel(id: string): string {
  return GAMES.find((g) => g.id === id)?.name ?? id;
}

export function describeOptions(json: string | undefined): string {
  const o = parseGameOptions(json);
  const parts = [gameLabel(String(o.game))];
  if (o.target !== undefined) parts.push(`to ${o.target}`);
  if (o.pile) parts.push(`pile ${o.pile}`);
  if (o.court_bonus === 'kot') parts.push('Kot');
  if (o.last_card) parts.push(`4-pt ${o.last_card}`);
  if (o.six_point) parts.push('6-pt');
  if (o.ace_cannot_win_pile) parts.push('ace no pile');
  return parts.join(' · ');
}

/** A phrase kept on one line ("bots: strong"): lines break between phrases only. */
function nb(text: string) {
  return <span class="nw">{text}</span>;
}

function errText(e: unknown): string {
  if (e instanceof ApiError) return e.message.replace(/^display_name: /, 'Name: ');
  return e instanceof Error ? e.message : String(e);
}

type Screen = { kind: 'signin' } | { kind: 'lobby' } | { kind: 'table'; tableId: string; autoJoin: boolean };

const TABLE_KEY = 'cp.table';

export function App(props: { api: Api }) {
  const api = props.api;
  const [screen, setScreen] = useState<Screen>(() => initialScreen(api));
  const [profile, setProfile] = useState<Profile | null>(null);
  const [toast, setToast] = useState('');
  const [invite, setInvite] = useState(() => inviteCode());

  const loadProfile = async () => {
    try {
      setProfile(await api.getProfile());
    } catch (e) {
      if (e instanceof ApiError && e.code === 16) {
        api.signOut();
        setScreen({ kind: 'signin' });
      }
    }
  };

  useEffect(() => {
    if (api.signedIn()) void loadProfile();
  }, [screen.kind === 'signin']);

  // Refresh the access token before it expires.
  useEffect(() => {
    if (screen.kind === 'signin') return;
    let t: ReturnType<typeof setTimeout>;
    const arm = () => {
      const ms = api.refreshInMs();
      if (ms < 0) return;
      t = setTimeout(() => {
        api.renew().then(arm, () => (t = setTimeout(arm, 5000)));
      }, Math.min(ms, 2 ** 31 - 1));
    };
    arm();
    return () => clearTimeout(t);
  }, [screen.kind]);

  // An invite link /t/<code>: resolve and join once signed in.
  useEffect(() => {
    if (!invite || !api.signedIn()) return;
    setInvite('');
    history.replaceState(null, '', '/');
    api.resolveCode(invite).then(
      (ref) => openTable(ref.tableId, true),
      (e) => setToast(`Invite: ${errText(e)}`),
    );
  }, [invite, screen.kind]);

  const openTable = (tableId: string, autoJoin: boolean) => {
    sessionStorage.setItem(TABLE_KEY, JSON.stringify({ tableId, autoJoin }));
    setScreen({ kind: 'table', tableId, autoJoin });
  };
  const leaveTable = () => {
    sessionStorage.removeItem(TABLE_KEY);
    setScreen({ kind: 'lobby' });
    void loadProfile();
  };

  let body;
  if (screen.kind === 'signin') {
    body = <SignIn api={api} onDone={() => setScreen({ kind: 'lobby' })} />;
  } else if (screen.kind === 'table') {
    body = (
      <TableScreen
        key={screen.tableId}
        api={api}
        tableId={screen.tableId}
        autoJoin={screen.autoJoin}
        profile={profile}
        onLeave={leaveTable}
        onCoinsChanged={loadProfile}
      />
    );
  } else {
    body = <Lobby api={api} profile={profile} onProfile={setProfile} onOpen={openTable} toast={setToast} />;
  }
  return (
    <div class={`app screen-${screen.kind}`}>
      {body}
      {toast && (
        <div class="toast" role="alert" onClick={() => setToast('')}>
          {toast}
          <button type="button" class="x" aria-label="Dismiss" onClick={() => setToast('')}>
            ✕
          </button>
        </div>
      )}
    </div>
  );
}

function inviteCode(): string {
  const m = /^\/t\/(\d{6})\/?$/.exec(location.pathname);
  return m ? m[1] : '';
}

function initialScreen(api: Api): Screen {
  if (!api.signedIn()) return { kind: 'signin' };
  try {
    const raw = sessionStorage.getItem(TABLE_KEY);
    if (raw && !inviteCode()) {
      const t = JSON.parse(raw);
      if (typeof t.tableId === 'string' && t.tableId) return { kind: 'table', tableId: t.tableId, autoJoin: !!t.autoJoin };
    }
  } catch {
    sessionStorage.removeItem(TABLE_KEY);
  }
  return { kind: 'lobby' };
}

function SignIn(props: { api: Api; onDone: () => void }) {
  const [name, setName] = useState(localStorage.getItem('cp.name') ?? '');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErr('');
    try {
      await props.api.guestLogin(name.trim());
      props.onDone();
    } catch (x) {
      setErr(errText(x));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <div class="brand">
        <div class="logo" aria-hidden="true">
          <span class="black">♠</span>
          <span class="red">♥</span>
          <span class="black">♣</span>
          <span class="red">♦</span>
        </div>
        <h1>Court Piece</h1>
        <p class="tag">Rung with friends, on any screen</p>
      </div>
      <form class="panel" onSubmit={submit}>
        <label for="name">Your name</label>
        <NameInput id="name" value={name} onValue={setName} placeholder="e.g. Asha" />
        {err && (
          <p class="err" role="alert">
            {err}
          </p>
        )}
        <button class="primary big" type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Play as guest'}
        </button>
        <p class="hint">No account needed: this device remembers you.</p>
      </form>
    </main>
  );
}

function Lobby(props: {
  api: Api;
  profile: Profile | null;
  onProfile: (p: Profile) => void;
  onOpen: (tableId: string, autoJoin: boolean) => void;
  toast: (s: string) => void;
}) {
  const { api, profile } = props;
  const [code, setCode] = useState('');
  const [codeErr, setCodeErr] = useState('');
  const [open, setOpen] = useState<ListedTable[] | null>(null);
  const [mine, setMine] = useState<TableRef[]>([]);
  const [stats, setStats] = useState<Stats | null>(null);
  const [quickGame, setQuickGame] = useState('classic');
  const [busy, setBusy] = useState('');
  const [tab, setTab] = useState<'play' | 'create'>('play');

  const refresh = async () => {
    api.listOpenTables().then((r) => setOpen(r.tables ?? []), () => setOpen([]));
    api.myTables().then((r) => setMine(r.tables ?? []), () => setMine([]));
    api.getStats().then(setStats, () => setStats(null));
  };
  useEffect(() => {
    void refresh();
    const t = setInterval(() => api.listOpenTables().then((r) => setOpen(r.tables ?? []), () => {}), 5000);
    return () => clearInterval(t);
  }, []);

  const join = async (e: Event) => {
    e.preventDefault();
    setCodeErr('');
    const c = code.trim();
    if (!/^\d{6}$/.test(c) && !/\/t\/\d{6}\/?$/.test(c)) {
      setCodeErr('Enter the 6-digit code or paste the invite link');
      return;
    }
    setBusy('code');
    try {
      const ref = await api.resolveCode(c);
      props.onOpen(ref.tableId, true);
    } catch (x) {
      setCodeErr(errText(x));
    } finally {
      setBusy('');
    }
  };
  const quick = async () => {
    setBusy('quick');
    try {
      const ref = await api.quickJoin(quickGame, newRequestId('qj'));
      props.onOpen(ref.tableId, false);
    } catch (x) {
      props.toast(errText(x));
    } finally {
      setBusy('');
    }
  };
  const total = stats?.total;

  return (
    <main class="lobby">
      <header class="topbar">
        <div class="me">
          <Avatar player={profile?.playerId ?? api.playerId} avatarId={profile?.avatarId} size={40} />
          <div>
            <div class="name" data-testid="my-name">{profile?.displayName ?? '…'}</div>
            <div class="coins" data-testid="coins" role="group" aria-label="coins">
              <span class="coin" aria-hidden="true" /> {profile ? (profile.coins === '-1' ? '—' : Number(profile.coins).toLocaleString()) : '…'}
            </div>
          </div>
        </div>
        <h1 class="title">Court Piece</h1>
        <div class="profile-edit">
          <NameEditor api={api} profile={profile} onProfile={props.onProfile} />
          <AvatarPicker api={api} profile={profile} onProfile={props.onProfile} />
        </div>
      </header>

      <section class="stats panel" aria-label="Your stats">
        <div class="stat-row">
          <Stat label="Played" v={total?.played} />
          <Stat label="Won" v={total?.won} />
          <Stat label="Lost" v={total?.lost} />
          <Stat label="Courts" v={total?.courts} />
          <Stat label="Quits" v={total?.quits} />
        </div>
        {stats && stats.byGame.length > 0 && (
          <details>
            <summary>By game type</summary>
            <table class="bygame">
              <thead>
                <tr>
                  <th scope="col">Game</th>
                  <th scope="col">Played</th>
                  <th scope="col">Won</th>
                  <th scope="col">Courts</th>
                  <th scope="col">Goon Courts</th>
                  <th scope="col">Quits</th>
                </tr>
              </thead>
              <tbody>
                {stats.byGame.map((g) => (
                  <tr key={g.game}>
                    <th scope="row">{gameLabel(g.game)}</th>
                    <td>{g.played}</td>
                    <td>{g.won}</td>
                    <td>{g.courts}</td>
                    <td>{g.goonCourts}</td>
                    <td>{g.quits}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </details>
        )}
      </section>

      {mine.length > 0 && (
        <section class="panel" aria-labelledby="mine-h">
          <h2 id="mine-h">Your tables</h2>
          <ul class="tables">
            {mine.map((t) => (
              <li key={t.tableId}>
                <span>
                  <b>{describeOptions(t.options?.gameOptions)}</b>
                  <br />
                  <small>
                    {nb(`bet ${t.options?.betCoins ?? ''}`)} · {nb(botLevelText(t.options?.botLevel))} · {nb(`code ${t.code}`)}
                  </small>
                </span>
                <button class="primary" type="button" onClick={() => props.onOpen(t.tableId, false)}>
                  Resume
                </button>
              </li>
            ))}
          </ul>
        </section>
      )}

      <div class="tabs" role="tablist">
        <button role="tab" type="button" aria-selected={tab === 'play'} class={tab === 'play' ? 'on' : ''} onClick={() => setTab('play')}>
          Join a game
        </button>
        <button role="tab" type="button" aria-selected={tab === 'create'} class={tab === 'create' ? 'on' : ''} onClick={() => setTab('create')}>
          Create a table
        </button>
      </div>

      {tab === 'play' ? (
        <div class="cols">
          <section class="panel" aria-labelledby="quick-h">
            <h2 id="quick-h">Quick join</h2>
            <div class="row">
              <label class="sr" for="quick-game">Game type</label>
              <select id="quick-game" value={quickGame} onChange={(e) => setQuickGame((e.target as HTMLSelectElement).value)}>
                {GAMES.map((g) => (
                  <option value={g.id}>{g.name}</option>
                ))}
              </select>
              <button class="primary" type="button" onClick={quick} disabled={busy === 'quick'}>
                {busy === 'quick' ? 'Finding…' : 'Play now'}
              </button>
            </div>
            <h2 id="code-h">Join with a code</h2>
            <form class="row" onSubmit={join} aria-labelledby="code-h">
              <label class="sr" for="code">Table code or invite link</label>
              <input
                id="code"
                inputMode="numeric"
                placeholder="6-digit code or link"
                value={code}
                onInput={(e) => setCode((e.target as HTMLInputElement).value)}
              />
              <button class="primary" type="submit" disabled={busy === 'code'}>
                Join
              </button>
            </form>
            {codeErr && (
              <p class="err" role="alert">
                {codeErr}
              </p>
            )}
          </section>
          <section class="panel" aria-labelledby="open-h">
            <h2 id="open-h">
              Open tables{' '}
              <button type="button" class="link" onClick={refresh}>
                Refresh
              </button>
            </h2>
            {open === null ? (
              <p class="hint">Loading…</p>
            ) : open.length === 0 ? (
              <p class="hint">No open tables right now. Create one or use quick join.</p>
            ) : (
              <ul class="tables">
                {open.map((t) => (
                  <li key={t.table.tableId}>
                    <span>
                      <b>{describeOptions(t.table.options?.gameOptions)}</b>
                      <br />
                      <small>
                        {nb(`bet ${t.table.options?.betCoins ?? ''}`)} · <span class="nw" data-testid="bot-level">{botLevelText(t.table.options?.botLevel)}</span> ·{' '}
                        {nb(`${t.seatsTaken}/4 seated`)} · {t.phase}
                      </small>
                    </span>
                    <button type="button" onClick={() => props.onOpen(t.table.tableId, true)}>
                      Sit
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>
      ) : (
        <CreateTable api={api} onOpen={props.onOpen} />
      )}
    </main>
  );
}

function Stat(props: { label: string; v?: string }) {
  return (
    <div class="stat">
      <b>{props.v ?? '0'}</b>
      <span>{props.label}</span>
    </div>
  );
}

/** A player's name: 2..20 characters here; the lobby checks the rest (docs/lobby.md). */
function NameInput(props: { id: string; value: string; onValue: (v: string) => void; placeholder?: string; focus?: boolean }) {
  const el = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (props.focus) el.current?.focus(); // once, when it appears
  }, []);
  return (
    <input
      ref={el}
      id={props.id}
      name={props.id}
      autocomplete="nickname"
      maxLength={20}
      minLength={2}
      required
      value={props.value}
      onInput={(e) => props.onValue((e.target as HTMLInputElement).value)}
      placeholder={props.placeholder}
    />
  );
}

/** "Change name": the same rules as at sign-in (the lobby's UpdateProfile checks them and its
 * refusal is shown as it says it). Escape or Cancel closes it unchanged. */
function NameEditor(props: { api: Api; profile: Profile | null; onProfile: (p: Profile) => void }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  if (!props.profile) return <span />;
  const open = () => {
    setName(props.profile?.displayName ?? '');
    setErr('');
    setEditing(true);
  };
  const save = async (e: Event) => {
    e.preventDefault();
    if (name.trim().length < 2) {
      // The lobby reads an empty name as "unchanged": say so here rather than close as saved.
      setErr('Name: at least 2 characters besides spaces');
      return;
    }
    setBusy(true);
    setErr('');
    try {
      props.onProfile(await props.api.updateProfile(name.trim(), 0));
      setEditing(false);
    } catch (x) {
      setErr(errText(x));
    } finally {
      setBusy(false);
    }
  };
  if (!editing) {
    return (
      <button type="button" class="link" onClick={open}>
        Change name
      </button>
    );
  }
  return (
    <form class="name-edit" onSubmit={save} onKeyDown={(e) => e.key === 'Escape' && setEditing(false)}>
      <label for="new-name">Your name</label>
      <NameInput id="new-name" value={name} onValue={setName} focus />
      {err && (
        <p class="err" role="alert">
          {err}
        </p>
      )}
      <div class="row">
        <button type="submit" class="primary small" disabled={busy}>
          {busy ? 'Saving…' : 'Save'}
        </button>
        <button type="button" class="small" onClick={() => setEditing(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function AvatarPicker(props: { api: Api; profile: Profile | null; onProfile: (p: Profile) => void }) {
  const [openPick, setOpenPick] = useState(false);
  if (!props.profile) return <span />;
  const pick = async (id: number) => {
    try {
      props.onProfile(await props.api.updateProfile('', id));
    } finally {
      setOpenPick(false);
    }
  };
  return (
    <div class="picker">
      <button type="button" class="link" aria-expanded={openPick} onClick={() => setOpenPick(!openPick)}>
        Change picture
      </button>
      {openPick && (
        <div class="pick-grid" role="listbox" aria-label="Pictures" onKeyDown={(e) => e.key === 'Escape' && setOpenPick(false)}>
          {Array.from({ length: 16 }, (_, i) => i + 1).map((id) => (
            <button type="button" role="option" aria-selected={props.profile?.avatarId === id} aria-label={`Picture ${id}`} onClick={() => pick(id)}>
              <Avatar player="" avatarId={id} size={36} />
            </button>
          ))}
        </div>
      )}
    </div>
  );
}

export function buildGameOptions(f: GameForm): Record<string, unknown> {
  const o: Record<string, unknown> = { game: f.game, target: f.target, deal_fairness: f.dealFairness };
  if (f.game === 'classic') {
    o.court_bonus = f.courtBonus;
    if (f.courtBonus === 'kot') o.kot_points = f.kotPoints;
  }
  if (f.game === 'piles' || f.game === 'hidden' || f.game === 'kaat') {
    o.pile = f.pile;
    o.ace_cannot_win_pile = f.aceCannotWin;
    if (f.lastCard) {
      o.last_card = f.lastCard;
      o.six_point = f.sixPoint;
    }
  }
  return o;
}

/** CreateTable's `options` (TableOptions) from the form. */
export function buildTableOptions(f: GameForm): TableOptionsWire {
  return {
    gameOptions: JSON.stringify(buildGameOptions(f)),
    betCoins: String(f.bet),
    turnTimeMs: String(f.turnS * 1000),
    public: f.isPublic,
    botLevel: botLevelOf(f.botLevel),
  };
}

export interface GameForm {
  game: string;
  target: number;
  courtBonus: string;
  kotPoints: number;
  pile: string;
  aceCannotWin: boolean;
  lastCard: string;
  sixPoint: boolean;
  dealFairness: boolean;
  bet: number;
  turnS: number;
  isPublic: boolean;
  /** "easy", "normal" or "strong" */
  botLevel: string;
}

const DEFAULT_TARGET: Record<string, number> = { classic: 5, piles: 10, hidden: 10, kaat: 10, stack: 7 };

function CreateTable(props: { api: Api; onOpen: (id: string, autoJoin: boolean) => void }) {
  const [f, setF] = useState<GameForm>({
    game: 'classic',
    target: 5,
    courtBonus: 'court',
    kotPoints: 3,
    pile: '3-2-2',
    aceCannotWin: false,
    lastCard: '',
    sixPoint: false,
    dealFairness: true,
    bet: 50,
    turnS: 15,
    isPublic: false,
    botLevel: 'easy',
  });
  const [err, setErr] = useState('');
  const [busy, setBusy] = useState(false);
  // A retry of the same options reuses the request id (CreateTable is idempotent by it);
  // other options get a new one (the same id with other options is ALREADY_EXISTS).
  const [attempt, setAttempt] = useState<{ key: string; id: string } | null>(null);
  const set = (p: Partial<GameForm>) => setF({ ...f, ...p });
  const piles = f.game === 'piles' || f.game === 'hidden' || f.game === 'kaat';
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setErr('');
    try {
      const options = buildTableOptions(f);
      const key = JSON.stringify(options);
      const id = attempt && attempt.key === key ? attempt.id : newRequestId('ct');
      setAttempt({ key, id });
      const ref = await props.api.createTable(id, options);
      props.onOpen(ref.tableId, false);
    } catch (x) {
      setErr(errText(x));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="panel create" onSubmit={submit} aria-label="Create a table">
      <fieldset class="games">
        <legend>Game</legend>
        {GAMES.map((g) => (
          <label class={`game-choice ${f.game === g.id ? 'on' : ''}`}>
            <input
              type="radio"
              name="game"
              value={g.id}
              checked={f.game === g.id}
              onChange={() => set({ game: g.id, target: DEFAULT_TARGET[g.id] })}
            />
            <b>{g.name}</b>
            <small>{g.blurb}</small>
          </label>
        ))}
      </fieldset>
      <div class="grid">
        <label>
          Target {f.game === 'stack' ? '(points)' : '(points to win the game)'}
          {f.game === 'stack' ? (
            <select value={f.target} onChange={(e) => set({ target: +(e.target as HTMLSelectElement).value })}>
              {[5, 7, 9].map((t) => (
                <option value={t}>{t}</option>
              ))}
            </select>
          ) : (
            <input
              type="number"
              min={f.game === 'classic' ? 1 : 10}
              max={100}
              value={f.target}
              onInput={(e) => set({ target: +(e.target as HTMLInputElement).value })}
            />
          )}
        </label>
        {f.game === 'classic' && (
          <label>
            Seven-nil bonus
            <select value={f.courtBonus} onChange={(e) => set({ courtBonus: (e.target as HTMLSelectElement).value })}>
              <option value="court">Court (2 points)</option>
              <option value="kot">Kot (play on to 13)</option>
              <option value="none">None</option>
            </select>
          </label>
        )}
        {f.game === 'classic' && f.courtBonus === 'kot' && (
          <label>
            Kot points (13-0)
            <input type="number" min={2} max={10} value={f.kotPoints} onInput={(e) => set({ kotPoints: +(e.target as HTMLInputElement).value })} />
          </label>
        )}
        {piles && (
          <label>
            Pile size
            <select value={f.pile} onChange={(e) => set({ pile: (e.target as HTMLSelectElement).value })}>
              <option value="3-2-2">3-2-2</option>
              <option value="5-3-3">5-3-3</option>
            </select>
          </label>
        )}
        {piles && (
          <label>
            4-point card (last trick)
            <select
              value={f.lastCard}
              onChange={(e) => {
                const v = (e.target as HTMLSelectElement).value;
                set({ lastCard: v, sixPoint: v ? f.sixPoint : false });
              }}
            >
              <option value="">None</option>
              {SUITS.map((s) => (
                <optgroup label={SUIT_SYMBOL[s]}>
                  {[...RANKS].reverse().map((r) => (
                    <option value={r + s}>
                      {r === 'T' ? '10' : r}
                      {SUIT_SYMBOL[s]}
                    </option>
                  ))}
                </optgroup>
              ))}
            </select>
          </label>
        )}
        {piles && (
          <label class="check">
            <input type="checkbox" checked={f.sixPoint} disabled={!f.lastCard} onChange={(e) => set({ sixPoint: (e.target as HTMLInputElement).checked })} />
            6-point card (needs a 4-point card)
          </label>
        )}
        {piles && (
          <label class="check">
            <input type="checkbox" checked={f.aceCannotWin} onChange={(e) => set({ aceCannotWin: (e.target as HTMLInputElement).checked })} />
            An ace cannot win the pile
          </label>
        )}
        <label>
          <span>
            Bet: <b>{f.bet}</b> coins
          </span>
          <input type="range" min={25} max={1000} step={25} value={f.bet} onInput={(e) => set({ bet: +(e.target as HTMLInputElement).value })} />
        </label>
        <label>
          <span>
            Turn time: <b>{f.turnS}</b> s
          </span>
          <input type="range" min={5} max={30} step={1} value={f.turnS} onInput={(e) => set({ turnS: +(e.target as HTMLInputElement).value })} />
        </label>
        <div class="field">
          <label for="bot-level">Bots</label>
          <select id="bot-level" value={f.botLevel} aria-describedby="bot-level-hint" onChange={(e) => set({ botLevel: (e.target as HTMLSelectElement).value })}>
            {BOT_LEVELS.map((l) => (
              <option value={l.id}>{l.name}</option>
            ))}
          </select>
          <small id="bot-level-hint" class="hint">
            {BOT_LEVELS.find((l) => l.id === f.botLevel)?.blurb}. They take the empty seats at Start now.
          </small>
        </div>
        <label class="check">
          <input type="checkbox" checked={f.isPublic} onChange={(e) => set({ isPublic: (e.target as HTMLInputElement).checked })} />
          Public: listed among the open tables
        </label>
        <label class="check">
          <input type="checkbox" checked={f.dealFairness} onChange={(e) => set({ dealFairness: (e.target as HTMLInputElement).checked })} />
          Fair deals
        </label>
      </div>
      {err && (
        <p class="err" role="alert">
          {err}
        </p>
      )}
      <button class="primary big" type="submit" disabled={busy}>
        {busy ? 'Creating…' : 'Create table'}
      </button>
    </form>
  );
}
