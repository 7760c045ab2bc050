#!/usr/bin/env python3
"""Writes tests/replay/cases/contract_*.json: an adversarial check of the JSON contract of
`courtpiece-rules replay` (and `replay --view SEAT`) against REPLAY.md, with RULES.md §1-3.

Every expected value is written by hand from the spec text (quoted or cited in each case's
"why"); none is copied from the tool's output. Where the spec leaves a choice open, the case
accepts every plausible answer with `$in` and says so ("SPEC-SILENT"); when even the exit
status would differ, the input is left out and listed in README.md's ambiguities instead.
Whole-game cases go through builder.py / model.py like build_cases.py, so a slip in my hand
computation stops the build instead of being written.

Areas: 1 input shape -> bad_input; 2 error precedence and indexes; 3 missing_moves,
game_over, unfinished last rounds; 4 output shape per game type; 5 --view; 6 seeded rounds.

Run: python3 tests/replay/gen/contract_cases.py   (rewrites cases/contract_*.json only)
"""
import glob
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
from builder import R, BuildError, build_case, build_round, strip_msg  # noqa: E402
import run_cases as run_match  # noqa: E402  (builder put tests/replay on sys.path)

PREFIX = "contract_"
CASES = []
# Cases where I still believe the tool is wrong (or a spec-silent choice differs) after
# re-reading the spec: kept out of cases/ so the suite stays green, listed in
# ../CONTRACT_FINDINGS.md; `contract_cases.py --findings DIR` writes them to DIR to re-check.
FINDINGS = []

CL = {"game": "classic"}
PI = {"game": "piles"}
HI = {"game": "hidden"}
KA = {"game": "kaat"}
ST = {"game": "stack"}
OTHER_FIELDS = ("pickups", "payouts", "trump_shown", "trump_set")
ONLY_IN = {"classic": (), "piles": ("pickups",), "hidden": ("pickups", "trump_shown"),
           "kaat": ("pickups", "trump_set"), "stack": ("payouts",)}


def absent_fields(game):
    """REPLAY: "trump_shown only in hidden, trump_set only in kaat, pickups only in the pile
    games, payouts only in stack": the keys a round of `game` must not have."""
    return {k: {"$absent": True} for k in OTHER_FIELDS if k not in ONLY_IN[game]}


def check_deck(hands):
    cards = " ".join(hands).split()
    assert sorted(cards) == sorted(model.DECK) and all(len(h.split()) == 13 for h in hands), hands


# seat 0 all spades, 1 hearts, 2 diamonds, 3 clubs (first five: A K Q J T of the suit)
SUITED = [" ".join(r + s for r in "AKQJT98765432") for s in "SHDC"]
# A mixed deal where following suit matters. First fives: 0 AS KS QS 2H 3H, 1 JS TS 9S 8H 9H,
# 2 8S 7S 6S 5S KH, 3 4S 3S 2S 5C 6C. Seat 3 holds no hearts and no diamonds; seats 0 and 1
# hold no clubs.
DEAL_B = ["AS KS QS 2H 3H 4H 5H 6H 7H 2D 3D 4D 5D",
          "JS TS 9S 8H 9H TH JH QH 6D 7D 8D 9D TD",
          "8S 7S 6S 5S KH AH JD QD KD AD 2C 3C 4C",
          "4S 3S 2S 5C 6C 7C 8C 9C TC JC QC KC AC"]
CL7 = ["S>0", "S>2", "S>0", "H>0", "H>2", "D>0", "D>2"]  # 7-0 for team 0 -> Court 2
for _h in (SUITED, DEAL_B):
    check_deck(_h)


def P(s, c):
    return {"seat": s, "play": c}


def J(x):
    return json.loads(json.dumps(x))


def add(name, why, inp, exit, expect, args=(), forbid=None, finding=False):
    c = {"name": PREFIX + name, "why": why, "args": list(args), "input": inp,
         "expect_exit": exit, "expect": expect}
    if forbid is not None:
        c["forbid_strings"] = sorted(set(forbid))
    (FINDINGS if finding else CASES).append(c)
    return c


def err(code, rnd=None, mv=None):
    """An expected error object; code may be a tuple of codes the spec leaves open."""
    return {"round": rnd, "move": mv,
            "code": code if isinstance(code, str) else {"$in": list(code)}}


def bad(name, why, inp, code="bad_input", args=(), finding=False):
    """REPLAY: bad_input / bad_rules / bad_deal -> exit 2, round and move null."""
    return add(name, why, inp, 2, {"ok": False, "error": err(code)}, args, finding=finding)


def built(name, why, rules, first_dealer, rounds, **kw):
    c = build_case(PREFIX + name, why, rules, first_dealer, list(rounds), **kw)
    CASES.append(c)
    return c


def model_check(c):
    """Double-checks a hand-written case (hands only, no --view) against model.py."""
    out, code = model.replay(c["input"])
    diffs = []
    run_match.match(strip_msg(c["expect"]), out, "$", diffs)
    if code != c["expect_exit"] or diffs:
        raise BuildError("%s: hand-written expectation disagrees with model (exit %d):\n  %s"
                         % (c["name"], code, "\n  ".join("%s: %s" % d for d in diffs)))
    return c


def remaining(inp, seat, rnd=-1):
    """Cards of `seat` not yet played in a round (a plain function of the input)."""
    r = inp["rounds"][rnd]
    played = {m["play"] for m in r["moves"] if "play" in m}
    return [c for c in r["hands"][seat].split() if c not in played]


def others_unplayed(inp, seat):
    return [c for s in range(4) if s != seat for c in remaining(inp, s)]


def game_in(rules, first_dealer, hands, moves, more=()):
    rounds = [{"hands": list(hands), "moves": list(moves)}] + [J(r) for r in more]
    return {"rules": dict(rules), "first_dealer": first_dealer, "rounds": rounds}


GOOD = game_in(CL, 3, SUITED, [{"seat": 0, "call": "S"}])


def variant(**kw):
    d = J(GOOD)
    d.update(kw)
    return d


def with_round(**kw):
    r = J(GOOD["rounds"][0])
    r.update(kw)
    for k in [k for k, v in kw.items() if v is DROP]:
        del r[k]
    return variant(rounds=[r])


def with_move(m):
    """GOOD's round with one move replacing the call."""
    return with_round(moves=[m])


DROP = object()

