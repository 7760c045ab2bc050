// The table screen: thin rendering of the view model (state.ts) plus the connection.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, Profile } from './api';
import { SUITS, SUIT_NAME, cardName } from './cards';
import { PlayConnection } from './conn';
import {
  Action,
  COURT_KINDS,
  RoundView,
  BOT_LEVELS,
  TableState,
  botLevelOf,
  botLevelText,
  canAsk,
  canShow,
  coinsForResult,
  displayNameOf,
  endEarlyRequest,
  feltCards,
  inRound,
  initialState,
  isHost,
  leavingIsAQuit,
  legalCards,
  localTime,
  myAction,
  reduce,
  resultText,
  profilesWanted,
  seatAvatarId,
  playerSeat,
  seatName,
  suitWord,
  teamName,
  teamOf,
} from './state';
import { gameLabel } from './app';
import { Avatar, CardBack, CardFace, MicIcon, SpeakerIcon, SuitIcon, TurnRing } from './ui';
import { Recorder, VoiceRefused, VoiceUnavailable, fetchNote, mutedUntilMs, refusalReason, refusalText, uploadNote, voiceSupported, PLAY_DELAY_MS, REPORT_GRACE_MS } from './voice';

const STATE_KEY = 'cp.tableState';
const POS = ['bottom', 'right', 'top', 'left'] as const;

function loadSaved(tableId: string, me: string): TableState | null {
  try {
    const raw = sessionStorage.getItem(STATE_KEY);
    if (!raw) return null;
    const s = JSON.parse(raw) as TableState;
    if (s.tableId !== tableId || s.me !== me || typeof s.lastSeq !== 'number') return null;
    return { ...s, connection: 'connecting', pending: {}, refusal: null, profiles: s.profiles ?? {} };
  } catch {
    return null;
  }
}

function wsUrl(): string {
  const proto = location.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${proto}//${location.host}/v1/play`;
}

/** The connection and the state, as a hook: the state is the reducer over the stream. */
function useTable(api: Api, tableId: string, autoJoin: boolean) {
  const me = api.playerId;
  const [state, setState] = useState<TableState>(() => loadSaved(tableId, me) ?? initialState(tableId, me));
  const ref = useRef(state);
  const conn = useRef<PlayConnection | null>(null);
  const joinSent = useRef(false);

  const dispatch = (a: Action) => {
    const next = reduce(ref.current, a, Date.now());
    if (next === ref.current) return;
    ref.current = next;
    setState(next);
    try {
      sessionStorage.setItem(STATE_KEY, JSON.stringify(next));
    } catch {
      /* storage full: a reload gets a fresh view */
    }
  };

  useEffect(() => {
    const c = new PlayConnection(wsUrl(), tableId, (force) => api.token(force), () => ref.current.lastSeq, {
      onMessage: (m) => {
        if (m.opened) {
          dispatch({ kind: 'opened', opened: m.opened as any });
          if ((m.opened as any).seat === -1) {
            if (autoJoin && !joinSent.current) {
              joinSent.current = true;
              send({ type: 'join' });
            }
          }
        } else if (m.event) dispatch({ kind: 'event', event: m.event as any });
        else if (m.result) dispatch({ kind: 'result', result: m.result as any });
        else if (m.notice) dispatch({ kind: 'notice', notice: m.notice as any });
      },
      onState: (st) => dispatch({ kind: 'connection', connection: st }),
      onEnded: (msg) => dispatch({ kind: 'ended', message: msg }),
    });
    conn.current = c;
    (window as any).__cpConn = c; // e2e tests drop the socket through this
    c.start();
    return () => c.stop();
  }, [tableId]);

  // Names and pictures of the people seated: asked when the seats change (the Api caches
  // them per player id for the session, so a known face costs no call).
  const seatedKey = state.seats.map((v) => (v.kind === 'person' ? v.player : '')).join(',');
  useEffect(() => {
    const wanted = profilesWanted(ref.current);
    if (wanted.length === 0) return;
    api
      .publicProfiles(wanted)
      .then((profiles) => dispatch({ kind: 'profiles', profiles }))
      .catch(() => {
        /* the labels stay "Player XXXX"; the next seat change asks again */
      });
  }, [seatedKey]);

  const send = (cmd: { type: string; [k: string]: unknown }): boolean => {
    const id = conn.current?.send(cmd) ?? 0;
    if (!id) {
      dispatch({ kind: 'result', result: { commandId: '0', code: 14, message: '' } });
      return false;
    }
    dispatch({ kind: 'sent', commandId: id, type: cmd.type, move: cmd.move as string, card: cmd.card as string });
    return true;
  };
  return { state, send, dispatch };
}

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

