// Small presentational pieces: cards, card backs, avatars, the turn ring.
import { SUIT_SYMBOL, cardName, isHidden, isRed, rankLabel, suitOf } from './cards';

export function CardFace(props: {
  card: string;
  small?: boolean;
  legal?: boolean;
  dim?: boolean;
  onPlay?: () => void;
  onKey?: (e: KeyboardEvent) => void;
  tabIndex?: number;
  label?: string;
  winner?: boolean;
}) {
  const { card } = props;
  if (isHidden(card)) return <CardBack small={props.small} label="a face-down card" />;
  const s = suitOf(card);
  const cls = [
    'card',
    isRed(card) ? 'red' : 'black',
    props.small ? 'small' : '',
    props.legal ? 'legal' : '',
    props.dim ? 'dim' : '',
    props.winner ? 'winner' : '',
    props.onPlay ? 'playable' : '',
  ]
    .filter(Boolean)
    .join(' ');
  const inner = (
    <>
      <span class="corner tl">
        <b>{rankLabel(card)}</b>
        <i>{SUIT_SYMBOL[s]}</i>
      </span>
      <span class="pip">{SUIT_SYMBOL[s]}</span>
      <span class="corner br">
        <b>{rankLabel(card)}</b>
        <i>{SUIT_SYMBOL[s]}</i>
      </span>
    </>
  );
  if (props.onPlay) {
    return (
      <button
        type="button"
        class={cls}
        data-card={card}
        aria-label={props.label ?? cardName(card)}
        aria-disabled={props.dim ? 'true' : undefined}
        tabIndex={props.tabIndex}
        onClick={props.onPlay}
        onKeyDown={props.onKey as any}
      >
        {inner}
      </button>
    );
  }
  return (
    <span class={cls} data-card={card} role="img" aria-label={props.label ?? cardName(card)}>
      {inner}
    </span>
  );
}

export function CardBack(props: { small?: boolean; label?: string; tiny?: boolean }) {
  return (
    <span
      class={`card back ${props.small ? 'small' : ''} ${props.tiny ? 'tiny' : ''}`}
      role={props.label ? 'img' : undefined}
      aria-label={props.label}
      aria-hidden={props.label ? undefined : 'true'}
    />
  );
}

function hash(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

const FACES = ['♠', '♥', '♦', '♣', '★', '☀', '☾', '♛', '♚', '♞', '✿', '☘'];

/** An avatar drawn here: avatar ids 1..64 pick a colour and a symbol; 0 = from the id. */
export function Avatar(props: { player: string; avatarId?: number; bot?: boolean; size?: number }) {
  const size = props.size ?? 48;
  const n = props.avatarId && props.avatarId > 0 ? props.avatarId - 1 : hash(props.player) % 64;
  const hue = (n * 47) % 360;
  const face = props.bot ? '🤖' : FACES[n % FACES.length];
  return (
    <svg class="avatar" width={size} height={size} viewBox="0 0 48 48" aria-hidden="true">
      <circle cx="24" cy="24" r="23" fill={`hsl(${hue} 55% 38%)`} stroke="rgba(255,255,255,.85)" stroke-width="2" />
      <text x="24" y="31" text-anchor="middle" font-size={props.bot ? 22 : 22} fill="#fff">
        {face}
      </text>
    </svg>
  );
}

/** The turn timer: a ring that empties as the deadline nears. */
export function TurnRing(props: { fraction: number; size: number }) {
  const r = props.size / 2 - 3;
  const c = 2 * Math.PI * r;
  const f = Math.max(0, Math.min(1, props.fraction));
  const color = f > 0.5 ? '#7be08a' : f > 0.2 ? '#ffd166' : '#ff6b6b';
  return (
    <svg class="ring" width={props.size} height={props.size} aria-hidden="true">
      <circle cx={props.size / 2} cy={props.size / 2} r={r} fill="none" stroke="rgba(0,0,0,.35)" stroke-width="5" />
      <circle
        cx={props.size / 2}
        cy={props.size / 2}
        r={r}
        fill="none"
        stroke={color}
        stroke-width="5"
        stroke-linecap="round"
        stroke-dasharray={`${c}`}
        stroke-dashoffset={`${c * (1 - f)}`}
        transform={`rotate(-90 ${props.size / 2} ${props.size / 2})`}
      />
    </svg>
  );
}

export function SuitIcon(props: { suit: string }) {
  return (
    <span class={`suit ${props.suit === 'H' || props.suit === 'D' ? 'red' : 'black'}`} aria-hidden="true">
      {SUIT_SYMBOL[props.suit] ?? '?'}
    </span>
  );
}
