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
  lowAce?: boolean;
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
      {props.lowAce && <span class="low-tag">low</span>}
    </>
  );
  if (props.onPlay) {
    return (
      <button
        type="button"
        class={cls}
        data-card={card}
        aria-label={props.label ?? cardName(card)}
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
  const face = FACES[n % FACES.length];
  return (
    <svg class="avatar" width={size} height={size} viewBox="0 0 48 48" aria-hidden="true">
      <circle cx="24" cy="24" r="23" fill={props.bot ? '#4a5a6a' : `hsl(${hue} 55% 38%)`} stroke="rgba(255,255,255,.85)" stroke-width="2" />
      {props.bot ? (
        <BotFace />
      ) : (
        <text x="24" y="31" text-anchor="middle" font-size="22" fill="#fff">
          {face}
        </text>
      )}
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

export function MicIcon(props: { size?: number }) {
  const z = props.size ?? 20;
  return (
    <svg width={z} height={z} viewBox="0 0 24 24" aria-hidden="true" class="icon">
      <rect x="9" y="3" width="6" height="11" rx="3" fill="currentColor" />
      <path d="M6 11a6 6 0 0 0 12 0M12 17v4M8.5 21h7" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
    </svg>
  );
}

export function SpeakerIcon(props: { size?: number }) {
  const z = props.size ?? 18;
  return (
    <svg width={z} height={z} viewBox="0 0 24 24" aria-hidden="true" class="icon">
      <path d="M4 9h4l5-4v14l-5-4H4z" fill="currentColor" />
      <path d="M16 8.5a5 5 0 0 1 0 7M18.5 6a8.5 8.5 0 0 1 0 12" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" />
    </svg>
  );
}

function BotFace() {
  return (
    <g fill="#fff">
      <rect x="13" y="15" width="22" height="18" rx="5" />
      <rect x="22.5" y="9" width="3" height="6" />
      <circle cx="24" cy="8.5" r="2.5" />
      <circle cx="19" cy="23" r="3" fill="#234" />
      <circle cx="29" cy="23" r="3" fill="#234" />
      <rect x="18" y="28" width="12" height="2" rx="1" fill="#234" />
    </g>
  );
}
export { BotFace };