export function TableScreen(props: {
  api: Api;
  tableId: string;
  autoJoin: boolean;
  profile: Profile | null;
  onLeave: () => void;
  onCoinsChanged: () => void;
}) {
  const { state: s, send, dispatch } = useTable(props.api, props.tableId, props.autoJoin);
  const now = useNow(250);
  const [panel, setPanel] = useState(false);

  // Coins change at a round's end and a game's end: read the balance again,
  const resultCount = s.results.length + (s.gameOver ? 100 : 0);
  useEffect(() => {
    if (resultCount) props.onCoinsChanged();
  }, [resultCount]);
  // ... and when a round is dealt: its stake has left the balance by then.
  const dealtRound = s.round?.no ?? 0;
  useEffect(() => {
    if (dealtRound) props.onCoinsChanged();
  }, [dealtRound]);

  // A refusal fades after a few seconds.
  useEffect(() => {
    if (!s.refusal) return;
    const t = setTimeout(() => dispatch({ kind: 'clear_refusal' }), 4000);
    return () => clearTimeout(t);
  }, [s.refusal?.atMs, s.refusal?.commandId]);

  const rel = (seat: number) => (seat - Math.max(0, s.mySeat) + 4) % 4;
  const r = s.round;
  const action = myAction(s);
  const legal = legalCards(s);

  const leave = () => {
    const quit = leavingIsAQuit(s) ? ', and it counts as a quit (unless this round ends the game)' : '';
    if (inRound(s) && s.mySeat >= 0) {
      if (!window.confirm(`Leave in the middle of a round? A bot plays your cards, your bet stays in the pot${quit}.`)) return;
    } else if (leavingIsAQuit(s)) {
      if (!window.confirm('Leave while the game is under way? It counts as a quit.')) return;
    }
    if (s.mySeat >= 0 && s.connection === 'open') send({ type: 'leave' });
    props.onLeave();
  };

  if (s.ended) {
    return (
      <main class="table-screen ended">
        <div class="panel center-msg" role="alert">
          <h2>{s.ended}</h2>
          <button class="primary" type="button" onClick={props.onLeave}>
            Back to the lobby
          </button>
        </div>
      </main>
    );
  }

  const banner =
    s.connection === 'reconnecting' || s.moving ? 'Reconnecting…' : s.connection === 'connecting' ? 'Connecting…' : '';

  return (
    <main class={`table-screen game-${s.game}`} aria-label="Card table">
      <header class="tbar">
        <button type="button" class="ghost" onClick={leave} aria-label="Leave the table">
          ← Leave
        </button>
        <div class="tinfo">
          <b>{gameLabel(s.game)}</b>
          <span>
            {s.gameOptions.target !== undefined ? `to ${s.gameOptions.target} · ` : ''}bet {s.betCoins}
            <span class="sep" aria-hidden="true">
              {' · '}
            </span>
            <span class="lvl" data-testid="bot-level" title={botLevelTitle(s.botLevel)}>
              {botLevelText(s.botLevel)}
            </span>
          </span>
        </div>
        <div class="score" role="group" aria-label="Game score" data-testid="score">
          <span class="team us">
            <small>{playerSeat(s) >= 0 ? 'Us' : 'Team 1'}</small>
            <b>{s.score[teamOf(Math.max(0, playerSeat(s)))]}</b>
          </span>
          <span class="dash">:</span>
          <span class="team them">
            <small>{playerSeat(s) >= 0 ? 'Them' : 'Team 2'}</small>
            <b>{s.score[1 - teamOf(Math.max(0, playerSeat(s)))]}</b>
          </span>
        </div>
        <div class="coins" role="group" aria-label="your coins">
          <span class="coin" aria-hidden="true" />{' '}
          {props.profile && props.profile.coins !== '-1' ? Number(props.profile.coins).toLocaleString() : '—'}
        </div>
        <button type="button" class="ghost more" aria-expanded={panel} onClick={() => setPanel(!panel)}>
          {panel ? 'Close' : 'Info'}
        </button>
      </header>

      {banner && (
        <div class="banner" role="status" data-testid="banner">
          <span class="spinner" aria-hidden="true" /> {banner}
        </div>
      )}
      {s.walletWaiting && (
        <div class="banner soft" role="status">
          Waiting for the bank…
        </div>
      )}

      <div class="layout">
        <section class="felt-wrap">
          <div class="felt">
            {[0, 1, 2, 3].map((seat) => (
              <SeatBox key={seat} s={s} seat={seat} pos={POS[rel(seat)]} now={now} send={send} />
            ))}
            <Center s={s} rel={rel} now={now} send={send} />
          </div>
        </section>

        <aside class={`side ${panel ? 'open' : ''}`} aria-label="Table details">
          {/* The header has no room for the balance on a phone: the drawer shows it. */}
          <div class="panel side-coins" role="group" aria-label="your coins (drawer)">
            Your coins <span class="coin" aria-hidden="true" />{' '}
            <b>{props.profile && props.profile.coins !== '-1' ? Number(props.profile.coins).toLocaleString() : '—'}</b>
          </div>
          <InvitePanel s={s} />
          <RoundInfo s={s} />
          <LastTrick s={s} />
          <Results s={s} />
          <section class="log panel" aria-label="What happened">
            <h3>Table</h3>
            <ul aria-live="polite">
              {s.log.slice(-8).map((l) => (
                <li key={l.atMs + l.text}>{l.text}</li>
              ))}
            </ul>
          </section>
        </aside>
      </div>

      <section class="me-area" aria-label="Your hand">
        {s.refusal && s.refusal.type === 'move' && (
          <div class="refusal" role="alert" data-testid="refusal">
            {s.refusal.message}
          </div>
        )}
        {/* a refused voice_start is explained beside the microphone (VoiceButton) */}
        {s.refusal && s.refusal.type !== 'move' && s.refusal.type !== 'voice_start' && (
          <div class="refusal other" role="alert" data-testid="refusal">
            {s.refusal.message}
          </div>
        )}
        <Prompt s={s} send={send} action={action} />
        {r && <Hand s={s} r={r} legal={legal} action={action} send={send} />}
        <Controls s={s} send={send} now={now} api={props.api} />
      </section>

      <GameOver s={s} onLeave={leave} onSit={() => send({ type: 'join' })} />
    </main>
  );
}

