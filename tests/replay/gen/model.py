"""A small reference model of RULES.md §1-2 and REPLAY.md, written from the spec only.

It is NOT the source of truth for the cases: every case states its expected values by hand
(build_cases.py) and this model is only used to double-check those hand computations (and to
find the seat of each card when turning a list of tricks into moves).
"""

RANKS = "23456789TJQKA"
SUITS = "CDHS"
DECK = [r + s for s in SUITS for r in RANKS]


class ReplayError(Exception):
    def __init__(self, code, msg=""):
        super().__init__(code, msg)
        self.code = code
        self.msg = msg


def rank(c):
    return RANKS.index(c[0]) + 2  # 2..14


def team(seat):
    return seat % 2


DEFAULTS = {
    "classic": {"court_bonus": "court", "kot_points": 3, "target": 5, "deal_fairness": True},
    "piles": {"pile": "3-2-2", "ace_cannot_win_pile": False, "last_card": None,
              "six_point": False, "target": 10, "deal_fairness": True},
    "stack": {"target": 7, "deal_fairness": True},
}
DEFAULTS["hidden"] = DEFAULTS["piles"]
DEFAULTS["kaat"] = DEFAULTS["piles"]


def check_rules(rules):
    g = rules.get("game")
    if g not in DEFAULTS:
        raise ReplayError("bad_rules", "game")
    r = dict(DEFAULTS[g])
    for k, v in rules.items():
        if k == "game":
            continue
        if k not in r:
            raise ReplayError("bad_rules", k)
        r[k] = v
    r["game"] = g
    if g == "classic":
        if r["court_bonus"] not in ("none", "court", "kot"):
            raise ReplayError("bad_rules", "court_bonus")
        if not isinstance(r["kot_points"], int) or not 2 <= r["kot_points"] <= 10:
            raise ReplayError("bad_rules", "kot_points")
        if not 1 <= r["target"] <= 100:
            raise ReplayError("bad_rules", "target")
    elif g == "stack":
        if r["target"] not in (5, 7, 9):
            raise ReplayError("bad_rules", "target")
    else:
        if r["pile"] not in ("3-2-2", "5-3-3"):
            raise ReplayError("bad_rules", "pile")
        if not 10 <= r["target"] <= 100:
            raise ReplayError("bad_rules", "target")
        if r["last_card"] is not None and r["last_card"] not in DECK:
            raise ReplayError("bad_rules", "last_card")
        if r["six_point"] and r["last_card"] is None:
            raise ReplayError("bad_rules", "six_point")
    return r


