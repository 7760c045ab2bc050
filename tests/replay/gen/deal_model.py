#!/usr/bin/env python3
"""An independent model of the fair-deal derivation (docs/rules-engine.md "Fair deals",
RULES.md section 3), written from the documented steps only: ChaCha20 (RFC 8439 block
function, key = seed, nonce "LibsodiumDRG", counter from 0), Uniform(n) by rejection, the
5-in-7 draw, Fisher-Yates, the deal in packets, the one-sided test (10+ of the 16 honours,
all four aces, 7+ of a suit, 10+ of 13 trumps) and the reshuffles of positions 20..51.

  python3 tests/replay/gen/deal_model.py --seed 0 --trump S [--caller 0] [-v]
      prints the deal as `courtpiece-rules deal` does (-v: every reshuffle and why)
  python3 tests/replay/gen/deal_model.py --check BIN [--count N]
      compares `BIN deal` with the model on N seeds, every trump and caller

Python 3 standard library only. A development aid for re-deriving pinned deals by hand,
not a test.
"""
import argparse
import json
import struct
import subprocess
import sys

SUITS = "CDHS"
RANKS = "23456789TJQKA"


def card_name(c):
    return RANKS[c % 13] + SUITS[c // 13]


def rotl(v, n):
    return ((v << n) & 0xFFFFFFFF) | (v >> (32 - n))


def chacha20_block(key, counter, nonce):
    const = [0x61707865, 0x3320646E, 0x79622D32, 0x6B206574]
    k = list(struct.unpack("<8I", key))
    n = list(struct.unpack("<3I", nonce))
    state = const + k + [counter] + n
    x = list(state)

    def qr(a, b, c, d):
        x[a] = (x[a] + x[b]) & 0xFFFFFFFF
        x[d] = rotl(x[d] ^ x[a], 16)
        x[c] = (x[c] + x[d]) & 0xFFFFFFFF
        x[b] = rotl(x[b] ^ x[c], 12)
        x[a] = (x[a] + x[b]) & 0xFFFFFFFF
        x[d] = rotl(x[d] ^ x[a], 8)
        x[c] = (x[c] + x[d]) & 0xFFFFFFFF
        x[b] = rotl(x[b] ^ x[c], 7)

    for _ in range(10):
        qr(0, 4, 8, 12), qr(1, 5, 9, 13), qr(2, 6, 10, 14), qr(3, 7, 11, 15)
        qr(0, 5, 10, 15), qr(1, 6, 11, 12), qr(2, 7, 8, 13), qr(3, 4, 9, 14)
    return struct.pack("<16I", *[(a + b) & 0xFFFFFFFF for a, b in zip(x, state)])


class Stream:
    def __init__(self, seed):
        self.seed = seed
        self.buf = b""
        self.counter = 0
        self.pos = 0
        self.consumed = 0

    def byte(self):
        if self.pos == len(self.buf):
            self.buf = chacha20_block(self.seed, self.counter, b"LibsodiumDRG")
            self.counter += 1
            self.pos = 0
        b = self.buf[self.pos]
        self.pos += 1
        self.consumed += 1
        return b

    def uniform(self, n):
        limit = 256 - 256 % n
        while True:
            b = self.byte()
            if b < limit:
                return b % n


def hands_of(deck, caller):
    h = [None] * 4
    for k in range(4):
        h[(caller + k) % 4] = (deck[5 * k:5 * k + 5] + deck[20 + 4 * k:24 + 4 * k] +
                               deck[36 + 4 * k:40 + 4 * k])
    return h


def one_sided_reasons(hands, trump):
    """Every section 3 condition that holds (empty: a fair deal)."""
    why = []
    for team in (0, 1):
        cards = hands[team] + hands[team + 2]
        honours = sum(1 for c in cards if c % 13 >= 9)
        if honours >= 10:
            why.append("team %d holds %d of the 16 honours" % (team, honours))
        if all(s * 13 + 12 in cards for s in range(4)):
            why.append("team %d holds all four aces" % team)
        if trump >= 0:
            t = sum(1 for c in cards if c // 13 == trump)
            if t >= 10:
                why.append("team %d holds %d trumps" % (team, t))
    for seat, h in enumerate(hands):
        for s in range(4):
            n = sum(1 for c in h if c // 13 == s)
            if n >= 7:
                why.append("seat %d holds %d %s" % (seat, n, "CDHS"[s]))
    return why


def first_packets_hopeless(deck, caller, trump):
    for team in (0, 1):
        cards = [c for k in range(4) if (caller + k) % 2 == team for c in deck[5 * k:5 * k + 5]]
        if (sum(1 for c in cards if c % 13 >= 9) >= 10 or
                all(s * 13 + 12 in cards for s in range(4)) or
                (trump >= 0 and sum(1 for c in cards if c // 13 == trump) >= 10)):
            return True
    return False


def deal(seed, caller, trump, fairness=True, log=None):
    st = Stream(seed)
    d = st.uniform(7)
    applies = fairness and d < 5
    deck = list(range(52))
    for i in range(51, 0, -1):
        j = st.uniform(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    hands = hands_of(deck, caller)
    reshuffles = 0
    if applies and not first_packets_hopeless(deck, caller, trump):
        why = one_sided_reasons(hands, trump)
        while why and reshuffles < 1000:
            if log is not None:
                log.append("deal %d one-sided: %s" % (reshuffles, "; ".join(why)))
            for i in range(31, 0, -1):
                j = st.uniform(i + 1)
                deck[20 + i], deck[20 + j] = deck[20 + j], deck[20 + i]
            reshuffles += 1
            hands = hands_of(deck, caller)
            why = one_sided_reasons(hands, trump)
        if log is not None:
            log.append("deal %d fair" % reshuffles if not why else "cap reached")
    return {"check_applies": applies, "reshuffles": reshuffles,
            "first_packets": [" ".join(card_name(c) for c in h[:5]) for h in hands],
            "hands": [" ".join(card_name(c) for c in h) for h in hands]}


def seed_bytes(hexs):
    return bytes.fromhex(hexs.rjust(64, "0"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", default="0")
    ap.add_argument("--trump", default=None)
    ap.add_argument("--caller", type=int, default=0)
    ap.add_argument("-v", action="store_true")
    ap.add_argument("--check", metavar="BIN")
    ap.add_argument("--count", type=int, default=50)
    a = ap.parse_args()
    if a.check:
        bad = 0
        for n in range(a.count):
            seed = "%064x" % (n * 0x9E3779B97F4A7C15 % (1 << 256))
            caller, trump = n % 4, "CDHS"[(n // 4) % 4]
            got = json.loads(subprocess.run(
                [a.check, "deal", "--seed", seed, "--trump", trump, "--caller", str(caller)],
                capture_output=True, text=True, check=True).stdout)
            want = deal(seed_bytes(seed), caller, "CDHS".index(trump))
            for k in ("check_applies", "reshuffles", "first_packets", "hands"):
                if got[k] != want[k]:
                    bad += 1
                    print("seed %s caller %d trump %s: %s engine %s model %s" %
                          (seed, caller, trump, k, got[k], want[k]))
        print("%d seeds, %d disagreements" % (a.count, bad))
        sys.exit(1 if bad else 0)
    log = []
    trump = "CDHS".index(a.trump) if a.trump else -1
    out = deal(seed_bytes(a.seed), a.caller, trump, log=log)
    if a.v:
        print("\n".join(log))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