/** What the table's bot level means (the header's tooltip). */
function botLevelTitle(level: string): string {
  const l = BOT_LEVELS.find((x) => x.id === botLevelOf(level));
  const what = l ? `${l.name} bots ${l.blurb.replace(/^Bots /, '')}` : `Bots: ${level}`;
  return `${what}. A seat played for a person (time ran out, away) plays fast at any level.`;
}

function presenceLabel(s: TableState, seat: number): string {
  const v = s.seats[seat];
  if (v.kind === 'bot') return 'bot';
  if (v.kind === 'empty') return '';
  return { present: 'online', disconnected: 'offline', left: 'away', bot_driving: 'bot playing' }[v.presence];
}

function SeatBox(props: { s: TableState; seat: number; pos: string; now: number; send: (c: any) => boolean }) {
  const { s, seat, pos, now } = props;
  const v = s.seats[seat];
  const r = s.round;
  const toAct = r && r.toAct === seat && !r.over;
  const frac = toAct && r!.turnDeadlineMs ? (localTime(s, r!.turnDeadlineMs) - now) / Math.max(1, s.turnTimeMs) : 0;
  const mine = seat === s.mySeat;
  const recording = s.recording?.seat === seat;
  const host = s.hostSeat === seat;
  const canManage = s.mySeat >= 0 && !inRound(s) && s.phase !== 'staking';
  const label = v.kind === 'empty' ? `Seat ${seat + 1}: empty` : `${seatName(s, seat)}, ${presenceLabel(s, seat)}`;
  const name = mine ? 'You' : v.kind === 'empty' ? 'Empty seat' : seatName(s, seat);
  const isCaller = r && r.caller === seat && s.phase === 'playing';
  const marked = s.game === 'stack' && r && r.marker === seat;
  return (
    <div class={`seat pos-${pos} ${v.kind} ${v.presence} ${toAct ? 'acting' : ''}`} role="group" aria-label={label} data-seat={seat}>
      <div class="av">
        {toAct && <TurnRing fraction={frac} size={62} />}
        {v.kind === 'empty' ? <div class="empty-av" aria-hidden="true">+</div> : <Avatar player={v.player} bot={v.kind === 'bot'} avatarId={seatAvatarId(s, seat)} size={48} />}
        {v.kind === 'person' && <span class={`dot ${v.presence}`} title={presenceLabel(s, seat)} />}
        {recording && (
          <span class="mic-badge" title="recording a voice note" role="img" aria-label="recording a voice note">
            <MicIcon size={14} />
          </span>
        )}
      </div>
      <div class="nm">
        <b>{name}</b>
        <small>
          {[
            host ? '★ host' : '',
            isCaller ? (s.game === 'kaat' ? 'leads' : 'caller') : '',
            marked ? 'marked' : '',
            v.kind === 'person' && v.presence !== 'present' ? presenceLabel(s, seat) : '',
          ]
            .filter(Boolean)
            .join(' · ')}
        </small>
      </div>
      {r && hiddenDown(s, r) && r.caller === seat && (
        <div class="hidden-trump" data-testid="hidden-trump">
          {r.hiddenCard ? (
            <CardFace card={r.hiddenCard} small dim label={`your hidden trump: ${cardName(r.hiddenCard)}`} />
          ) : (
            <CardBack small label="the hidden trump, face down" />
          )}
          <small>trump, face down</small>
        </div>
      )}
      {!mine && r && v.kind !== 'empty' && v.handSize > 0 && (
        <div class="backs" role="img" aria-label={`${v.handSize} cards`}>
          {Array.from({ length: Math.min(v.handSize, 13) }, (_, i) => (
            <CardBack key={i} tiny />
          ))}
          <span class="count">{v.handSize}</span>
        </div>
      )}
      {canManage && v.kind === 'bot' && (
        <button type="button" class="mini" onClick={() => props.send({ type: 'remove_bot', seat })}>
          Take bot out
        </button>
      )}
      {canManage && !mine && (v.kind === 'empty' || (v.kind === 'person' && v.presence !== 'present')) && !s.vote && (
        <button type="button" class="mini" onClick={() => props.send({ type: 'ask_bot', seat })}>
          Ask for a bot
        </button>
      )}
      {canManage && isHost(s) && !s.gameNo && v.kind !== 'empty' && !mine && (seat === (s.mySeat + 1) % 4 || seat === (s.mySeat + 3) % 4) && !s.vote && (
        <button type="button" class="mini" onClick={() => props.send({ type: 'swap_partner', seat })}>
          Swap as partner
        </button>
      )}
    </div>
  );
}

