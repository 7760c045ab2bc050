"""Turns hand-written trick lists into replay inputs, and hand-written expectations into the
`expect` of a case. The reference model (model.py) double-checks every hand-written value;
a disagreement stops the build so the case can be re-reasoned (never silently copied).

Trick notation (play order from the trick's leader, who is the previous winner / caller):
  "AS 2S 3S 4S >0"   explicit cards, then my hand-computed winner seat
  "?2S"              the seat asks to see the (hidden) trump, then plays 2S
  "!AS"              the (hidden) caller shows the trump, then plays AS
  "S>2"              auto trick: four spades, the winner gets the highest unused non-ace
                     spade, the others the lowest unused spades.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import model  # noqa: E402
import run_cases as run_match  # noqa: E402
from model import DECK, RANKS

ORDER = "23456789TJQK"  # auto tricks never use aces


class BuildError(Exception):
    pass


def team(s):
    return s % 2


class R:
    """One round: call/hide, tricks, optional explicit hands, extra raw moves, and my
    hand-computed expectations."""

    def __init__(self, tricks=(), call=None, hide=None, hands=None, after=(), fill=None,
                 dealer=None, caller=None, trump="<call>", result=None, pickups=None,
                 payouts=None, trump_shown="<none>", trump_set="<none>", extra=None,
                 reserve=""):
        self.reserve = set(reserve.split())
        self.tricks = list(tricks)
        self.call = call
        self.hide = hide
        self.hands = hands
        self.after = list(after)
        self.fill = fill or {}
        self.dealer = dealer
        self.caller = caller
        self.trump = trump
        self.result = result
        self.pickups = pickups
        self.payouts = payouts
        self.trump_shown = trump_shown
        self.trump_set = trump_set
        self.extra = extra or {}


def toks_plain(toks):
    return [t.lstrip("?!") for t in toks]


def parse_tricks(tricks):
    out = []
    for t in tricks:
        t = t.strip()
        if ">" in t and " " not in t:  # auto
            suit, w = t.split(">")
            out.append(("auto", suit, int(w)))
            continue
        w = None
        toks = t.split()
        if toks and toks[-1].startswith(">"):
            w = int(toks[-1][1:])
            toks = toks[:-1]
        out.append(("explicit", toks, w))
    return out


def build_round(rules, dealer, rd):
    """Returns (hands list of 4 strings, moves, winners) for one round."""
    caller = (dealer + 1) % 4
    lenient = model.Round(rules, dealer, [list(DECK)] * 4, lenient=True)
    moves = []
    if rd.call:
        moves.append({"seat": caller, "call": rd.call})
    if rd.hide:
        moves.append({"seat": caller, "hide": rd.hide})
    for m in moves:
        lenient.move(m)
    used = set()
    played = [[] for _ in range(4)]
    winners = []
    for kind, a, b in parse_tricks(rd.tricks):
        leader = lenient.to_move()
        if kind == "auto":
            suit, w = a, b
            free = [r + suit for r in ORDER
                    if r + suit not in used and r + suit not in rd.reserve]
            if len(free) < 4:
                raise BuildError("auto trick: suit %s exhausted" % suit)
            top, low = free[-1], free[:3]
            cards = []
            for i in range(4):
                seat = (leader + i) % 4
                cards.append(top if seat == w else low.pop(0))
            toks, want = cards, w
        else:
            toks, want = a, b
        for tok in toks:
            seat = lenient.to_move()
            if tok.startswith("?"):
                m = {"seat": seat, "ask": True}
                moves.append(m)
                lenient.move(m)
                tok = tok[1:]
            elif tok.startswith("!"):
                m = {"seat": seat, "show": True}
                moves.append(m)
                lenient.move(m)
                tok = tok[1:]
            if tok not in DECK or tok in used:
                raise BuildError("bad or reused card %s" % tok)
            used.add(tok)
            played[seat].append(tok)
            m = {"seat": seat, "play": tok}
            moves.append(m)
            lenient.move(m)
        if len(toks) == 4:
            got = lenient.tricks[-1]["winner"]
            if want is not None and got != want:
                raise BuildError("trick %d %s: I said winner %s, model says %s" %
                                 (len(lenient.tricks), toks, want, got))
            t = lenient.tricks[-1]
            if t["face_down"]:  # the full output's card of a face-down throw: README A12
                winners.append({"leader": t["leader"], "winner": got})
            else:
                winners.append({"leader": t["leader"], "cards": list(toks_plain(toks)),
                                "winner": got})
    if rd.hands is not None:
        hands = rd.hands
    else:
        # hidden: the face-down card must be among the caller's first five
        if rd.hide:
            if rd.hide in played[caller]:
                played[caller].remove(rd.hide)
            played[caller].insert(0, rd.hide)
            used.add(rd.hide)
        for s, cards in rd.fill.items():
            for c in cards.split():
                played[s].append(c)
                used.add(c)
        # a seat that did not follow a led suit must hold none of it
        revoked = [set() for _ in range(4)]
        for t in lenient.tricks:
            led = t["cards"][0][1]
            for seat, c in zip(t["seats"], t["cards"]):
                if c[1] != led:
                    revoked[seat].add(led)
        if lenient.cur:
            led = lenient.cur[0][1][1]
            for seat, c, _, _ in lenient.cur:
                if c[1] != led:
                    revoked[seat].add(led)
        rest = [c for c in DECK if c not in used]
        allowed = {c: [s for s in range(4) if c[1] not in revoked[s]] for c in rest}
        for c in sorted(rest, key=lambda c: (len(allowed[c]), DECK.index(c))):
            room = [s for s in allowed[c] if len(played[s]) < 13]
            if not room:
                raise BuildError("cannot place filler %s" % c)
            s = max(room, key=lambda s: (13 - len(played[s]), -s))
            played[s].append(c)
        hands = [" ".join(p) for p in played]
    return hands, moves + list(rd.after), winners


def build_case(name, why, rules, first_dealer, rounds, exit=0, error=None, game=None,
               args=(), expect_extra=None, raw_input=None, check_model=True, ok=None):
    """Builds one case dict. Hand-written expectations live in rounds[i] (R) and in
    error / game; the model must agree with every one of them."""
    if raw_input is not None:
        inp = raw_input
        built = []
    else:
        inp = {"rules": rules, "first_dealer": first_dealer, "rounds": []}
        built = []
        mrules = model.check_rules(rules)
        dealer = first_dealer
        for i, rd in enumerate(rounds):
            d = rd.dealer if rd.dealer is not None else dealer
            hands, moves, winners = build_round(mrules, d, rd)
            inp["rounds"].append({"hands": hands, "moves": moves})
            built.append(winners)
            if i + 1 < len(rounds) and rounds[i + 1].dealer is None:
                raise BuildError("%s: round %d needs a hand-written dealer" % (name, i + 1))
    expect = {}
    if ok is None:
        ok = error is None
    expect["ok"] = ok
    if rounds and raw_input is None:
        ers = []
        for rd, winners in zip(rounds, built):
            e = {}
            if rd.dealer is not None:
                e["dealer"] = rd.dealer
            if rd.caller is not None:
                e["caller"] = rd.caller
            if rd.trump != "<call>":
                e["trump"] = rd.trump
            elif rd.call:
                e["trump"] = rd.call
            e["tricks"] = winners
            if rd.pickups is not None:
                e["pickups"] = [{"trick": t, "seat": s, "team": team(s), "count": c}
                                for t, s, c in rd.pickups]
            if rd.payouts is not None:
                e["payouts"] = [{"trick": t, "team": tm, "points": p} for t, tm, p in rd.payouts]
            if rd.trump_shown != "<none>":
                e["trump_shown"] = (None if rd.trump_shown is None else
                                    {"trick": rd.trump_shown[0], "seat": rd.trump_shown[1]})
            if rd.trump_set != "<none>":
                e["trump_set"] = (None if rd.trump_set is None else
                                  {"trick": rd.trump_set[0], "seat": rd.trump_set[1],
                                   "suit": rd.trump_set[2]})
            if rd.result == "null":
                e["result"] = None
            elif rd.result is not None:
                w, kind, pts, cnt = rd.result
                e["result"] = {"winner": w, "kind": kind, "points": pts, "count": cnt}
            e.update(rd.extra)
            ers.append(e)
        expect["rounds"] = ers
    if game is not None:
        score, over, winner, nxt = game
        expect["game"] = {"score": score, "over": over, "winner": winner, "next_caller": nxt}
    if error is not None:
        r, m, code = error[:3]
        expect["error"] = {"round": r, "move": m, "code": code}
        if len(error) > 3:
            expect["error"]["message"] = {"$contains": error[3]}
    if expect_extra:
        expect.update(expect_extra)
    if check_model and not args:
        out, code = model.replay(inp)
        problems = []
        if code != exit:
            problems.append("exit %d vs model %d" % (exit, code))
        diffs = []
        run_match.match(strip_msg(expect), out, "$", diffs)
        problems += ["%s: %s" % d for d in diffs]
        if problems:
            raise BuildError("%s: hand-written expectation disagrees with model:\n  %s\n"
                             "model says: %s" % (name, "\n  ".join(problems),
                                                  json.dumps(short(out))))
    return {"name": name, "why": why, "args": list(args), "input": inp, "expect_exit": exit,
            "expect": expect}


def strip_msg(e):
    e = json.loads(json.dumps(e))
    if "error" in e and "message" in e["error"]:
        del e["error"]["message"]
    return e


def short(out):
    o = json.loads(json.dumps(out))
    for r in o.get("rounds", []):
        r["tricks"] = "".join(str(t["winner"]) for t in r["tricks"])
    return o