# =============================================================== 0. the baseline is valid
model_check(add(
    "baseline_ok",
    "the input every bad_input variant below is derived from is itself valid: REPLAY 'A valid "
    "input whose last round is unfinished' -> ok true, result null, next_caller null; §1.2 "
    "caller = first_dealer 3 + 1 = 0; trump named by the call",
    GOOD, 0,
    {"ok": True, "rounds": [dict({"dealer": 3, "caller": 0, "trump": "S", "tricks": [],
                                  "result": None}, **absent_fields("classic"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}}))

# =============================================================== 1. input shape -> bad_input
NF = "REPLAY bad_input: 'not the format above'"
bad("not_json_text", NF + ": plain text on stdin", "replay this game please")
bad("empty_stdin", NF + ": empty stdin is no JSON document", "")
bad("json_array", NF + ": a JSON array, not an object", [])
bad("json_string", NF + ": a JSON string, not an object", "\"classic\"")
bad("json_number", NF + ": a JSON number, not an object", "42")
bad("json_null", NF + ": JSON null, not an object", "null")
bad("trailing_garbage", NF + ": a valid object followed by junk is not one JSON text",
    json.dumps(GOOD) + " x")
bad("two_documents", NF + ": two objects on stdin are not one JSON text (REPLAY: 'JSON on "
    "stdin')", json.dumps(GOOD) + "\n" + json.dumps(GOOD))
d = J(GOOD)
del d["rules"]
bad("missing_rules", "SPEC-SILENT between bad_input (not the format) and bad_rules (no game "
    "type): 'rules' missing; either way exit 2, indexes null", d, ("bad_input", "bad_rules"))
bad("rules_not_object", "SPEC-SILENT bad_input or bad_rules: rules is the string 'classic'",
    variant(rules="classic"), ("bad_input", "bad_rules"))
bad("rules_without_game", "SPEC-SILENT bad_rules or bad_input: rules {} names no game type "
    "(§2 'game is one of ...'; it has no default)", variant(rules={}),
    ("bad_rules", "bad_input"))
d = J(GOOD)
del d["first_dealer"]
bad("missing_first_dealer", NF + ": 'first_dealer' missing", d)
bad("first_dealer_string", NF + ": first_dealer '1' is a string, not a seat",
    variant(first_dealer="1"))
bad("first_dealer_negative", NF + ": first_dealer -1 is not a seat 0..3 (RULES notation)",
    variant(first_dealer=-1))
bad("first_dealer_fraction", NF + ": first_dealer 1.5 is not a seat", variant(first_dealer=1.5))
bad("first_dealer_null", NF + ": first_dealer null", variant(first_dealer=None))
bad("first_dealer_bool", NF + ": first_dealer true is not a seat", variant(first_dealer=True))
bad("first_dealer_2_pow_32", NF + ": first_dealer 4294967296 is not a seat (it would wrap to "
    "0 in 32 bits)", variant(first_dealer=2 ** 32))
bad("rounds_object", NF + ": rounds is an object, not a list", variant(rounds=GOOD["rounds"][0]))
bad("rounds_string", NF + ": rounds is a string", variant(rounds="one"))
bad("rounds_null", NF + ": rounds null", variant(rounds=None))
bad("round_string", NF + ": a round that is not an object (a string)", variant(rounds=["x"]))
bad("round_list", NF + ": a round that is a list", variant(rounds=[[SUITED, []]]))
bad("round_without_hands_or_seed", NF + ": a round has 'hands' or 'seed'; this one neither",
    variant(rounds=[{"moves": []}]))
bad("hands_string", NF + ": hands is one string, not a list of 4",
    with_round(hands=" ".join(SUITED)))
bad("hands_three", "SPEC-SILENT bad_input (not 4 hands) or bad_deal (not a full deck): "
    "three hands", with_round(hands=SUITED[:3]), ("bad_input", "bad_deal"))
bad("hands_lists_of_cards", NF + ": hands[seat] is a string of cards; lists of card strings "
    "are not the format (finding F1, fixed in the tool)",
    with_round(hands=[h.split() for h in SUITED]))
bad("hands_number_entry", NF + ": a hand that is a number", with_round(hands=SUITED[:3] + [7]))
h = SUITED[:]
h[0] = h[0].replace(" 2S", "")
h[1] = h[1] + " 2S"
bad("hand_12_and_14", "REPLAY 'hands[seat]: 13 distinct cards': a full deck split 12/14; "
    "SPEC-SILENT whether that is bad_input or bad_deal (exit 2 either way)",
    with_round(hands=h), ("bad_input", "bad_deal"))
h = SUITED[:]
h[0] = h[0] + " 2H"
bad("hand_14_duplicate", "REPLAY: 14 cards in a hand, one a duplicate (53 cards): bad_deal "
    "('duplicates') or bad_input (not 13 cards); exit 2 either way",
    with_round(hands=h), ("bad_input", "bad_deal"))
bad("moves_string", NF + ": moves is a string, not a list", with_round(moves="AS"))
bad("moves_object", NF + ": moves is an object, not a list",
    with_round(moves={"seat": 0, "call": "S"}))
bad("move_string", NF + ": a move that is not an object", with_round(moves=["S"]))
bad("move_null", NF + ": a move that is null", with_round(moves=[None]))
bad("move_without_seat", NF + ": every move is {\"seat\": s, ...}; this one has no seat",
    with_move({"call": "S"}))
bad("move_seat_4", NF + ": seats are 0..3 (RULES notation); seat 4 is not a seat",
    with_move({"seat": 4, "call": "S"}))
bad("move_seat_negative", NF + ": seat -1 is not a seat", with_move({"seat": -1, "call": "S"}))
bad("move_seat_string", NF + ": seat '0' is a string, not a seat number",
    with_move({"seat": "0", "call": "S"}))
bad("move_seat_fraction", NF + ": seat 0.5 is not a seat", with_move({"seat": 0.5, "call": "S"}))
bad("move_seat_null", NF + ": seat null", with_move({"seat": None, "call": "S"}))
bad("move_seat_2_pow_32", NF + ": seat 4294967296 is not a seat (0 in 32 bits)",
    with_move({"seat": 2 ** 32, "call": "S"}))
bad("move_two_actions", NF + ": each move is exactly one of call/hide/play/ask/show; "
    "call and play together", with_move({"seat": 0, "call": "S", "play": "AS"}))
bad("move_no_action", NF + ": a move with a seat and no action", with_move({"seat": 0}))
bad("move_unknown_action", NF + ": 'discard' is no move kind", with_move({"seat": 0,
                                                                          "discard": "AS"}))
HIDE_KS = [{"seat": 0, "hide": "KS"}, P(0, "AS")]  # hidden, SUITED: seat 1 is void in spades
bad("move_ask_false", NF + ": the ask move is {\"seat\": s, \"ask\": true}; ask false (by a "
    "seat that could ask) is not the format", game_in(HI, 3, SUITED, HIDE_KS +
                                                      [{"seat": 1, "ask": False}]))
bad("move_ask_string", NF + ": ask 'yes' is not true",
    game_in(HI, 3, SUITED, HIDE_KS + [{"seat": 1, "ask": "yes"}]))
bad("move_show_false", NF + ": the show move is {\"seat\": s, \"show\": true}; show false",
    game_in(HI, 3, SUITED, [{"seat": 0, "hide": "KS"}, {"seat": 0, "show": False}]))
bad("move_show_number", NF + ": show 1 is not true",
    game_in(HI, 3, SUITED, [{"seat": 0, "hide": "KS"}, {"seat": 0, "show": 1}]))
BC = "REPLAY bad_input: 'bad card text' (RULES notation: rank 2-9 T J Q K A, suit C D H S)"
bad("card_ZZ_in_hand", BC + ": 'ZZ' in a hand",
    with_round(hands=[SUITED[0].replace("5S", "ZZ")] + SUITED[1:]))
bad("card_10S_in_hand", BC + ": '10S' for TS in a hand",
    with_round(hands=[SUITED[0].replace("TS", "10S")] + SUITED[1:]))
bad("card_comma_separated_hand", BC + ": cards separated by commas are not card texts",
    with_round(hands=[SUITED[0].replace(" ", ",")] + SUITED[1:]))
for nm, txt in (("lowercase", "as"), ("leading_space", " AS"), ("trailing_space", "AS "),
                ("one_char", "A"), ("three_chars", "ASS"), ("rank_1", "1S"), ("suit_X", "AX")):
    bad("card_%s_in_play" % nm, BC + ": play %r" % txt,
        with_round(moves=[{"seat": 0, "call": "S"}, P(0, txt)]))
bad("card_number_in_play", NF + ": a play that is the number 14, not a card text",
    with_round(moves=[{"seat": 0, "call": "S"}, P(0, 14)]))
bad("card_null_in_play", NF + ": a play of null",
    with_round(moves=[{"seat": 0, "call": "S"}, P(0, None)]))
bad("card_lowercase_in_hide", BC + ": hide '2h' (the hide names a card)",
    game_in(HI, 3, DEAL_B, [{"seat": 0, "hide": "2h"}]))
bad("card_ZZ_in_hide", BC + ": hide 'ZZ'", game_in(HI, 3, DEAL_B, [{"seat": 0, "hide": "ZZ"}]))
model_check(add(
    "call_lowercase_suit",
    "REPLAY bad_call lists 'not a suit'; 's' is not one of the suits C D H S (RULES notation) "
    "-> bad_call at round 0 move 0, exit 1 (an illegal move, not bad card text: a call names "
    "a suit, not a card)",
    game_in(CL, 3, SUITED, [{"seat": 0, "call": "s"}]), 1,
    {"ok": False, "error": err("bad_call", 0, 0),
     "game": {"score": [0, 0], "next_caller": None}}))
model_check(add(
    "call_word_spades",
    "REPLAY bad_call 'not a suit': 'SPADES' is not a suit letter -> bad_call (0, 0), exit 1",
    game_in(PI, 3, SUITED, [{"seat": 0, "call": "SPADES"}]), 1,
    {"ok": False, "error": err("bad_call", 0, 0)}))
SEED = "0123456789abcdef" * 4
bad("hands_and_seed", NF + ": 'Instead of hands, a round may give seed': both at once",
    with_round(seed=SEED))
for nm, s in (("63_digits", SEED[:63]), ("65_digits", SEED + "0"), ("non_hex", "g" + SEED[1:]),
              ("0x_prefix", "0x" + SEED), ("number", 12345), ("null", None),
              ("spaces", " ".join(SEED[i:i + 16] for i in range(0, 64, 16)))):
    bad("seed_" + nm, "REPLAY: seed is '<64 hex digits>'; %r is not" % (s,),
        variant(rounds=[{"seed": s, "moves": []}]))

# =============================================================== 2. precedence and indexes
DUP = SUITED[:3] + [SUITED[3].replace("2C", "AS")]
bad("prec_bad_rules_and_bad_deal", "SPEC-SILENT precedence: bad rules (classic target 0) and "
    "a duplicate card; REPLAY gives both null indexes and exit 2 but no order",
    game_in({"game": "classic", "target": 0}, 3, DUP, []), ("bad_rules", "bad_deal"))
bad("prec_bad_rules_and_bad_card_in_move", "SPEC-SILENT precedence: bad rules (pile 4-2-2) and "
    "a bad card text in a move; either code, exit 2",
    game_in({"game": "piles", "pile": "4-2-2"}, 3, SUITED, [{"seat": 0, "call": "S"},
                                                             P(0, "1S")]),
    ("bad_rules", "bad_input"))
bad("prec_bad_deal_and_bad_card_text", "SPEC-SILENT precedence: a duplicate card in round 0 "
    "and bad card text in round 1; either code, exit 2",
    {"rules": CL, "first_dealer": 3,
     "rounds": [{"hands": DUP, "moves": []},
                {"hands": [SUITED[0].replace("AS", "A♠")] + SUITED[1:], "moves": []}]},
    ("bad_input", "bad_deal"))
MF0 = [{"seat": 0, "call": "H"}, P(0, "AS"), P(1, "9H")]  # DEAL_B: seat 1 revokes (holds JS)
model_check(add(
    "prec_must_follow_alone",
    "the round-0 illegal move used by the precedence cases below is itself must_follow_suit "
    "at (0, 2): seat 1 holds JS TS 9S and plays 9H on AS led (§1.4)",
    game_in(CL, 3, DEAL_B, MF0), 1,
    {"ok": False, "error": err("must_follow_suit", 0, 2), "rounds": {"$len": 1}}))
model_check(bad(
    "prec_bad_deal_later_round_beats_illegal_move",
    "REPLAY gives bad_deal null indexes and exit 2: a whole-input check, so a duplicate card in "
    "round 1 is reported although round 0 has an illegal move (must_follow_suit) earlier",
    game_in(CL, 3, DEAL_B, MF0, [{"hands": DUP, "moves": []}]), "bad_deal"))
bad("prec_bad_card_later_round_beats_illegal_move",
    "REPLAY bad_input ('bad card text'), null indexes, exit 2: a whole-input format check, so "
    "'10S' in a round-1 move wins over round 0's earlier must_follow_suit",
    game_in(CL, 3, DEAL_B, MF0, [{"hands": SUITED, "moves": [{"seat": 0, "call": "S"},
                                                              P(0, "10S")]}]))
bad("prec_bad_seat_later_round_beats_illegal_move",
    "REPLAY bad_input (not the format): a seat 4 move in round 1 wins over round 0's earlier "
    "must_follow_suit; exit 2, null indexes",
    game_in(CL, 3, DEAL_B, MF0, [{"hands": SUITED, "moves": [{"seat": 4, "call": "S"}]}]))
bad("prec_bad_seed_later_round_beats_illegal_move",
    "REPLAY bad_input: a round-1 seed that is not 64 hex digits wins over round 0's earlier "
    "must_follow_suit; exit 2, null indexes",
    game_in(CL, 3, DEAL_B, MF0, [{"seed": "abc", "moves": []}]))
d = J(GOOD)
d["rules"]["target"] = 1
d["rounds"] = [{"hands": [], "moves": []}]
hands, moves, _ = build_round(model.check_rules(CL), 3, R(CL7, call="S"))
d["rounds"][0] = {"hands": hands, "moves": moves}
d["rounds"].append({"hands": SUITED, "moves": [{"seat": 0, "call": "S"}, P(0, "AZ")]})
bad("prec_bad_card_in_game_over_round",
    "REPLAY bad_input (bad card text 'AZ') in a round given after the game ended (target 1 "
    "reached by round 0's Court): the format check covers the whole input -> bad_input, exit "
    "2, not game_over", d)
model_check(add(
    "prec_first_illegal_move_wins",
    "REPLAY 'On the first illegal move': seat 1 plays out of turn at move 1 (not_your_turn), "
    "move 2 (seat 2 playing AH, a card it does not hold) is never reached",
    game_in(CL, 3, DEAL_B, [{"seat": 0, "call": "H"}, P(1, "JS"), P(2, "2C"), P(2, "AC")]), 1,
    {"ok": False, "error": err("not_your_turn", 0, 1),
     "rounds": [{"dealer": 3, "caller": 0, "trump": "H", "tricks": [], "result": None}],
     "game": {"score": [0, 0], "next_caller": None}}))
HID_ASK = [{"seat": 0, "hide": "QS"}, P(0, "2H"), P(1, "8H"), P(2, "KH"),
           {"seat": 3, "ask": True}, P(3, "5C")]
model_check(add(
    "index_counts_hide_and_ask",
    "REPLAY move indexes count every move (hide, ask too): hide QS (0), 2H 8H KH (1-3), seat 3 "
    "(void in hearts) asks (4) and plays 5C holding 4S 3S 2S -> must_play_trump at (0, 5); "
    "the ask happened, so trump_shown is trick 1 (1-based) by seat 3",
    game_in(HI, 3, DEAL_B, HID_ASK), 1,
    {"ok": False, "error": err("must_play_trump", 0, 5),
     "rounds": [dict({"caller": 0, "trump": "S", "tricks": [], "result": None, "pickups": [],
                      "trump_shown": {"trick": 1, "seat": 3}}, **absent_fields("hidden"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}}))

# Errors in round 1 of 3: round 0 whole, round 1 with its finished tricks and result null,
# no round 2, game.score = round 0's points, next_caller null (REPLAY).
R_CL7 = dict(call="S", result=(0, "court", 2, [7, 0]))
T1B = {"leader": 0, "cards": ["AS", "JS", "8S", "4S"], "winner": 0}  # DEAL_B trick 1, 0 leads
T1B_MOVES = [P(0, "AS"), P(1, "JS"), P(2, "8S"), P(3, "4S")]


def trim_rounds(c, n):
    """Expect exactly the first n rounds (REPLAY: 'the rounds up to it')."""
    c["expect"]["rounds"] = c["expect"]["rounds"][:n]
    return model_check(c)


c = built("error_round1_of3_must_follow_classic",
          "REPLAY: illegal move in round 1 of 3: error round 1, move 6 (call + 5 plays; seat "
          "1 holds TS 9S and plays 6D on KS led); round 0 whole (Court 2), round 1 with its "
          "finished trick and result null, no round 2; score [2, 0]; next_caller null",
          CL, 3,
          [R(CL7, dealer=3, caller=0, extra=absent_fields("classic"), **R_CL7),
           R([], call="H", hands=DEAL_B, dealer=3, caller=0,
             after=T1B_MOVES + [P(0, "KS"), P(1, "6D")], extra=dict(
                 {"tricks": [T1B]}, **absent_fields("classic")), result="null"),
           R(CL7, call="S", dealer=3)],
          exit=1, error=(1, 6, "must_follow_suit"), game=([2, 0], False, None, None),
          check_model=False)
trim_rounds(c, 2)
PILES9 = ["S>0", "S>0", "S>0", "H>0", "H>0", "D>0", "D>0", "C>1", "C>1"]
# t3 pile 3 -> 0 takes 3; t5 +2; t7 +2 (7-0 but team 1 has none: play on); t8-t9 seat 1 +2
# -> 7-2 after trick 9; normal 1; caller's team won -> same caller 0.
PILES9_PU = [(3, 0, 3), (5, 0, 2), (7, 0, 2), (9, 1, 2)]
c = built("error_round1_of3_not_your_turn_piles",
          "REPLAY: round 1 of 3 in piles: seat 2 leads trick 2 though seat 0 won trick 1 -> "
          "not_your_turn (1, 5); round 0 whole with its pickups; round 1 pickups [] and result "
          "null; score [1, 0]",
          PI, 3,
          [R(PILES9, call="S", dealer=3, caller=0, pickups=PILES9_PU,
             result=(0, "normal", 1, [7, 2]), extra=absent_fields("piles")),
           R([], call="S", hands=DEAL_B, dealer=3, caller=0, after=T1B_MOVES + [P(2, "7S")],
             extra=dict({"tricks": [T1B]}, **absent_fields("piles")), pickups=[],
             result="null"),
           R(PILES9, call="S", dealer=3)],
          exit=1, error=(1, 5, "not_your_turn"), game=([1, 0], False, None, None),
          check_model=False)
trim_rounds(c, 2)
# Hidden round 0: no power and no pickup before the show (t1-t3 pile 3); caller 0 won t3 and
# shows before leading t4 (first fresh win), t5 second -> takes 5; t7 +2 -> 7-0, play on;
# seat 1 t8-t9 +2 -> 7-2. Normal 1, same caller.
HID9 = ["H>0", "H>0", "H>0", "!AS KS QS JS >0", "D>0", "D>0", "D>0", "C>1", "C>1"]
R_HID9 = dict(hide="2S", trump="S", trump_shown=(4, 0), pickups=[(5, 0, 5), (7, 0, 2),
                                                                    (9, 1, 2)],
              result=(0, "normal", 1, [7, 2]))
c = built("error_round1_of3_bad_hide_hidden",
          "REPLAY bad_call 'a hide card not among the first five' in round 1 of 3: 5D is in "
          "caller 0's hand but not in its first five -> (1, 0); round 0 whole (trump_shown "
          "trick 4), score [1, 0]",
          HI, 3,
          [R(HID9, dealer=3, caller=0, extra=absent_fields("hidden"), **R_HID9),
           R([], hands=DEAL_B, dealer=3, caller=0, after=[{"seat": 0, "hide": "5D"}],
             extra={"tricks": []}, result="null"),
           R(HID9, dealer=3, hide="2S")],
          exit=1, error=(1, 0, "bad_call"), game=([1, 0], False, None, None), check_model=False)
trim_rounds(c, 2)
c = built("error_round1_of3_card_not_in_hand_kaat",
          "REPLAY in kaat (no call move): round 1 of 3, seat 0 leads trick 2 with KS it played "
          "in trick 1 -> card_not_in_hand (1, 4); round 0 whole (no void, so no trump set: "
          "trump null, trump_set null; caller = leader 0)",
          KA, 3,
          [R(PILES9, dealer=3, caller=0, trump=None, trump_set=None, pickups=PILES9_PU,
             result=(0, "normal", 1, [7, 2]), extra=absent_fields("kaat")),
           R(["KS 2S 3S 4S >0"], dealer=3, caller=0, trump=None, trump_set=None,
             after=[P(0, "KS")], pickups=[], result="null"),
           R(PILES9, dealer=3)],
          exit=1, error=(1, 4, "card_not_in_hand"), game=([1, 0], False, None, None),
          check_model=False)
trim_rounds(c, 2)

# =============================================================== 3. missing_moves, game_over
c = built("missing_moves_round1_of3",
          "REPLAY missing_moves: round 1 of 3 stops after 2 tricks -> error round 1, move null, "
          "exit 1; round 0 whole, round 1 with its 2 tricks and result null, no round 2",
          CL, 3,
          [R(CL7, dealer=3, caller=0, **R_CL7),
           R(["S>0", "S>1"], call="D", dealer=3, caller=0, result="null"),
           R(CL7, call="S", dealer=3)],
          exit=1, error=(1, None, "missing_moves"), game=([2, 0], False, None, None),
          check_model=False)
trim_rounds(c, 2)
c = built("missing_moves_kaat_no_moves",
          "REPLAY missing_moves in kaat: round 0 of 2 has no moves at all (kaat has no call, so "
          "nothing happened) -> (0, null); trump null, trump_set null (not set yet)",
          KA, 3,
          [R([], dealer=3, caller=0, trump=None, trump_set=None, pickups=[], result="null"),
           R(PILES9, dealer=3)],
          exit=1, error=(0, None, "missing_moves"), game=([0, 0], False, None, None),
          check_model=False)
trim_rounds(c, 1)
c = built("missing_moves_only_call_piles",
          "REPLAY missing_moves: round 0 of 2 has only the call -> (0, null); trump known",
          PI, 1,
          [R([], call="C", dealer=1, caller=2, pickups=[], result="null"),
           R(PILES9, call="S", dealer=1)],
          exit=1, error=(0, None, "missing_moves"), game=([0, 0], False, None, None),
          check_model=False)
trim_rounds(c, 1)
c = built("missing_moves_stack_unfinished_then_round",
          "REPLAY missing_moves: a stack round that stopped after trick 1, then another round. "
          "The game did not end (its one round is unfinished), so this is missing_moves at "
          "round 0, not game_over at round 1",
          ST, 3,
          [R(["S>0"], call="H", dealer=3, caller=0, payouts=[], result="null"),
           R([], dealer=3)],
          exit=1, error=(0, None, "missing_moves"), check_model=False,
          expect_extra={"game": {"next_caller": None}})
trim_rounds(c, 1)
c = built("missing_moves_beats_later_illegal_move",
          "REPLAY: round 0 unfinished (missing_moves) comes before anything in round 1 (an "
          "out-of-turn call there) -> (0, null)",
          CL, 3,
          [R(["S>0"], call="S", dealer=3, caller=0, result="null"),
           R([], dealer=3, after=[{"seat": 2, "call": "S"}])],
          exit=1, error=(0, None, "missing_moves"), game=([0, 0], False, None, None),
          check_model=False)
trim_rounds(c, 1)
# target 3: round 0 Court 2, round 1 7-1 (winners 1,0,2,0,0,2,0,2) -> 3 -> over; round 2 is
# game_over.
CL71 = ["S>1", "S>0", "S>2", "H>0", "H>0", "H>2", "D>0", "D>2"]
c = built("game_over_round2",
          "REPLAY game_over: target 3 reached after round 1 (2 + 1); a third round is given -> "
          "error round 2, move null, exit 1; score [3, 0]; next_caller null; the rounds played "
          "are given whole (README A2: the game_over round itself may or may not be listed)",
          dict(CL, target=3), 3,
          [R(CL7, dealer=3, caller=0, **R_CL7),
           R(CL71, call="S", dealer=3, caller=0, result=(0, "normal", 1, [7, 1])),
           R(CL7, call="S", dealer=3)],
          exit=1, error=(2, None, "game_over"), check_model=False,
          expect_extra={"game": {"score": [3, 0], "next_caller": None}})
c["expect"]["rounds"] = {"$prefix": c["expect"]["rounds"][:2]}
model_check(c)
# Stack target 9, 13 tricks, nobody reaches 9: payouts t3 0+3, t5 1+2, t7 0+2, t9 1+2,
# t11 0+2 (t11: the marked seat 2 leads AC, the only club: wins), t13 pays the 2 left to
# team 1 -> 7-6. Trump C.
ST13 = ["S>0", "S>0", "S>0", "H>1", "H>1", "D>0", "D>0", "C>1", "C>1", "C>2",
        "AC AS AH AD >2", "H>1", "D>3"]
R_ST13 = dict(call="C", payouts=[(3, 0, 3), (5, 1, 2), (7, 0, 2), (9, 1, 2), (11, 0, 2),
                                 (13, 1, 2)], result=(0, "normal", 7, [7, 6]))
built("stack_13_tricks_7_6_no_target",
      "§2.5 stack target 9 not reached: after 13 tricks the higher score wins (7-6); REPLAY "
      "stack: result.count and game.score are both teams' stack points, result.points the "
      "winner's (7), the game is over after its one round (winner 0, next_caller null); "
      "payouts 1-based with team; no pickups/trump_shown/trump_set",
      dict(ST, target=9), 3, [R(ST13, dealer=3, caller=0, extra=absent_fields("stack"),
                                **R_ST13)],
      game=([7, 6], True, 0, None))
c = built("stack_game_over_after_13_tricks",
          "REPLAY game_over: 'the game is over after its one round' even when nobody reached "
          "the target; a second round -> error round 1, move null, exit 1",
          dict(ST, target=9), 3, [R(ST13, dealer=3, caller=0, **R_ST13), R([], dealer=3)],
          exit=1, error=(1, None, "game_over"), check_model=False,
          expect_extra={"game": {"score": [7, 6], "next_caller": None}})
c["expect"]["rounds"] = {"$prefix": c["expect"]["rounds"][:1]}
model_check(c)
# REPLAY: "except for round_over: that round is finished, so it is given whole with its
# `result` (and `game` as after it)".
c = built("round_over_piles_after_7_2",
          "REPLAY round_over: a move after a piles round ended at 7-2 (trick 9): index 37 = "
          "call + 36 plays; the round is given whole (pickups, result normal 1) and game as "
          "after it: 1-0, the caller's team won -> caller 0 again (§2.2)",
          PI, 3, [R(PILES9, call="S", after=[P(0, "AS")], pickups=PILES9_PU,
                    result=(0, "normal", 1, [7, 2]))],
          exit=1, error=(0, 37, "round_over"), game=([1, 0], False, None, 0))
c = built("round_over_kaat_index",
          "REPLAY round_over in kaat (no call move): the move after trick 9 is index 36; every "
          "trick followed suit, so no trump was set (trump and trump_set null); the round is "
          "given whole (7-2 normal, 1) and game as after it: the leader's team won -> leader "
          "0 leads again",
          KA, 3, [R(PILES9, after=[P(0, "AS")], trump=None, trump_set=None,
                    pickups=PILES9_PU, result=(0, "normal", 1, [7, 2]))],
          exit=1, error=(0, 36, "round_over"), game=([1, 0], False, None, 0))

c = built("round_over_any_move_after_end",
          "REPLAY round_over 'moves after the round ended': after 7-0 (move 29 = call + 28 "
          "plays) even a move that would also be out of turn and of a card already played "
          "(seat 1 plays KS, played by seat 0 in trick 1) is round_over; the round is given "
          "whole (Court, 2) and game as after it (2-0, next caller 0)",
          CL, 3, [R(CL7, call="S", after=[P(1, "KS")], result=(0, "court", 2, [7, 0]))],
          exit=1, error=(0, 29, "round_over"), game=([2, 0], False, None, 0))
assert c["input"]["rounds"][0]["moves"][1] == P(0, "KS")
c = built("round_over_call_after_end",
          "REPLAY round_over: a call after a piles round ended (7-2 at trick 9) is also a move "
          "after the end (37 = call + 36 plays), not bad_call; round whole, game as after it",
          PI, 3, [R(PILES9, call="S", after=[{"seat": 0, "call": "H"}], pickups=PILES9_PU,
                    result=(0, "normal", 1, [7, 2]))],
          exit=1, error=(0, 37, "round_over"), game=([1, 0], False, None, 0))
c = built("round_over_stack_after_13_tricks",
          "REPLAY round_over after a stack round that ran its 13 tricks without reaching the "
          "target 9 (7-6): given whole with its payouts and result; game as after it: over "
          "(one deal decides), winner 0, next_caller null",
          dict(ST, target=9), 3, [R(ST13, dealer=3, caller=0, after=[P(1, "2S")], **R_ST13)],
          exit=1, error=(0, 53, "round_over"), game=([7, 6], True, 0, None))
# DEAL_B, caller 0 (spades): t1 AS JS 8S 4S, t2 KS TS 7S 3S, t3 QS 9S 6S 2S: seat 0 wins all
# three; then seat 1 leads though seat 0 won trick 3 -> not_your_turn at move 13.
T3B = T1B_MOVES + [P(0, "KS"), P(1, "TS"), P(2, "7S"), P(3, "3S"),
                   P(0, "QS"), P(1, "9S"), P(2, "6S"), P(3, "2S")]
T3B_T = [T1B, {"leader": 0, "cards": ["KS", "TS", "7S", "3S"], "winner": 0},
         {"leader": 0, "cards": ["QS", "9S", "6S", "2S"], "winner": 0}]
model_check(add(
    "error_after_pickup_piles_shape",
    "REPLAY: the round the error is in is given with its finished tricks (3) and result null; "
    "its pickups so far are listed (seat 0 won tricks 2 and 3: takes 3 at trick 3, team 0); "
    "piles has no payouts/trump_shown/trump_set; not_your_turn at (0, 13)",
    game_in(PI, 3, DEAL_B, [{"seat": 0, "call": "S"}] + T3B + [P(1, "8H")]), 1,
    {"ok": False, "error": err("not_your_turn", 0, 13),
     "rounds": [dict({"caller": 0, "trump": "S", "tricks": T3B_T, "result": None,
                      "pickups": [{"trick": 3, "seat": 0, "team": 0, "count": 3}]},
                     **absent_fields("piles"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}}))
model_check(add(
    "error_after_payout_stack_shape",
    "REPLAY stack error round: finished tricks, payouts so far (§2.5: t1 sets no marker, t2 "
    "marks seat 0, t3 pays 3 to team 0 at trick 3), result null, no pickups/trump_shown/"
    "trump_set; not_your_turn at (0, 13)",
    game_in(ST, 3, DEAL_B, [{"seat": 0, "call": "H"}] + T3B + [P(1, "8H")]), 1,
    {"ok": False, "error": err("not_your_turn", 0, 13),
     "rounds": [dict({"caller": 0, "trump": "H", "tricks": T3B_T, "result": None,
                      "payouts": [{"trick": 3, "team": 0, "points": 3}]},
                     **absent_fields("stack"))],
     "game": {"next_caller": None}}))

# Unfinished last rounds: ok true, result null, next_caller null (each game type).
built("unfinished_piles_after_pickup",
      "REPLAY unfinished last round in piles: ok true, result null, next_caller null; the seed "
      "example pickup (seat 0 wins tricks 2 and 3: takes 3) listed with trick 3 (1-based) and "
      "team 0",
      PI, 3, [R(["S>1", "S>0", "S>0"], call="D", pickups=[(3, 0, 3)], result="null",
                extra=absent_fields("piles"))],
      game=([0, 0], False, None, None))
built("unfinished_hidden_after_hide",
      "REPLAY unfinished hidden round after the hide only: trump is the face-down card's suit "
      "('hidden: the suit of the face-down card'), trump_shown null, pickups [], no tricks",
      HI, 3, [R([], hide="9H", trump="H", trump_shown=None, pickups=[], result="null",
                extra=dict({"tricks": []}, **absent_fields("hidden")))],
      game=([0, 0], False, None, None))
built("unfinished_hidden_no_moves",
      "REPLAY: a hidden round before the hide: the trump is not known yet -> null "
      "('the trump suit once known'); trump_shown null",
      HI, 0, [R([], dealer=0, caller=1, trump=None, trump_shown=None, pickups=[],
                result="null", extra=absent_fields("hidden"))],
      game=([0, 0], False, None, None))
built("unfinished_kaat_no_moves",
      "REPLAY kaat: 'caller is the leader of the round' = first_dealer 0 + 1 = 1; no trump "
      "yet (trump null, trump_set null); ok true",
      KA, 0, [R([], dealer=0, caller=1, trump=None, trump_set=None, pickups=[], result="null",
                extra=absent_fields("kaat"))],
      game=([0, 0], False, None, None))
built("unfinished_stack_no_payout",
      "REPLAY unfinished stack round: payouts [] (t1 never marks, t2 marks), no pickups",
      ST, 2, [R(["S>3", "S>3"], call="D", dealer=2, caller=3, payouts=[], result="null",
                extra=absent_fields("stack"))],
      game=([0, 0], False, None, None))

# =============================================================== 4. output shape
built("tricks_in_play_order_from_leader",
      "REPLAY 'tricks[i].cards: in play order from the leader': first_dealer 1 -> caller 2 "
      "leads: cards are seat 2, 3, 0, 1",
      CL, 1, [R([], call="D", hands=SUITED, dealer=1, caller=2,
                after=[P(2, "AD"), P(3, "2C"), P(0, "2S"), P(1, "2H"),
                       P(2, "KD"), P(3, "3C"), P(0, "3S"), P(1, "3H")],
                extra={"tricks": [{"leader": 2, "cards": ["AD", "2C", "2S", "2H"], "winner": 2},
                                  {"leader": 2, "cards": ["KD", "3C", "3S", "3H"],
                                   "winner": 2}]},
                result="null")],
      game=([0, 0], False, None, None))
built("pickups_team_of_seat",
      "REPLAY pickups[].team is the seat's team (seats 1, 3 = team 1): seat 3 wins tricks 1-3 "
      "(takes 3 at trick 3, team 1), seat 2 tricks 4-5 (takes 2 at trick 5, team 0)",
      PI, 3, [R(["S>3", "S>3", "S>3", "H>2", "H>2"], call="H", result="null",
                extra={"pickups": [{"trick": 3, "seat": 3, "team": 1, "count": 3},
                                   {"trick": 5, "seat": 2, "team": 0, "count": 2}]})],
      game=([0, 0], False, None, None))
built("kaat_trump_set_trick_3",
      "REPLAY trump_set {trick (1-based), seat, suit}: seat 3 is void in spades at trick 3 "
      "and plays 2H: hearts are trump from that card on, which wins its own trick (§2.4)",
      KA, 3, [R(["S>0", "S>0", "JS 8S 9S 2H >3"], trump="H", trump_set=(3, 3, "H"),
                pickups=[], result="null", extra=absent_fields("kaat"))],
      game=([0, 0], False, None, None))
# DEAL_B hidden, caller 0 hides QS. t1 0 2H, 1 8H, 2 KH, 3 (void) 5C -> 2. t2 2 JD, 3 6C,
# 0 2D, 1 6D -> 2. t3 2 2C, 3 7C, 0 (void in clubs, not shown) throws 3H face down, 1 7D -> 3.
# t4 3 8C, 0 (void) shows and cuts with KS (must play a trump), 1 8D, 2 3C -> 0.
HV_MOVES = [{"seat": 0, "hide": "QS"}, P(0, "2H"), P(1, "8H"), P(2, "KH"), P(3, "5C"),
            P(2, "JD"), P(3, "6C"), P(0, "2D"), P(1, "6D"),
            P(2, "2C"), P(3, "7C"), P(0, "3H"), P(1, "7D")]
HV_SHOW = HV_MOVES + [P(3, "8C"), {"seat": 0, "show": True}, P(0, "KS"), P(1, "8D"),
                      P(2, "3C")]
HV_T = [{"leader": 0, "cards": ["2H", "8H", "KH", "5C"], "winner": 2},
        {"leader": 2, "cards": ["JD", "6C", "2D", "6D"], "winner": 2}]
HV_T4 = {"leader": 3, "cards": ["8C", "KS", "8D", "3C"], "winner": 0}
model_check(add(
    "hidden_facedown_throw_then_show_full",
    "§2.3: before the show the caller's throw (3H on clubs) is face down and cannot win (7C "
    "wins trick 3); at trick 4 the void caller shows and must cut (KS wins); trump_shown "
    "{trick 4, seat 0}; no pickup yet (trick 4 is the first fresh win)",
    game_in(HI, 3, DEAL_B, HV_SHOW), 0,
    {"ok": True, "rounds": [dict({"caller": 0, "trump": "S", "tricks": HV_T + [
        {"leader": 2, "winner": 3}, HV_T4], "trump_shown": {"trick": 4, "seat": 0},
        "pickups": [], "result": None}, **absent_fields("hidden"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}}))

# =============================================================== 5. --view SEAT
VW = "REPLAY --view: 'only what that seat may see at the end of the given moves'"


def view(name, why, inp, seat, expect, secrets):
    e = {"seat": seat}
    e.update(expect)
    return add("view_" + name, why, inp, 0, e, args=["--view", str(seat)], forbid=secrets)


def first5(hands, seat):
    return hands[seat].split()[:5]


PRE = (VW + "; before the call only the first packet is dealt (§1.3: 5 each, the caller "
       "names trump from those five alone, then 4 more, then 4 more; REPLAY: 'The first five "
       "of each are that seat's first packet'): hand = the first five, trump null; no other "
       "card of the deal (own later packets included) is visible")
for game, rules, seat in (("classic", CL, 0), ("classic", CL, 2), ("piles", PI, 1),
                          ("stack", ST, 3), ("hidden", HI, 0), ("hidden", HI, 2)):
    inp = game_in(rules, 3, DEAL_B, [])
    view("%s_before_call_seat%d" % (game, seat), PRE, inp, seat,
         {"hand": {"$set": first5(DEAL_B, seat)}, "trump": None, "tricks": []},
         [c for h in DEAL_B for c in h.split() if c not in first5(DEAL_B, seat)])
inp = game_in(CL, 3, DEAL_B, [{"seat": 0, "call": "H"}])
view("classic_after_call_seat1", VW + "; after the call all 13 are dealt: own 13 cards, the "
     "named trump", inp, 1, {"hand": {"$set": DEAL_B[1].split()}, "trump": "H", "tricks": []},
     others_unplayed(inp, 1))
inp = game_in(CL, 3, DEAL_B, [{"seat": 0, "call": "H"}, P(0, "AS"), P(1, "JS")])
view("classic_mid_trick_seat3", VW + "; mid-trick: own 13 cards, trump; the two cards played "
     "are public, the rest of the other hands is not", inp, 3,
     {"hand": {"$set": DEAL_B[3].split()}, "trump": "H"}, others_unplayed(inp, 3))
inp = game_in(CL, 3, DEAL_B, [{"seat": 0, "call": "H"}] + T1B_MOVES + [P(0, "KS")])
view("classic_after_trick_seat2", VW + "; a finished trick face up, own hand without the card "
     "played", inp, 2, {"hand": {"$set": remaining(inp, 2)}, "trump": "H", "tricks": [T1B]},
     others_unplayed(inp, 2))
hands, moves, _ = build_round(model.check_rules(CL), 3, R(CL7, call="S"))
inp = game_in(CL, 3, hands, moves)
view("classic_finished_round_seat1", VW + "; after a 7-0 round the 6 unplayed cards of the "
     "other seats stay unseen (they were never played); own 6 left", inp, 1,
     {"hand": {"$set": remaining(inp, 1)}, "trump": "S", "tricks": {"$len": 7}},
     others_unplayed(inp, 1))
hands, moves, _ = build_round(model.check_rules(PI), 3, R(["S>3", "S>3", "S>3"], call="H"))
inp = game_in(PI, 3, hands, moves)
view("piles_pickup_seat1", VW + "; 'pickups' is part of the view: seat 3 took 3 at trick 3 "
     "(team 1)", inp, 1, {"hand": {"$set": remaining(inp, 1)}, "trump": "H",
                          "pickups": [{"trick": 3, "seat": 3, "team": 1, "count": 3}],
                          "tricks": [{"winner": 3}, {"winner": 3}, {"winner": 3}]},
     others_unplayed(inp, 1))
HV_T3_HIDDEN = {"leader": 2, "cards": ["2C", "7C", "??", "7D"], "winner": 3}
inp = game_in(HI, 3, DEAL_B, HV_MOVES)
for seat in (1, 3):
    view("hidden_facedown_throw_seat%d" % seat,
         VW + "; 'every card the seat may not see written ??' (a hidden caller's face-down "
         "card and face-down throws): before the show a non-caller sees trump null, the "
         "caller's throw 3H as ??, never QS (face down)", inp, seat,
         {"hand": {"$set": remaining(inp, seat)}, "trump": None,
          "tricks": HV_T + [HV_T3_HIDDEN]},
         others_unplayed(inp, seat) + ["3H", "QS"])
inp = game_in(HI, 3, DEAL_B, HV_MOVES[:-1])
view("hidden_facedown_throw_current_trick_seat1",
     VW + "; the face-down throw (3H) lies in the unfinished trick and seat 1 is to play: "
     "nowhere in the view (current trick, legal moves, ...) may 3H or QS appear", inp, 1,
     {"hand": {"$set": remaining(inp, 1)}, "trump": None, "tricks": HV_T},
     others_unplayed(inp, 1) + ["3H", "QS"])
inp = game_in(HI, 3, DEAL_B, HV_MOVES)
view("hidden_facedown_throw_caller", VW + "; the caller sees its own face-down card's suit "
     "as trump and its own face-down throw (3H)", inp, 0,
     {"trump": "S", "tricks": HV_T + [{"leader": 2, "cards": ["2C", "7C", "3H", "7D"],
                                       "winner": 3}]},
     others_unplayed(inp, 0))
inp = game_in(HI, 3, DEAL_B, HV_SHOW)
view("hidden_after_show_seat2", VW + "; after the show the trump is known to all, the "
     "earlier face-down throw stays ?? (§2.3 D 'not even at the round's end')", inp, 2,
     {"hand": {"$set": remaining(inp, 2)}, "trump": "S",
      "tricks": HV_T + [HV_T3_HIDDEN, HV_T4]},
     [c for c in others_unplayed(inp, 2) if c != "QS"] + ["3H"])
view("hidden_after_show_caller_hand", VW + "; §2.3 'The face-down card goes back into the "
     "caller's hand, face up, the moment the trump is shown': the caller's hand now holds QS",
     inp, 0, {"hand": {"$set": remaining(inp, 0)}, "trump": "S"}, others_unplayed(inp, 0))
assert "QS" in remaining(inp, 0)
inp = game_in(KA, 3, DEAL_B, [])
view("kaat_no_moves_seat2", VW + "; kaat has no call (§2.4 'Nobody names trump'), so nothing "
     "waits between the packets: all 13 own cards; trump null", inp, 2,
     {"hand": {"$set": DEAL_B[2].split()}, "trump": None, "tricks": []},
     others_unplayed(inp, 2))
inp = game_in(KA, 3, DEAL_B, T1B_MOVES + [P(0, "2H"), P(1, "8H"), P(2, "KH"), P(3, "5C")])
view("kaat_trump_set_seat1", VW + "; kaat: seat 3 (void in hearts) sets clubs with 5C, which "
     "wins its own trick (§2.4): everyone sees trump C", inp, 1,
     {"hand": {"$set": remaining(inp, 1)}, "trump": "C",
      "tricks": [T1B, {"leader": 0, "cards": ["2H", "8H", "KH", "5C"], "winner": 3}]},
     others_unplayed(inp, 1))
inp = game_in(ST, 3, DEAL_B, [{"seat": 0, "call": "D"}] + T1B_MOVES)
view("stack_after_trick_seat0", VW + "; stack: own hand after trick 1, trump D", inp, 0,
     {"hand": {"$set": remaining(inp, 0)}, "trump": "D", "tricks": [T1B]},
     others_unplayed(inp, 0))
SS = "SPEC-SILENT: REPLAY does not say how a bad SEAT argument is answered; assumed like any "
SS += "bad input: exit 2, JSON error bad_input"
for nm, a in (("4", ["--view", "4"]), ("minus1", ["--view", "-1"]), ("x", ["--view", "x"]),
              ("fraction", ["--view", "1.5"]), ("missing", ["--view"]),
              ("empty", ["--view", ""])):
    bad("view_arg_" + nm, SS + " (args %r; finding F2, fixed in the tool)" % a, GOOD,
        "bad_input", args=a)
bad("view_not_json", "REPLAY --view takes the 'Same input': input that is not JSON is "
    "bad_input, exit 2 (SPEC-SILENT on the view's error layout; the error object assumed)",
    "not json", "bad_input", args=["--view", "1"])

# =============================================================== 6. seeded rounds
SW = "REPLAY: 'a round may give \"seed\": \"<64 hex digits>\" and the engine deals it'"


def seeded(rules, fd, moves, seed=SEED):
    return {"rules": dict(rules), "first_dealer": fd, "rounds": [{"seed": seed, "moves": moves}]}


add("seeded_kaat_no_moves", SW + "; kaat: caller = leader = first_dealer 2 + 1 = 3; trump and "
    "trump_set null, no pickups yet; unfinished last round -> ok true",
    seeded(KA, 2, []), 0,
    {"ok": True, "rounds": [dict({"dealer": 2, "caller": 3, "trump": None, "trump_set": None,
                                  "pickups": [], "tricks": [], "result": None},
                                 **absent_fields("kaat"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}})
add("seeded_hidden_no_moves", SW + "; hidden before the hide: trump null, trump_shown null",
    seeded(HI, 3, []), 0,
    {"ok": True, "rounds": [dict({"dealer": 3, "caller": 0, "trump": None, "trump_shown": None,
                                  "pickups": [], "tricks": [], "result": None},
                                 **absent_fields("hidden"))],
     "game": {"next_caller": None}})
add("seeded_stack_call", SW + "; stack: any suit may be called, held or not -> trump C; "
    "payouts [] ", seeded(ST, 1, [{"seat": 2, "call": "C"}]), 0,
    {"ok": True, "rounds": [dict({"dealer": 1, "caller": 2, "trump": "C", "payouts": [],
                                  "tricks": [], "result": None}, **absent_fields("stack"))],
     "game": {"score": [0, 0], "over": False, "winner": None, "next_caller": None}})
add("seeded_uppercase_hex", SW + "; upper-case A-F are hex digits too -> a valid round",
    seeded(CL, 3, [], SEED.upper()), 0,
    {"ok": True, "rounds": [{"dealer": 3, "caller": 0, "trump": None, "result": None}]})
add("seeded_no_fairness", SW + "; with deal_fairness false (§2, all game types) too",
    seeded(dict(PI, deal_fairness=False), 0, [{"seat": 1, "call": "H"}]), 0,
    {"ok": True, "rounds": [{"dealer": 0, "caller": 1, "trump": "H", "result": None}]})
add("seeded_call_by_wrong_seat", SW + "; REPLAY bad_call 'not the caller': caller is 0 "
    "(first_dealer 3), seat 1 calls -> (0, 0), exit 1, whatever the deal",
    seeded(CL, 3, [{"seat": 1, "call": "H"}]), 1,
    {"ok": False, "error": err("bad_call", 0, 0), "rounds": [{"tricks": [], "result": None}],
     "game": {"score": [0, 0], "next_caller": None}})
add("seeded_second_call", SW + "; REPLAY bad_call 'a call ... not expected now': a second "
    "call -> (0, 1)", seeded(PI, 3, [{"seat": 0, "call": "H"}, {"seat": 0, "call": "S"}]), 1,
    {"ok": False, "error": err("bad_call", 0, 1)})
add("seeded_kaat_call", SW + "; REPLAY 'Kaat has no call move' -> bad_call (0, 0)",
    seeded(KA, 3, [{"seat": 0, "call": "H"}]), 1, {"ok": False, "error": err("bad_call", 0, 0)})
d = seeded(CL, 3, [])
d["rounds"].append({"hands": SUITED, "moves": [{"seat": 0, "call": "S"}]})
add("seeded_missing_moves", SW + "; a seeded round 0 with no moves followed by round 1 -> "
    "missing_moves (0, null)", d, 1,
    {"ok": False, "error": err("missing_moves", 0, None), "game": {"next_caller": None}})
view("seeded_before_call_seat2", SW + "; " + VW + "; before the call only the first packet: "
     "5 cards (which ones depends on the shuffle), trump null", seeded(CL, 3, []), 2,
     {"hand": {"$len": 5}, "trump": None, "tricks": []}, [])
view("seeded_after_call_seat0", SW + "; " + VW + "; after the call all 13 are dealt",
     seeded(CL, 3, [{"seat": 0, "call": "S"}]), 0,
     {"hand": {"$len": 13}, "trump": "S", "tricks": []}, [])
view("seeded_kaat_seat3", SW + "; " + VW + "; kaat: no call, all 13 dealt, trump null",
     seeded(KA, 3, []), 3, {"hand": {"$len": 13}, "trump": None, "tricks": []}, [])


def main():
    cases = CASES
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cases")
    if sys.argv[1:2] == ["--findings"]:
        cases, out = FINDINGS, sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for f in glob.glob(os.path.join(out, PREFIX + "*.json")):
        os.remove(f)
    names = set()
    for c in cases:
        assert c["name"].startswith(PREFIX) and c["name"] not in names, c["name"]
        names.add(c["name"])
        with open(os.path.join(out, c["name"] + ".json"), "w") as fh:
            json.dump(c, fh, indent=1)
            fh.write("\n")
    print("wrote %d cases to %s" % (len(cases), os.path.normpath(out)))


if __name__ == "__main__":
    main()