const TRICK_POS = ['t-bottom', 't-right', 't-top', 't-left'];

function Center(props: { s: TableState; rel: (s: number) => number; now: number; send: (c: any) => boolean }) {
  const { s, rel, now } = props;
  const r = s.round;
  const felt = feltCards(r);
  const secs = (ms: number) => Math.max(0, Math.ceil((localTime(s, ms) - now) / 1000));
  let status = '';
  if (s.phase === 'count_in' && s.countInUntilMs) status = `Round starts in ${secs(s.countInUntilMs)} s`;
  else if (s.autoStartAtMs) status = `Game starts in ${secs(s.autoStartAtMs)} s`;
  else if (s.phase === 'staking') status = 'Taking the stakes…';
  else if (s.phase === 'court_stake') status = 'A Court! The losers stake again…';
  else if (!r && s.seats.some((x) => x.kind === 'empty')) status = 'Waiting for players';
  else if (r && r.toAct >= 0 && !r.over && r.handKind === 'first_five')
    status = r.toAct === s.mySeat ? '' : `${seatName(s, r.toAct)} ${s.game === 'hidden' ? 'is hiding' : 'is calling'} trump`;
  return (
    <>
      <div class="chips">
        {s.pot > 0 && ['staking', 'playing', 'court_stake'].includes(s.phase) && (
          <span class="chip pot" data-testid="pot">
            <span class="coin" aria-hidden="true" /> pot {s.pot}
          </span>
        )}
        {r && <TrumpChip s={s} r={r} />}
        {r && (s.game === 'piles' || s.game === 'hidden' || s.game === 'kaat') && (
          <span class="chip" data-testid="pile">
            pile {r.pile}
          </span>
        )}
        {r && s.game === 'stack' && (
          <span class="chip" data-testid="stack">
            stack {r.stack}
            {r.marker >= 0 ? ` · ${seatName(s, r.marker)} marked` : ''}
          </span>
        )}
      </div>
      <div class="center">
      <div class="trick" role="group" aria-label="Cards on the table" data-testid="trick">
        {felt.cards.map((p) => (
          <div key={p.seat + p.card} class={`played ${TRICK_POS[rel(p.seat)]}`}>
            <CardFace card={p.card} small winner={felt.winner === p.seat} label={`${seatName(s, p.seat)}: ${cardName(p.card)}`} />
          </div>
        ))}
      </div>
      {status && <div class="status" data-testid="status">{status}</div>}
      {!r && s.code && s.seats.some((x) => x.kind === 'empty') && <CenterInvite code={s.code} />}
      {r?.over && s.lastResult && (
        <div class="round-end" role="status">
          {resultText(s, s.lastResult)}
          <br />
          <small>
            {coinsForResult(s, s.lastResult) >= 0 ? '+' : ''}
            {coinsForResult(s, s.lastResult)} coins
          </small>
        </div>
      )}
      </div>
    </>
  );
}

/** hidden: the trump lies face down (a view tells only the caller, so infer it for others). */
function hiddenDown(s: TableState, r: RoundView): boolean {
  if (s.game !== 'hidden' || r.trumpShown) return false;
  // in hidden the only way out of the call phase (full hands) is the caller's hide
  return r.hiddenLaid || (r.handKind === 'full' && r.caller >= 0 && r.hand.length > 0);
}

function CenterInvite(props: { code: string }) {
  const [done, setDone] = useState('');
  const link = `${location.origin}/t/${props.code}`;
  const share = async () => {
    try {
      if ((navigator as any).share) {
        await (navigator as any).share({ title: 'Court Piece', text: `Join my Court Piece table: code ${props.code}`, url: link });
        return;
      }
      await navigator.clipboard.writeText(link);
      setDone('Link copied');
    } catch {
      setDone('');
    }
  };
  return (
    <div class="center-invite">
      <small>Table code</small>
      <b data-testid="center-code">{props.code}</b>
      <button type="button" class="primary" onClick={share}>
        {done || 'Share the link'}
      </button>
    </div>
  );
}

function TrumpChip(props: { s: TableState; r: RoundView }) {
  const { s, r } = props;
  if (s.game === 'kaat' && !r.trump) return <span class="chip" data-testid="trump">no trump yet</span>;
  if (hiddenDown(s, r)) {
    return (
      <span class="chip" data-testid="trump">
        trump hidden{r.trump ? <> (<SuitIcon suit={r.trump} /> yours)</> : ''}
      </span>
    );
  }
  if (!r.trump) return null;
  return (
    <span class="chip trumpchip" data-testid="trump">
      trump <SuitIcon suit={r.trump} />
      <span class="sr">{suitWord(r.trump)}</span>
    </span>
  );
}