class Round:
    def __init__(self, rules, dealer, hands, lenient=False):
        self.lenient = lenient
        self.r = rules
        self.g = rules["game"]
        self.dealer = dealer
        self.caller = (dealer + 1) % 4
        self.first_five = [h[:5] for h in hands]
        self.hands = [set(h) for h in hands]
        self.trump = None
        self.facedown = None
        self.shown = False
        self.shown_at = None  # trick number when shown
        self.trump_shown = None
        self.trump_set = None
        self.need_call = self.g in ("classic", "piles", "stack", "hidden")
        self.tricks = []
        self.cur = []  # list of (seat, card, is_trump_power, face_down)
        self.leader = self.caller
        self.must_trump = None  # seat that must play trump now
        self.count = [0, 0]
        self.pile = 0
        self.pickups = []
        self.payouts = []
        self.marker = None
        self.stack = 0
        self.over = False
        self.result = None

    # --- helpers
    def tno(self):
        return len(self.tricks) + 1

    def to_move(self):
        return (self.leader + len(self.cur)) % 4

    def playable(self, seat):
        h = set(self.hands[seat])
        if self.g == "hidden" and seat == self.caller and not self.shown and self.facedown:
            h.discard(self.facedown)
        return h

    def led(self):
        return self.cur[0][1][1] if self.cur else None

    def can_follow(self, seat):
        led = self.led()
        return led is not None and any(c[1] == led for c in self.playable(seat))

    # --- moves
    def move(self, m):
        if self.over:
            raise ReplayError("round_over")
        seat = m.get("seat")
        if self.need_call:
            if "call" in m or "hide" in m:
                if seat != self.caller:
                    raise ReplayError("bad_call", "not the caller")
                if self.g == "hidden":
                    if "hide" not in m or (m["hide"] not in self.first_five[seat]
                                           and not self.lenient):
                        raise ReplayError("bad_call", "hide")
                    self.facedown = m["hide"]
                    self.trump = m["hide"][1]
                else:
                    if "call" not in m or m["call"] not in list(SUITS):
                        raise ReplayError("bad_call", "call")
                    self.trump = m["call"]
                self.need_call = False
                return
            raise ReplayError("not_your_turn" if seat != self.caller else "bad_call")
        if "call" in m or "hide" in m:
            raise ReplayError("bad_call", "not expected")
        if seat != self.to_move():
            raise ReplayError("not_your_turn")
        if m.get("ask"):
            if not self.lenient and (self.g != "hidden" or seat == self.caller or self.shown
                                     or not self.cur or self.can_follow(seat)):
                raise ReplayError("cannot_ask")
            self.show(seat)
            if any(c[1] == self.trump for c in self.hands[seat]):
                self.must_trump = seat
            return
        if m.get("show"):
            if self.g != "hidden" or seat != self.caller or self.shown:
                raise ReplayError("cannot_show")
            only_fd = self.playable(seat) == set()
            if not self.cur:
                ok = only_fd or (len(self.tricks) > 0 and self.tricks[-1]["winner"] == seat)
                if not ok and not self.lenient:
                    raise ReplayError("cannot_show")
                self.show(seat)
            else:
                if self.can_follow(seat) and not self.lenient:
                    raise ReplayError("cannot_show")
                self.show(seat)
                self.must_trump = seat
            return
        card = m.get("play")
        led = self.led()
        if (self.g == "hidden" and seat == self.caller and not self.shown
                and card == self.facedown and self.playable(seat) == set()):
            # README A4: the last card is the face-down one; a bare play shows it too
            self.show(seat)
            if led:
                self.must_trump = seat
        if not self.lenient:
            if card not in self.playable(seat):
                raise ReplayError("card_not_in_hand")
            if led and card[1] != led and self.can_follow(seat):
                raise ReplayError("must_follow_suit")
            if self.must_trump == seat and card[1] != self.trump:
                raise ReplayError("must_play_trump")
        self.must_trump = None
        for h in self.hands:
            h.discard(card)
        face_down = (self.g == "hidden" and seat == self.caller and not self.shown
                     and led is not None and card[1] != led)
        if self.g == "kaat" and self.trump is None and led and card[1] != led:
            self.trump = card[1]
            self.trump_set = {"trick": self.tno(), "seat": seat, "suit": card[1]}
        power = self.trump is not None and card[1] == self.trump
        if self.g == "hidden":
            power = power and self.shown
        self.cur.append((seat, card, power, face_down))
        if len(self.cur) == 4:
            self.finish_trick()

    def show(self, seat):
        self.shown = True
        self.shown_at = self.tno()
        self.trump_shown = {"trick": self.tno(), "seat": seat}
        # the face-down card goes back into the hand (it never left self.hands)

    def key(self, seat, card):
        """Rank value within its suit for this trick (stack: a marked player's ace is low)."""
        v = rank(card)
        if self.g == "stack" and self.marker == seat and card[0] == "A":
            v = 1
        return v

    def trick_winner(self):
        led = self.led()
        cands = [x for x in self.cur if not x[3]]
        if self.g == "hidden" and led == self.trump:
            trumps = []
        else:
            trumps = [x for x in cands if x[2]]
        pool = trumps if trumps else [x for x in cands if x[1][1] == led]
        best = max(pool, key=lambda x: self.key(x[0], x[1]))
        return best[0], best[1]

    def finish_trick(self):
        w, wcard = self.trick_winner()
        t = self.tno()
        prev = self.tricks[-1]["winner"] if self.tricks else None
        self.tricks.append({"leader": self.leader, "cards": [x[1] for x in self.cur],
                            "winner": w, "seats": [x[0] for x in self.cur],
                            "face_down": any(x[3] for x in self.cur)})
        last_trick = self.cur
        self.cur = []
        self.leader = w
        if self.g == "classic":
            self.count[team(w)] += 1
            mx, mn = max(self.count), min(self.count)
            if mx >= 7 and (mn >= 1 or self.r["court_bonus"] != "kot" or t == 13):
                win = 0 if self.count[0] > self.count[1] else 1
                if mn == 0 and self.r["court_bonus"] == "court":
                    kind, pts = "court", 2
                elif mn == 0 and self.r["court_bonus"] == "kot":
                    kind, pts = "kot", self.r["kot_points"]
                else:
                    kind, pts = "normal", 1
                self.end(win, kind, pts)
        elif self.g == "stack":
            self.stack += 1
            if t == 13 or self.marker == w:
                self.payouts.append({"trick": t, "team": team(w), "points": self.stack})
                self.count[team(w)] += self.stack
                self.stack = 0
                self.marker = None
            elif t != 1:
                self.marker = w
            for tm in (0, 1):
                if self.count[tm] >= self.r["target"]:
                    self.end(tm, "normal", self.count[tm])
                    return
            if t == 13:
                if self.count[0] == self.count[1]:
                    self.end(None, "draw", None)
                else:
                    win = 0 if self.count[0] > self.count[1] else 1
                    self.end(win, "normal", self.count[win])
        else:
            self.pile += 1
            first_min, later_min = (3, 2) if self.r["pile"] == "3-2-2" else (5, 3)
            need = first_min if not self.pickups else later_min
            fresh_prev = prev == w
            if self.g == "hidden":
                fresh_prev = fresh_prev and self.shown and self.shown_at <= t - 1
            take = t == 13 or (
                fresh_prev and self.pile >= need
                and not (self.r["ace_cannot_win_pile"] and wcard[0] == "A")
                and (self.g != "hidden" or self.shown))
            if take:
                self.pickups.append({"trick": t, "seat": w, "team": team(w),
                                     "count": self.pile})
                self.count[team(w)] += self.pile
                self.pile = 0
            mx, mn = max(self.count), min(self.count)
            if (mx >= 7 and mn >= 1) or t == 13:
                win = 0 if self.count[0] > self.count[1] else 1
                kind, pts = "normal", 1
                if self.count[win] == 13:
                    if self.g == "kaat":
                        own = (self.trump_set is None
                               or team(self.trump_set["seat"]) == win)
                    else:
                        own = team(self.caller) == win
                    kind, pts = ("court", 2) if own else ("goon_court", 3)
                    lc = self.r["last_card"]
                    if lc and wcard == lc and w == self.tricks[-1]["winner"]:
                        kind, pts = "four_point", 4
                        if self.r["six_point"] and self.six(last_trick, w, lc):
                            kind, pts = "six_point", 6
                self.end(win, kind, pts)

    def six(self, trick, w, lc):
        p = (w + 2) % 4
        pc = [x for x in trick if x[0] == p][0]
        if pc[1][0] != lc[0] or pc[1][1] == lc[1]:
            return False
        for x in trick:
            if team(x[0]) == team(w):
                continue
            # does x beat the partner's card?
            if x[2] and not pc[2]:
                return False
            if x[2] == pc[2] and x[1][1] == pc[1][1] and rank(x[1]) > rank(pc[1]):
                return False
        return True

    def end(self, win, kind, pts):
        self.over = True
        self.result = {"winner": win, "kind": kind, "points": pts, "count": list(self.count)}

    def next_caller(self):
        w = self.result["winner"]
        if self.g == "stack":
            return None
        if w == team(self.caller):
            if self.g != "classic" and self.count[w] == 13:
                return (self.caller + 2) % 4
            return self.caller
        return (self.caller + 1) % 4

    def out(self):
        d = {"dealer": self.dealer, "caller": self.caller, "trump": self.trump,
             "tricks": [{k: v for k, v in t.items() if k not in ("seats", "face_down")}
                        for t in self.tricks],
             "result": self.result}
        if self.g in ("piles", "hidden", "kaat"):
            d["pickups"] = self.pickups
        if self.g == "stack":
            d["payouts"] = self.payouts
        if self.g == "hidden":
            d["trump_shown"] = self.trump_shown
        if self.g == "kaat":
            d["trump_set"] = self.trump_set
        return d


