#!/usr/bin/env python3
"""Development aid (not a test): plays rounds with `courtpiece-rules selfplay --jsonl`, replays
each through the CLI and through model.py, and prints every round where they disagree.
A disagreement is only a lead: it is re-reasoned by hand and, if the engine is wrong, turned
into a hand-built case in build_cases.py.

  python3 tests/replay/gen/diff_selfplay.py --bin build/bin/courtpiece-rules --rounds 300
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402

RULESETS = [
    {"game": "classic"}, {"game": "classic", "court_bonus": "kot", "kot_points": 4},
    {"game": "classic", "court_bonus": "none"},
    {"game": "piles"}, {"game": "piles", "pile": "5-3-3", "ace_cannot_win_pile": True},
    {"game": "piles", "last_card": "AS", "six_point": True},
    {"game": "hidden"}, {"game": "hidden", "ace_cannot_win_pile": True, "pile": "5-3-3"},
    {"game": "kaat"}, {"game": "kaat", "last_card": "2C", "six_point": True},
    {"game": "stack"}, {"game": "stack", "target": 9}, {"game": "stack", "target": 5},
]
KEYS = ["dealer", "caller", "trump", "pickups", "payouts", "trump_shown", "trump_set", "result"]


def compare(eng, mod):
    diffs = []
    if eng.get("ok") != mod.get("ok"):
        diffs.append("ok %s vs model %s (%s / %s)" % (eng.get("ok"), mod.get("ok"),
                                                      eng.get("error"), mod.get("error")))
        return diffs
    for i, (er, mr) in enumerate(zip(eng.get("rounds", []), mod.get("rounds", []))):
        ew = [t["winner"] for t in er["tricks"]]
        mw = [t["winner"] for t in mr["tricks"]]
        if ew != mw:
            diffs.append("round %d winners %s vs model %s" % (i, ew, mw))
        for k in KEYS:
            if k in mr and er.get(k, "<absent>") != mr[k]:
                diffs.append("round %d %s: %s vs model %s" % (i, k, json.dumps(er.get(k)),
                                                              json.dumps(mr[k])))
    if eng.get("game") != mod.get("game"):
        diffs.append("game %s vs model %s" % (eng.get("game"), mod.get("game")))
    return diffs


def random_game(rules, rng):
    """A random legal game by the model's own move checks, with asks and shows."""
    import copy
    deck = list(model.DECK)
    rng.shuffle(deck)
    hands = [" ".join(deck[i * 13:(i + 1) * 13]) for i in range(4)]
    first_dealer = rng.randrange(4)
    r = model.check_rules(rules)
    R = model.Round(r, first_dealer, [h.split() for h in hands])
    moves = []
    if r["game"] in ("classic", "piles", "stack"):
        moves.append({"seat": R.caller, "call": rng.choice("CDHS")})
    elif r["game"] == "hidden":
        moves.append({"seat": R.caller, "hide": rng.choice(R.first_five[R.caller])})
    for m in moves:
        R.move(m)
    while not R.over:
        seat = R.to_move()
        cands = [{"seat": seat, "play": c} for c in sorted(R.hands[seat])]
        if r["game"] == "hidden":
            cands += [{"seat": seat, "ask": True}, {"seat": seat, "show": True}] * 3
        rng.shuffle(cands)
        for m in cands:
            t = copy.deepcopy(R)
            try:
                t.move(m)
            except model.ReplayError:
                continue
            R = t
            moves.append(m)
            break
        else:
            raise RuntimeError("no legal move")
    return {"rules": rules, "first_dealer": first_dealer,
            "rounds": [{"hands": hands, "moves": moves}]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--seed", default="5eed" * 16)
    ap.add_argument("--game", default="", help="only rule sets of this game type")
    args = ap.parse_args()
    global RULESETS
    RULESETS = [r for r in RULESETS if args.game in ("", r["game"])]
    bad = 0
    total = 0
    for rules in RULESETS:
        for policy in ("random",):
            with tempfile.NamedTemporaryFile(suffix=".jsonl") as tf:
                subprocess.run([args.bin, "selfplay", "--rules", json.dumps(rules), "--rounds",
                                str(args.rounds), "--seed", args.seed, "--policy", policy,
                                "--jsonl", tf.name], check=True, capture_output=True)
                lines = open(tf.name).read().splitlines()
            for ln in lines:
                inp = json.loads(ln)
                total += 1
                p = subprocess.run([args.bin, "replay"], input=ln.encode(), capture_output=True)
                eng = json.loads(p.stdout)
                mod, _ = model.replay(inp)
                d = compare(eng, mod)
                if d:
                    bad += 1
                    if bad <= 15:
                        print("DIFF %s %s:\n  %s\n  input: %s" % (json.dumps(rules), policy,
                                                                "\n  ".join(d), ln[:3000]))
    import random
    rng = random.Random(args.seed)
    for i in range(args.rounds):
        rules = RULESETS[i % len(RULESETS)]
        inp = random_game(rules, rng)
        ln = json.dumps(inp)
        total += 1
        p = subprocess.run([args.bin, "replay"], input=ln.encode(), capture_output=True)
        eng = json.loads(p.stdout)
        mod, _ = model.replay(inp)
        d = compare(eng, mod)
        if d:
            bad += 1
            if bad <= 15:
                print("DIFF (model game) %s:\n  %s\n  input: %s" % (
                    json.dumps(rules), "\n  ".join(d), ln[:4000]))
    print("%d rounds, %d disagreements" % (total, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