function Prompt(props: { s: TableState; action: string; send: (c: any) => boolean }) {
  const { s, action } = props;
  const r = s.round;
  if (action === 'call') {
    return (
      <div class="prompt" role="group" aria-label="Name trump">
        <span>Name trump from your first five:</span>
        {SUITS.map((su) => (
          <button type="button" class={`suitbtn ${su === 'H' || su === 'D' ? 'red' : 'black'}`} aria-label={`Trump ${SUIT_NAME[su]}`} onClick={() => props.send({ type: 'move', move: 'call', card: su })}>
            <SuitIcon suit={su} />
          </button>
        ))}
      </div>
    );
  }
  if (action === 'hide') return <div class="prompt">Pick a card to lay face down: its suit is trump.</div>;
  if (action === 'play' && r) {
    return (
      <div class="prompt">
        <span>Your turn{r.current.length > 0 && r.current.length < 4 ? '' : ': lead a card'}</span>
        {canAsk(s) && (
          <button type="button" class="accent" onClick={() => props.send({ type: 'move', move: 'ask' })}>
            Ask to see trump
          </button>
        )}
        {canShow(s) && (
          <button type="button" class="accent" onClick={() => props.send({ type: 'move', move: 'show' })}>
            Show trump
          </button>
        )}
      </div>
    );
  }
  return null;
}

function Hand(props: { s: TableState; r: RoundView; legal: Set<string>; action: string; send: (c: any) => boolean }) {
  const { r, legal, action } = props;
  const box = useRef<HTMLDivElement>(null);
  const cards = r.hand;
  const playable = action === 'play' || action === 'hide';
  const onKey = (e: KeyboardEvent) => {
    if (e.key !== 'ArrowLeft' && e.key !== 'ArrowRight') return;
    const btns = Array.from(box.current?.querySelectorAll<HTMLButtonElement>('button.card') ?? []);
    const i = btns.indexOf(e.target as HTMLButtonElement);
    const j = e.key === 'ArrowLeft' ? Math.max(0, i - 1) : Math.min(btns.length - 1, i + 1);
    btns[j]?.focus();
    e.preventDefault();
  };
  const bySuit = useMemo(() => cards, [cards]);
  // stack: while I am marked my aces rank below the 2s (RULES §2.5)
  const markedMe = props.s.game === 'stack' && r.marker >= 0 && r.marker === props.s.mySeat;
  return (
    <div class={`hand ${playable ? 'active' : ''} n${cards.length}`} ref={box} role="group" aria-label={r.handKind === 'first_five' ? 'Your first five cards' : 'Your hand'} data-testid="hand">
      {bySuit.map((c, i) => {
        const isLegal = action === 'hide' || (action === 'play' && legal.has(c));
        const lowAce = markedMe && c[0] === 'A';
        return (
          <CardFace
            lowAce={lowAce}
            key={c}
            card={c}
            legal={playable && isLegal}
            dim={playable && !isLegal}
            tabIndex={i === 0 ? 0 : -1}
            onKey={onKey}
            label={`${cardName(c)}${lowAce ? ' (marked: ranks lowest)' : ''}${playable ? (isLegal ? ', playable' : ', not playable now') : ''}`}
            onPlay={() => {
              if (action === 'hide') props.send({ type: 'move', move: 'hide', card: c });
              else if (action === 'play') props.send({ type: 'move', move: 'play', card: c });
            }}
          />
        );
      })}
    </div>
  );
}

