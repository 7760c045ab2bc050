// Card names as the client API writes them: rank then suit, "AS", "TD", "2C"; "??" hidden.

export const SUITS = ['C', 'D', 'H', 'S'] as const;
export type Suit = (typeof SUITS)[number];
export const RANKS = ['2', '3', '4', '5', '6', '7', '8', '9', 'T', 'J', 'Q', 'K', 'A'];

export const SUIT_SYMBOL: Record<string, string> = { C: '♣', D: '♦', H: '♥', S: '♠' };
export const SUIT_NAME: Record<string, string> = {
  C: 'clubs',
  D: 'diamonds',
  H: 'hearts',
  S: 'spades',
};
const RANK_NAME: Record<string, string> = {
  T: '10',
  J: 'jack',
  Q: 'queen',
  K: 'king',
  A: 'ace',
};

export function suitOf(card: string): string {
  return card.length === 2 ? card[1] : '';
}
export function rankOf(card: string): string {
  return card.length === 2 ? card[0] : '';
}
export function isHidden(card: string): boolean {
  return card === '??' || card.length !== 2;
}
export function isRed(card: string): boolean {
  const s = suitOf(card);
  return s === 'H' || s === 'D';
}
/** "10", "J"... as printed on a card face. */
export function rankLabel(card: string): string {
  const r = rankOf(card);
  return r === 'T' ? '10' : r;
}
/** "queen of hearts", for screen readers. */
export function cardName(card: string): string {
  if (isHidden(card)) return 'a face-down card';
  const r = rankOf(card);
  return `${RANK_NAME[r] ?? r} of ${SUIT_NAME[suitOf(card)] ?? '?'}`;
}
/** Sort as the server does: clubs, diamonds, hearts, spades, each by rank upwards. */
export function sortHand(cards: string[]): string[] {
  const key = (c: string) => SUITS.indexOf(suitOf(c) as Suit) * 13 + RANKS.indexOf(rankOf(c));
  return [...cards].sort((a, b) => key(a) - key(b));
}