def book(rules, R, score):
    """A finished round booked into the game: (score, over, winner, next caller)."""
    if rules["game"] == "stack":  # one deal decides the game
        return list(R.count), True, R.result["winner"], None
    score = list(score)
    score[R.result["winner"]] += R.result["points"]
    over, winner = False, None
    for tm in (0, 1):
        if score[tm] >= rules["target"]:
            over, winner = True, tm
    return score, over, winner, R.next_caller()


def replay(inp):
    """Returns (output_dict, exit_code)."""
    try:
        rules = check_rules(inp["rules"])
    except ReplayError as e:
        return {"ok": False, "error": {"round": None, "move": None, "code": e.code,
                                       "message": e.msg}}, 2
    for rd in inp["rounds"]:
        hs = rd["hands"]
        allc = [c for h in hs for c in h.split()]
        if any(c not in DECK for c in allc):
            return {"ok": False, "error": {"round": None, "move": None, "code": "bad_input"}}, 2
        if len(hs) != 4 or sorted(allc) != sorted(DECK) or any(len(h.split()) != 13 for h in hs):
            return {"ok": False, "error": {"round": None, "move": None, "code": "bad_deal"}}, 2
    score = [0, 0]
    out_rounds = []
    caller = (inp["first_dealer"] + 1) % 4
    over = False
    winner = None
    for ri, rd in enumerate(inp["rounds"]):
        if over:
            return {"ok": False, "rounds": out_rounds,
                    "game": {"score": score, "over": over, "winner": winner,
                             "next_caller": None},
                    "error": {"round": ri, "move": None, "code": "game_over"}}, 1
        R = Round(rules, (caller - 1) % 4, [h.split() for h in rd["hands"]])
        for mi, m in enumerate(rd["moves"]):
            try:
                R.move(m)
            except ReplayError as e:
                out_rounds.append(R.out())
                if e.code == "round_over":
                    # REPLAY: a round_over round is finished: given whole with its result,
                    # and `game` as after it.
                    score, over, winner, caller = book(rules, R, score)
                    game = {"score": score, "over": over, "winner": winner,
                            "next_caller": None if over else caller}
                else:  # the round is given with result null, next_caller null
                    out_rounds[-1]["result"] = None
                    game = {"score": score, "over": False, "winner": None,
                            "next_caller": None}
                return {"ok": False, "rounds": out_rounds, "game": game,
                        "error": {"round": ri, "move": mi, "code": e.code,
                                  "message": e.msg}}, 1
        out_rounds.append(R.out())
        if not R.over:
            if ri != len(inp["rounds"]) - 1:
                return {"ok": False, "rounds": out_rounds,
                        "game": {"score": score, "over": False, "winner": None,
                                 "next_caller": None},
                        "error": {"round": ri, "move": None, "code": "missing_moves"}}, 1
            if rules["game"] == "stack":  # game.score is the stack points taken so far
                score = list(R.count)
            return {"ok": True, "rounds": out_rounds,
                    "game": {"score": score, "over": False, "winner": None,
                             "next_caller": None}}, 0
        score, over, winner, caller = book(rules, R, score)
    return {"ok": True, "rounds": out_rounds,
            "game": {"score": score, "over": over, "winner": winner,
                     "next_caller": None if over else caller}}, 0