function Controls(props: { s: TableState; send: (c: any) => boolean; now: number; api: Api }) {
  const { s, send, now } = props;
  const seated = s.mySeat >= 0;
  const v = s.vote;
  const ee = endEarlyRequest(s);
  // "You", "Ali" or "You, Ali and Sara"
  const names = (seats: number[]) => {
    const n = [...seats].sort((x, y) => Number(y === s.mySeat) - Number(x === s.mySeat)).map((x) => seatName(s, x));
    return n.length < 2 ? n.join('') : `${n.slice(0, -1).join(', ')} and ${n[n.length - 1]}`;
  };
  const askerSeat = v ? s.seats.findIndex((x) => x.player === v.asker && x.kind === 'person') : -1;
  const asker = askerSeat >= 0 ? seatName(s, askerSeat) : v?.asker ? displayNameOf(v.asker, s.profiles) : '';
  const voteQuestion = (() => {
    if (!v) return '';
    const with_ = v.seat === s.mySeat ? 'you' : seatName(s, v.seat);
    const q = v.kind === 'bot' ? `a bot for seat ${v.seat + 1}?` : `swap partners with ${with_}?`;
    return asker ? `${asker} ${asker === 'You' ? 'ask' : 'asks'}: ${q}` : q.charAt(0).toUpperCase() + q.slice(1);
  })();
  const iVote = v && seated && v.votes[s.mySeat] === undefined && v.asker !== s.me && (v.kind === 'bot' ? s.seats[v.seat]?.player !== s.me : s.mySeat % 2 !== s.hostSeat % 2);
  return (
    <div class="controls">
      {!seated && s.connection === 'open' && (
        <button type="button" class="primary" onClick={() => send({ type: 'join' })}>
          Take a seat
        </button>
      )}
      {seated && !s.round && !s.gameNo && s.phase === 'waiting' && (
        <button type="button" class="primary" onClick={() => send({ type: 'start_now' })} data-testid="start-now">
          {s.seats.some((x) => x.kind === 'empty') ? 'Start now (bots fill empty seats)' : 'Start now'}
        </button>
      )}
      {seated && s.seats[s.mySeat]?.presence === 'bot_driving' && (
        <button type="button" class="primary" onClick={() => send({ type: 'take_back' })} data-testid="take-back">
          I'm back: play my own cards
        </button>
      )}
      {seated && s.gameOver === null && s.gameNo > 0 && !ee && (
        <button type="button" class="ghost small" onClick={() => send({ type: 'end_early' })}>
          End game early
        </button>
      )}
      {ee && (
        <div class="vote" role="group" aria-label="End the game early" data-testid="end-early">
          <span>
            {`${names(ee.agreed)} ${ee.agreed.length === 1 && ee.agreed[0] !== s.mySeat ? 'wants' : 'want'} to end the game early`}{' '}
            <small>
              ({ee.agreed.length} of {ee.agreed.length + ee.waiting.length} agreed
              {ee.waiting.length > 0 && ee.agreed.includes(s.mySeat) ? `; waiting for ${names(ee.waiting)}` : ''})
            </small>
          </span>
          {seated && !ee.agreed.includes(s.mySeat) && (
            <button type="button" class="primary" onClick={() => send({ type: 'end_early' })}>
              Agree to end
            </button>
          )}
        </div>
      )}
      {v && (
        <div class="vote" role="group" aria-label="Vote">
          <span>
            {voteQuestion}{' '}
            <b class="countdown">{Math.max(0, Math.ceil((localTime(s, v.deadlineMs) - now) / 1000))} s</b>
            <small> (silence = yes)</small>
          </span>
          {iVote && (
            <>
              <button type="button" class="primary" onClick={() => send({ type: 'vote', yes: true })}>
                Yes
              </button>
              <button type="button" onClick={() => send({ type: 'vote', yes: false })}>
                No
              </button>
            </>
          )}
        </div>
      )}
      {seated && <VoiceButton s={s} send={send} api={props.api} now={now} />}
      <VoicePlayer s={s} send={send} api={props.api} now={now} />
    </div>
  );
}

function VoiceButton(props: { s: TableState; send: (c: any) => boolean; api: Api; now: number }) {
  const { s, send, api } = props;
  const rec = useRef<Recorder | null>(null);
  const [recording, setRecording] = useState(false);
  const [msg, setMsg] = useState('');
  const [refusal, setRefusal] = useState('');
  // A timed mute seen in a refusal: the microphone stays off until it ends (the server's
  // time read on this device's clock), so a muted player does not take the recording slot.
  const [mutedUntil, setMutedUntil] = useState(0);
  const muted = props.now < localTime(s, mutedUntil);
  // The table refused the recording slot (one note per round, someone else recording): stop
  // the recording at once and say why; there is no lock to give back.
  const startRefused = useRef(false);
  useEffect(() => {
    if (s.refusal?.type !== 'voice_start' || !rec.current) return;
    startRefused.current = true;
    const { reason, detail } = refusalReason(s.refusal.serverMessage);
    if (reason === 'muted') {
      // The table asks moderation first: said as an upload's refusal is, and the microphone
      // stays off until the mute ends (for this visit when it lasts until an admin lifts it).
      setMsg(refusalText(reason, detail));
      setRefusal(reason);
      setMutedUntil(mutedUntilMs(detail) || Number.POSITIVE_INFINITY);
    } else {
      setMsg(/one voice note per round/i.test(s.refusal.message) ? "You already used this round's voice note" : s.refusal.message);
    }
    rec.current.cancel();
  }, [s.refusal?.atMs]);
  const iRecord = s.recording?.seat === s.mySeat && s.mySeat >= 0;
  const someoneElse = s.recording && !iRecord;
  const people = s.seats.filter((x) => x.kind === 'person').length;

  const start = async () => {
    setMsg('');
    setRefusal('');
    startRefused.current = false;
    if (!voiceSupported()) {
      setMsg('This browser cannot record');
      return;
    }
    const r = new Recorder();
    let done: Promise<any>;
    try {
      done = (await r.start()).done;
    } catch {
      setMsg('No microphone');
      return;
    }
    if (!send({ type: 'voice_start' })) {
      r.cancel();
      return;
    }
    rec.current = r;
    setRecording(true);
    const note = await done;
    setRecording(false);
    rec.current = null;
    if (startRefused.current) return; // refused: nothing to discard or send
    if (!note) {
      send({ type: 'voice_discard' });
      return;
    }
    try {
      // The table announces the note itself once moderation accepted it (voice_note event).
      const sent = await uploadNote(note, s.tableId, await api.token());
      // The answer of an earlier upload this round: this recording was not sent.
      if (sent.replayed) setMsg("You already used this round's voice note");
    } catch (e) {
      setMsg(e instanceof VoiceUnavailable ? 'Voice notes are not available on this server' : (e as Error).message);
      if (e instanceof VoiceRefused) setRefusal(e.reason);
      if (e instanceof VoiceRefused && e.reason === 'muted') setMutedUntil(mutedUntilMs(e.detail));
      // Give the lock back (the allowance stays used, §5.1); an expired one is gone already.
      if (!(e instanceof VoiceRefused && e.reason === 'no_lock')) send({ type: 'voice_discard' });
    }
  };
  if (people < 2 && !recording) return msg ? <span class="hint">{msg}</span> : null;
  return (
    <div class="voice">
      {recording ? (
        <>
          <button type="button" class="mic on" onClick={() => rec.current?.stop()} aria-label="Send the voice note">
            <MicIcon /> <span class="rec-dot" /> Send
          </button>
          <button type="button" class="x" aria-label="Discard the voice note" onClick={() => rec.current?.cancel()}>
            ✕
          </button>
        </>
      ) : (
        <button type="button" class="mic" onClick={start} disabled={!!someoneElse || (iRecord && !recording) || muted} aria-label="Record a voice note (up to 7 seconds)">
          <MicIcon />
        </button>
      )}
      {someoneElse && <span class="hint">{seatName(s, s.recording!.seat)} is recording…</span>}
      {msg && (
        <span class="hint warn" role="status" data-testid="voice-msg" data-reason={refusal || undefined}>
          {msg}
        </span>
      )}
    </div>
  );
}

/**
 * Plays each note 1 s after it was sent (its playAtMs, the server's clock read on this
 * device's through state.serverOffsetMs, so a device whose clock is off still plays it on
 * time); the audio is fetched as soon as the note is announced. Report from when it plays
 * until 5 s after it ends (its measured duration), as the server counts the window.
 */
function VoicePlayer(props: { s: TableState; send: (c: any) => boolean; api: Api; now: number }) {
  const { s, send, api, now } = props;
  const fetched = useRef(new Map<string, Promise<string>>());
  const played = useRef(new Set<string>());
  const [durations, setDurations] = useState<Record<string, number>>({});
  const playAt = (n: { playAtMs: number }) => localTime(s, n.playAtMs);
  useEffect(() => {
    for (const n of s.notes) {
      if (fetched.current.has(n.noteId) || now > playAt(n) + 8000) continue;
      const audio = api.token().then((token) => fetchNote(n.noteId, token));
      audio.catch(() => {});
      fetched.current.set(n.noteId, audio);
    }
    for (const n of s.notes) {
      if (played.current.has(n.noteId)) continue;
      if (now + 50 < playAt(n)) continue;
      played.current.add(n.noteId);
      if (now > playAt(n) + 8000) continue; // an old note from before a reload
      const audio = fetched.current.get(n.noteId);
      if (!audio) continue;
      void (async () => {
        try {
          const a = new Audio(await audio);
          a.onloadedmetadata = () => {
            if (Number.isFinite(a.duration)) setDurations((d) => ({ ...d, [n.noteId]: Math.round(a.duration * 1000) }));
          };
          // A browser's own recording (WebM from MediaRecorder) often has no length in its
          // header (duration Infinity): then its end, as heard, closes the report window.
          const started = Date.now();
          a.onended = () => {
            const heardMs = Date.now() - started;
            setDurations((d) => (d[n.noteId] !== undefined ? d : { ...d, [n.noteId]: Math.max(0, Math.min(7000, heardMs)) }));
          };
          await a.play();
        } catch {
          setDurations((d) => ({ ...d, [n.noteId]: 0 }));
        }
      })();
    }
  }, [now, s.notes.length]);
  const live = s.notes.filter((n) => n.seat !== s.mySeat && now >= playAt(n) - PLAY_DELAY_MS && now <= playAt(n) + (durations[n.noteId] ?? 7000) + REPORT_GRACE_MS);
  if (!live.length) return null;
  return (
    <div class="notes">
      {live.map((n) => (
        <div class="note" key={n.noteId}>
          <SpeakerIcon /> {seatName(s, n.seat)}
          {n.reported ? (
            <small> reported</small>
          ) : (
            now >= playAt(n) && (
              <button type="button" class="mini warn" onClick={() => send({ type: 'report', noteId: n.noteId })}>
                Report
              </button>
            )
          )}
        </div>
      ))}
    </div>
  );
}

function InvitePanel(props: { s: TableState }) {
  const { s } = props;
  const [copied, setCopied] = useState(false);
  if (!s.code) return null;
  const link = `${location.origin}/t/${s.code}`;
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(link);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  const full = s.seats.every((x) => x.kind !== 'empty');
  return (
    <section class={`panel invite ${full ? 'quiet' : ''}`} aria-label="Invite">
      <h3>Invite friends</h3>
      <div class="code" data-testid="table-code">
        {s.code}
      </div>
      <div class="row">
        <input readOnly value={link} aria-label="Invite link" data-testid="invite-link" onFocus={(e) => (e.target as HTMLInputElement).select()} />
        <button type="button" onClick={copy}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </div>
      <small>{s.listed ? 'Public table' : 'Private table: only with the code'}</small>
      <small data-testid="bot-level-info">{botLevelTitle(s.botLevel)}</small>
    </section>
  );
}

function RoundInfo(props: { s: TableState }) {
  const { s } = props;
  const r = s.round;
  if (!r) return null;
  const us = teamOf(Math.max(0, s.mySeat));
  const countLabel = s.game === 'classic' ? 'Tricks' : s.game === 'stack' ? 'Points' : 'Picked up';
  // The table's `count` is piles picked up or stack points; classic counts tricks won.
  const count = s.game === 'classic' ? r.tricksWon : r.count;
  return (
    <section class="panel roundinfo" aria-label="This round">
      <h3>Round {r.no}</h3>
      <table>
        <tbody>
          <tr>
            <th scope="row">{countLabel}</th>
            <td data-testid="count-us">{count[us]}</td>
            <td>{count[1 - us]}</td>
          </tr>
          {s.game !== 'classic' && (
            <tr>
              <th scope="row">Tricks won</th>
              <td>{r.tricksWon[us]}</td>
              <td>{r.tricksWon[1 - us]}</td>
            </tr>
          )}
          <tr>
            <th scope="row">Courts (game)</th>
            <td>{s.courts[us]}</td>
            <td>{s.courts[1 - us]}</td>
          </tr>
        </tbody>
      </table>
      <small>
        Dealer {seatName(s, r.dealer)} · {s.game === 'kaat' ? 'leader' : 'caller'} {seatName(s, r.caller)}
      </small>
    </section>
  );
}

function LastTrick(props: { s: TableState }) {
  const { s } = props;
  const r = s.round;
  const last = r?.tricks[r.tricks.length - 1];
  if (!last) return null;
  return (
    <section class="panel lasttrick" aria-label="Last trick">
      <h3>Last trick: {seatName(s, last.winner)}</h3>
      <div class="row">
        {last.cards.map((p) => (
          <CardFace key={p.seat} card={p.card} small winner={p.seat === last.winner} label={`${seatName(s, p.seat)}: ${cardName(p.card)}`} />
        ))}
      </div>
    </section>
  );
}

function Results(props: { s: TableState }) {
  const { s } = props;
  if (!s.results.length) return null;
  return (
    <section class="panel results" aria-label="Rounds of this game">
      <h3>This game</h3>
      <ol>
        {s.results.map((r) => (
          <li key={r.round}>
            {r.team < 0 ? 'Draw' : teamName(s, r.team)} {r.kind !== 'normal' ? `(${r.kind.replace('_', ' ')})` : ''} +{r.points} → {r.score[0]}-{r.score[1]}
          </li>
        ))}
      </ol>
    </section>
  );
}

function GameOver(props: { s: TableState; onLeave: () => void; onSit: () => void }) {
  const { s } = props;
  const g = s.finishedGame;
  const [dismissed, setDismissed] = useState(-1);
  if (!g || dismissed === g.gameNo) return null;
  // the next game's first deal: the results step aside
  if (s.gameNo > g.gameNo && s.round) return null;
  // Unseated at the game's end with a bot playing for me (lastSeat): still my game's result.
  const mine = playerSeat(s);
  const won = mine >= 0 && g.team === teamOf(mine);
  const us = teamOf(Math.max(0, mine));
  const coins = g.results.reduce((acc, r) => acc + coinsForResult(s, r), 0);
  return (
    <div class="overlay" role="dialog" aria-modal="true" aria-labelledby="go-h">
      <div class="panel gameover">
        <h2 id="go-h">{g.endedEarly ? 'Game ended early' : won ? 'You won!' : mine < 0 ? 'Game over' : 'You lost'}</h2>
        <div class="final">
          <span>
            <small>Us</small>
            <b>{g.score[us]}</b>
          </span>
          <span>
            <small>Them</small>
            <b>{g.score[1 - us]}</b>
          </span>
        </div>
        <p>
          Courts: {g.courts[us]} – {g.courts[1 - us]} · rounds {g.results.length} ·{' '}
          <b class={coins >= 0 ? 'pos' : 'neg'}>
            {coins >= 0 ? '+' : ''}
            {coins} coins
          </b>
        </p>
        <ol class="res">
          {g.results.map((r) => (
            <li key={r.round}>
              Round {r.round}: {r.team < 0 ? 'draw' : teamName(s, r.team)}
              {COURT_KINDS.includes(r.kind) ? ` · ${r.kind.replace('_', ' ')}` : ''} (+{r.points})
            </li>
          ))}
        </ol>
        <div class="row">
          {s.mySeat < 0 && s.lastSeat >= 0 ? (
            <button
              type="button"
              class="primary"
              onClick={() => {
                setDismissed(g.gameNo);
                props.onSit();
              }}
            >
              Take a seat for the next game
            </button>
          ) : (
            <button type="button" class="primary" onClick={() => setDismissed(g.gameNo)}>
              Stay for the next game
            </button>
          )}
          <button type="button" onClick={props.onLeave}>
            Back to the lobby
          </button>
        </div>
      </div>
    </div>
  );
}

