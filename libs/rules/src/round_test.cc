// Scenario tests: one per rule and per D of RULES.md sections 1-2.
#include "courtpiece/rules/round.h"

#include "courtpiece/rules/game.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace courtpiece::rules {
namespace {

using testing::C;
using testing::R;
using testing::RunHands;
using testing::RunOfSuit;
using testing::RunScript;

constexpr int kS = 3, kH = 2, kD = 1, kC = 0;

ErrorCode Code(Round& r, Move m) { return GetErrorCode(r.Apply(m)); }

// Seven tricks to the caller (seat 1, dealer 0) by following suit.
const std::vector<std::string> kSevenToCaller = {
    "1: AS 2S 3S 4S", "1: KS 5S 6S 7S", "1: QS 8S 9S TS", "1: AH 2H 3H 4H",
    "1: KH 5H 6H 7H", "1: QH 8H 9H TH", "1: AD 2D 3D 4D"};

TEST(Common, CallerIsSeatAfterDealerAndLeads) {
  Round r = *Round::FromHands(R({{"game", "classic"}}), 3, testing::ScriptHands(RunOfSuit(0, kS)));
  EXPECT_EQ(r.caller(), 0);
  EXPECT_EQ(r.phase(), Phase::kCall);
  EXPECT_EQ(Code(r, Move::Call(1, kS)), ErrorCode::kBadCall);  // not the caller
  EXPECT_EQ(Code(r, Move::Play(1, C("2H"))), ErrorCode::kNotYourTurn);
  EXPECT_EQ(Code(r, Move::Play(0, C("AS"))), ErrorCode::kBadCall);  // call first
  EXPECT_EQ(Code(r, Move::Call(0, 7)), ErrorCode::kBadCall);        // not a suit
  EXPECT_EQ(Code(r, Move::Hide(0, C("AS"))), ErrorCode::kBadCall);  // no hide here
  ASSERT_TRUE(r.Apply(Move::Call(0, kD)).ok());                     // any suit, held or not
  EXPECT_EQ(r.trump(), kD);
  EXPECT_EQ(r.turn(), 0);
  EXPECT_EQ(Code(r, Move::Call(0, kS)), ErrorCode::kBadCall);  // not expected now
  EXPECT_EQ(Code(r, Move::Ask(0)), ErrorCode::kCannotAsk);
  EXPECT_EQ(Code(r, Move::Show(0)), ErrorCode::kCannotShow);
  EXPECT_EQ(Code(r, Move::Play(0, C("2H"))), ErrorCode::kCardNotInHand);
}

// RULES.md 1.3: before the call every seat sees only its first five cards, whether the
// round was dealt from a seed or given whole (FromHands); all 13 once trump is named.
TEST(Common, ViewShowsOnlyTheFirstPacketBeforeTheCall) {
  for (const char* game : {"classic", "piles", "hidden", "stack"}) {
    const Rules rules = R({{"game", game}});
    const Round::Hands hands = testing::ScriptHands(RunOfSuit(0, kS));
    Round r = *Round::FromHands(rules, 3, hands);
    ASSERT_EQ(r.phase(), Phase::kCall) << game;
    for (int seat = 0; seat < 4; ++seat) {
      const SeatView v = r.View(seat);
      CardSet first;
      for (int i = 0; i < 5; ++i) first.Add(hands[seat][i]);
      EXPECT_EQ(v.hand, first) << game << " seat " << seat;
      for (int s = 0; s < 4; ++s) EXPECT_EQ(v.hand_size[s], 5) << game;
    }
    const Move m = rules.game == GameType::kHidden ? Move::Hide(0, hands[0][0]) : Move::Call(0, kS);
    ASSERT_TRUE(r.Apply(m).ok()) << game;
    for (int seat = 0; seat < 4; ++seat) {
      const SeatView v = r.View(seat);
      EXPECT_EQ(v.hand, r.hand(seat)) << game;
      EXPECT_EQ(v.hand.size(), seat == 0 && rules.game == GameType::kHidden ? 12 : 13) << game;
    }
  }
  // Kaat has no call: all 13 at once.
  Round k = *Round::FromHands(R({{"game", "kaat"}}), 3, testing::ScriptHands(RunOfSuit(0, kS)));
  for (int seat = 0; seat < 4; ++seat) EXPECT_EQ(k.View(seat).hand.size(), 13);
}

TEST(Common, FollowSuitCutOrThrowAndTrickWinner) {
  const Rules rules = R({{"game", "classic"}});
  // Trump spades. Seat 2 is void in hearts: it may throw (not forced to cut).
  const std::array<std::string, 4> hands = {
      "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH 2C", "AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD",
      "AS KS QS 3C 4C 5C 6C 7C 8C 9C TC JC QC", "2S 3S 4S 5S 6S 7S 8S 9S TS JS AD KC AC"};
  Round r = RunHands(rules, 0, hands, {Move::Call(1, kS)}, {});
  EXPECT_EQ(r.Check(Move::Play(1, C("2D"))), ErrorCode::kOk);
  ASSERT_TRUE(r.Apply(Move::Play(1, C("AH"))).ok());
  EXPECT_EQ(r.Check(Move::Play(2, C("3C"))), ErrorCode::kOk);  // throw: cutting not forced
  ASSERT_TRUE(r.Apply(Move::Play(2, C("3C"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(3, C("AD"))).ok());  // third suit, never wins
  EXPECT_EQ(Code(r, Move::Play(0, C("2C"))), ErrorCode::kMustFollowSuit);
  ASSERT_TRUE(r.Apply(Move::Play(0, C("2H"))).ok());
  EXPECT_EQ(r.tricks()[0].winner, 1);  // the ace of the led suit
  // Trick 2: seat 1 leads a diamond; seat 2 and seat 3 cut, the higher trump wins.
  ASSERT_TRUE(r.Apply(Move::Play(1, C("KD"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(2, C("QS"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(3, C("2S"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(0, C("3H"))).ok());
  EXPECT_EQ(r.tricks()[1].winner, 2);
  EXPECT_EQ(r.turn(), 2);
}

TEST(Classic, CourtAtSevenNil) {
  Round r = RunScript(R({{"game", "classic"}}), 0, {Move::Call(1, kS)}, kSevenToCaller);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.completed_tricks(), 7);
  EXPECT_EQ(r.result().winner, 1);
  EXPECT_EQ(r.result().kind, ResultKind::kCourt);
  EXPECT_EQ(r.result().points, 2);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{0, 7}));
  EXPECT_EQ(r.NextCaller(), 1);
  EXPECT_EQ(Code(r, Move::Play(1, C("KD"))), ErrorCode::kRoundOver);
}

TEST(Classic, NoCourtBonusScoresOne) {
  Round r = RunScript(R({{"game", "classic"}, {"court_bonus", "none"}}), 0, {Move::Call(1, kS)},
                      kSevenToCaller);
  EXPECT_EQ(r.result().kind, ResultKind::kNormal);
  EXPECT_EQ(r.result().points, 1);
}

TEST(Classic, EndsAtSevenNormalAndCallPassesOnLoss) {
  // Team 0 (not the caller's) wins seven with the caller's team holding one.
  std::vector<std::string> t = {"1: AS 2S 3S 4S", "1: 5S KS 6S 7S", "2: QS 8S 9S TS",
                                "2: AH 2H 3H 4H", "2: KH 5H 6H 7H", "2: QH 8H 9H TH",
                                "2: AD 2D 3D 4D", "2: KD 5D 6D 7D"};
  Round r = RunScript(R({{"game", "classic"}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.result().winner, 0);
  EXPECT_EQ(r.result().kind, ResultKind::kNormal);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{7, 1}));
  EXPECT_EQ(r.NextCaller(), 2);  // caller + 1
  // Every seat's view counts as the result does: classic counts tricks won (it read 0-0,
  // so the table's `trick` events said "count 0-0" all round).
  for (int seat = 0; seat < 4; ++seat) {
    EXPECT_EQ(r.View(seat).count, (std::array<int, 2>{7, 1}));
    EXPECT_EQ(r.View(seat).tricks_won, (std::array<int, 2>{7, 1}));
  }
}

TEST(Classic, TheViewCountsTricksAsTheyAreWon) {
  std::vector<std::string> t = {"1: AS 2S 3S 4S", "1: 5S KS 6S 7S", "2: QS 8S 9S TS"};
  Round r = RunScript(R({{"game", "classic"}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_FALSE(r.over());
  ASSERT_EQ(r.tricks_won(), (std::array<int, 2>{2, 1}));
  EXPECT_EQ(r.View(0).count, (std::array<int, 2>{2, 1}));
  EXPECT_EQ(r.View(3).count, (std::array<int, 2>{2, 1}));
  EXPECT_EQ(r.count(), (std::array<int, 2>{0, 0}));  // the pile/stack tally, unused here
}

TEST(Classic, KotEightTricksToOne) {  // seed 004
  auto t = kSevenToCaller;
  t.push_back("1: KD 5D 6D 7D");
  t.push_back("1: 2C AC 3C 4C");  // the opponents' ace breaks the kot on trick 9
  const Rules rules = R({{"game", "classic"}, {"court_bonus", "kot"}, {"kot_points", 5}});
  Round r = RunScript(rules, 0, {Move::Call(1, kS)}, t);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.completed_tricks(), 9);
  EXPECT_EQ(r.result().kind, ResultKind::kNormal);
  EXPECT_EQ(r.result().points, 1);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{1, 8}));
  EXPECT_EQ(r.NextCaller(), 1);
}

TEST(Classic, KotThirteenNil) {
  const Rules rules = R({{"game", "classic"}, {"court_bonus", "kot"}});
  Round r = RunScript(rules, 0, {Move::Call(1, kS)}, RunOfSuit(1, kS));
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.result().kind, ResultKind::kKot);
  EXPECT_EQ(r.result().points, 3);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{0, 13}));
  EXPECT_EQ(r.NextCaller(), 1);  // classic: never the partner
}

TEST(Piles, PickupsCourtAndPartnerCalls) {
  Round r = RunScript(R({{"game", "piles"}}), 0, {Move::Call(1, kS)}, RunOfSuit(1, kS));
  ASSERT_TRUE(r.over());
  std::vector<std::pair<int, int>> got;
  for (const Pickup& p : r.pickups()) got.push_back({p.trick, p.count});
  EXPECT_EQ(got,
            (std::vector<std::pair<int, int>>{{3, 3}, {5, 2}, {7, 2}, {9, 2}, {11, 2}, {13, 2}}));
  EXPECT_EQ(r.result().kind, ResultKind::kCourt);
  EXPECT_EQ(r.result().points, 2);
  EXPECT_EQ(r.NextCaller(), 3);  // caller + 2 after all 13
}

TEST(Piles, FiveThreeThree) {
  Round r = RunScript(R({{"game", "piles"}, {"pile", "5-3-3"}}), 0, {Move::Call(1, kS)},
                      RunOfSuit(1, kS));
  std::vector<std::pair<int, int>> got;
  for (const Pickup& p : r.pickups()) got.push_back({p.trick, p.count});
  EXPECT_EQ(got, (std::vector<std::pair<int, int>>{{5, 5}, {8, 3}, {11, 3}, {13, 2}}));
}

TEST(Piles, GoonCourt) {
  // Seat 2 (team 0) holds every spade; seat 1 calls spades and leads.
  std::vector<std::string> t = {"1: 2H AS 2D 2C"};
  for (int i = 0; i < 12; ++i) {
    t.push_back("2: " + CardName(MakeCard(kS, 11 - i)) + " " + CardName(MakeCard(kD, 1 + i)) + " " +
                CardName(MakeCard(kC, 1 + i)) + " " + CardName(MakeCard(kH, 1 + i)));
  }
  Round r = RunScript(R({{"game", "piles"}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.result().winner, 0);
  EXPECT_EQ(r.result().kind, ResultKind::kGoonCourt);
  EXPECT_EQ(r.result().points, 3);
  EXPECT_EQ(r.NextCaller(), 2);
}

TEST(Piles, PartnerWinDoesNotCount) {
  std::vector<std::string> t = {"1: AS 2S 3S 4S", "1: 5S 6S KS 7S", "3: QS 8S 9S TS"};
  Round r = RunScript(R({{"game", "piles"}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_EQ(r.pickups().size(), 1u);
  EXPECT_EQ(r.pickups()[0].trick, 3);
  EXPECT_EQ(r.pickups()[0].seat, 3);
  EXPECT_EQ(r.pickups()[0].count, 3);
  EXPECT_EQ(r.count(), (std::array<int, 2>{0, 3}));
}

TEST(Piles, AceOfClubsAceOfSpadesThenKing) {  // seed 000
  std::vector<std::string> t = {"1: AC 2C 3C 4C", "1: AS 2S 3S 4S", "1: KC 5C 6C 7C"};
  Round r =
      RunScript(R({{"game", "piles"}, {"ace_cannot_win_pile", true}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_EQ(r.pickups().size(), 1u);
  EXPECT_EQ(r.pickups()[0].trick, 3);
  EXPECT_EQ(r.pickups()[0].count, 3);
}

TEST(Piles, AceCannotWinPileButCountsInTheRun) {
  std::vector<std::string> t = {"1: KC 2C 3C 4C", "1: KS 2S 3S 4S", "1: AC 5C 6C 7C",
                                "1: QC 8C 9C TC"};
  Round with =
      RunScript(R({{"game", "piles"}, {"ace_cannot_win_pile", true}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_EQ(with.pickups().size(), 1u);
  EXPECT_EQ(with.pickups()[0].trick, 4);
  EXPECT_EQ(with.pickups()[0].count, 4);
  Round without = RunScript(R({{"game", "piles"}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_EQ(without.pickups().size(), 1u);  // 3 at trick 3; the 4th trick alone is too few
  EXPECT_EQ(without.pickups()[0].trick, 3);
}

TEST(Piles, LastTrickTakesTheRestEvenWithAnAce) {
  // The caller leads spades low to high: the 13th trick is won with the ace.
  std::vector<std::string> t;
  for (int i = 0; i < 13; ++i) {
    t.push_back("1: " + CardName(MakeCard(kS, i)) + " " + CardName(MakeCard(kH, i)) + " " +
                CardName(MakeCard(kD, i)) + " " + CardName(MakeCard(kC, i)));
  }
  Round r =
      RunScript(R({{"game", "piles"}, {"ace_cannot_win_pile", true}}), 0, {Move::Call(1, kS)}, t);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.pickups().back().trick, 13);
  EXPECT_EQ(r.count(), (std::array<int, 2>{0, 13}));
}

TEST(Piles, PlaysOnWhileOtherTeamHasNothingThenEnds) {
  const std::array<std::string, 4> hands = {
      "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", "AS KS QS JS TS 9S 8S 2H 3H 4H 5H 6H 7H",
      "2S 3S 4S 5S 6S 7S AH KH QH JH TH 9H 8H", "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"};
  std::vector<std::string> t = {"1: AS 2S 2D 2C", "1: KS 3S 3D 3C", "1: QS 4S 4D 4C",
                                "1: JS 5S 5D 5C", "1: TS 6S 6D 6C", "1: 9S 7S 7D 7C",
                                "1: 8S 8H 8D 8C"};
  Round r = RunHands(R({{"game", "piles"}}), 0, hands, {Move::Call(1, kS)}, t);
  EXPECT_EQ(r.count(), (std::array<int, 2>{0, 7}));
  EXPECT_FALSE(r.over());  // the other team has picked up nothing
  ASSERT_TRUE(r.Apply(Move::Play(1, C("2H"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(2, C("AH"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(3, C("9D"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(0, C("9C"))).ok());
  EXPECT_FALSE(r.over());
  for (const char* c : {"KH", "TD", "TC", "3H"}) {
    ASSERT_TRUE(r.Apply(Move::Play(r.turn(), C(c))).ok()) << c;
  }
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.completed_tricks(), 9);
  EXPECT_EQ(r.result().winner, 1);
  EXPECT_EQ(r.result().kind, ResultKind::kNormal);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{2, 7}));
}

TEST(Piles, FourPointAndSixPoint) {
  // Seat 1 leads spades high to low, the 13th trick with 2S; partner seat 3 plays 2D.
  Round four = RunScript(R({{"game", "piles"}, {"last_card", "2S"}}), 0, {Move::Call(1, kS)},
                         RunOfSuit(1, kS));
  // RunOfSuit has the others throw low to high: seat 3's last card is AD, not a 2.
  EXPECT_EQ(four.result().kind, ResultKind::kFourPoint);
  EXPECT_EQ(four.result().points, 4);
  std::vector<std::string> t = RunOfSuit(1, kS);
  for (int i = 0; i < 13; ++i) {  // others throw high to low: last cards are all 2s
    t[i] = "1: " + CardName(MakeCard(kS, 12 - i)) + " " + CardName(MakeCard(kH, 12 - i)) + " " +
           CardName(MakeCard(kD, 12 - i)) + " " + CardName(MakeCard(kC, 12 - i));
  }
  Round six = RunScript(R({{"game", "piles"}, {"last_card", "2S"}, {"six_point", true}}), 0,
                        {Move::Call(1, kS)}, t);
  EXPECT_EQ(six.result().kind, ResultKind::kSixPoint);
  EXPECT_EQ(six.result().points, 6);
  EXPECT_EQ(six.NextCaller(), 3);
  Round not_six = RunScript(R({{"game", "piles"}, {"last_card", "2S"}, {"six_point", true}}), 0,
                            {Move::Call(1, kS)}, RunOfSuit(1, kS));
  EXPECT_EQ(not_six.result().kind, ResultKind::kFourPoint);
  Round other_card = RunScript(R({{"game", "piles"}, {"last_card", "3S"}}), 0, {Move::Call(1, kS)},
                               RunOfSuit(1, kS));
  EXPECT_EQ(other_card.result().kind, ResultKind::kCourt);
}

TEST(Piles, SixPointNeedsPartnerCardUnbeaten) {
  // Trump clubs. 13th trick: seat 1 wins with AH (the last card), partner seat 3 plays AD,
  // and opponent seat 0 follows with KH, which would beat AD: four points, not six.
  const std::array<std::string, 4> hands = {
      "2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH", "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C AH",
      "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"};
  std::vector<std::string> t = {"1: AC 2S 2D 2C"};
  for (int i = 0; i < 11; ++i) {
    t.push_back("1: " + CardName(MakeCard(kC, 11 - i)) + " " + CardName(MakeCard(kS, 1 + i)) + " " +
                CardName(MakeCard(kD, 1 + i)) + " " + CardName(MakeCard(kH, i)));
  }
  t.push_back("1: AH AS AD KH");
  Round r = RunHands(R({{"game", "piles"}, {"last_card", "AH"}, {"six_point", true}}), 0, hands,
                     {Move::Call(1, kC)}, t);
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.result().kind, ResultKind::kFourPoint);
  EXPECT_EQ(r.result().points, 4);
}

// Hidden: seat 1 calls by hiding 2S; seat 3 holds the other spades and AD.
const std::array<std::string, 4> kHiddenHands = {
    "9H 8H 7H 6H 5H 4H 3H 2H KD QD JD TD 9D", "2S AH KH QH JH TH 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C", "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S AD"};

TEST(Hidden, HideFromFirstFiveOnly) {
  const Rules rules = R({{"game", "hidden"}});
  Round r = RunHands(rules, 0, kHiddenHands, {}, {});
  EXPECT_EQ(Code(r, Move::Call(1, kS)), ErrorCode::kBadCall);
  EXPECT_EQ(Code(r, Move::Hide(1, C("TH"))), ErrorCode::kBadCall);  // 6th card
  EXPECT_EQ(Code(r, Move::Hide(2, C("AC"))), ErrorCode::kBadCall);  // not the caller
  ASSERT_TRUE(r.Apply(Move::Hide(1, C("2S"))).ok());
  EXPECT_EQ(r.trump(), kS);
  EXPECT_EQ(r.hand(1).size(), 12);
  EXPECT_FALSE(r.trump_shown());
  EXPECT_EQ(r.View(1).trump, kS);  // the caller knows
  EXPECT_EQ(r.View(0).trump, -1);
  EXPECT_EQ(r.View(3).face_down_card, -1);
  EXPECT_EQ(r.View(1).face_down_card, C("2S"));
  EXPECT_EQ(Code(r, Move::Show(1)), ErrorCode::kCannotShow);  // never on the first lead
  EXPECT_EQ(Code(r, Move::Play(1, C("2S"))), ErrorCode::kCardNotInHand);
}

TEST(Hidden, NoTrumpPowerBeforeShownAndFaceDownThrows) {
  const Rules rules = R({{"game", "hidden"}});
  Round r = RunHands(rules, 0, kHiddenHands, {Move::Hide(1, C("2S"))},
                     {"1: AH 2C 3S 2H", "1: 2D 3C AD 9D"});
  EXPECT_EQ(r.tricks()[0].winner, 1);  // 3S had no trump power
  EXPECT_EQ(r.tricks()[1].winner, 3);
  EXPECT_EQ(r.pile(), 2);
  // Trick 3: seat 3 leads spades; the caller cannot follow and throws face down.
  ASSERT_TRUE(r.Apply(Move::Play(3, C("5S"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(0, C("3H"))).ok());
  EXPECT_EQ(Code(r, Move::Ask(1)), ErrorCode::kCannotAsk);  // the caller shows, never asks
  ASSERT_TRUE(r.Apply(Move::Play(1, C("8D"))).ok());
  EXPECT_TRUE(r.face_down_throws().Has(C("8D")));
  EXPECT_EQ(r.View(0).current.cards[2], kHiddenCard);
  EXPECT_EQ(r.View(1).current.cards[2], C("8D"));
  ASSERT_TRUE(r.Apply(Move::Play(2, C("4C"))).ok());
  EXPECT_EQ(r.tricks()[2].winner, 3);
  EXPECT_EQ(r.pickups().size(), 0u);  // no pickups before the trump is shown
  // Trick 4: the caller cannot follow and shows; must then play a trump.
  ASSERT_TRUE(r.Apply(Move::Play(3, C("6S"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(0, C("4H"))).ok());
  ASSERT_TRUE(r.Apply(Move::Show(1)).ok());
  EXPECT_TRUE(r.trump_shown());
  EXPECT_EQ(r.trump_shown_event().trick, 4);
  EXPECT_EQ(r.trump_shown_event().seat, 1);
  EXPECT_TRUE(r.hand(1).Has(C("2S")));  // back in the hand, face up
  EXPECT_EQ(r.View(0).trump, kS);
  // Spades were led: the returned 2S now follows suit.
  EXPECT_EQ(Code(r, Move::Play(1, C("7D"))), ErrorCode::kMustFollowSuit);
  ASSERT_TRUE(r.Apply(Move::Play(1, C("2S"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(2, C("5C"))).ok());
  EXPECT_EQ(r.tricks()[3].winner, 3);  // trump led: cards compete by rank
  EXPECT_EQ(r.pickups().size(), 0u);   // the show trick is only the first fresh win
  for (const char* c : {"7S", "5H", "7D", "6C"})
    ASSERT_TRUE(r.Apply(Move::Play(r.turn(), C(c))).ok());
  ASSERT_EQ(r.pickups().size(), 1u);
  EXPECT_EQ(r.pickups()[0].trick, 5);
  EXPECT_EQ(r.pickups()[0].seat, 3);
  EXPECT_EQ(r.pickups()[0].count, 5);
  // Face-down throws stay hidden from the others, even after the show.
  EXPECT_EQ(r.View(2).tricks[2].cards[2], kHiddenCard);
  EXPECT_EQ(r.View(1).tricks[2].cards[2], C("8D"));
}

TEST(Hidden, AskShowsTrumpAndAskerMustPlayTrump) {
  const Rules rules = R({{"game", "hidden"}});
  Round r = RunHands(rules, 0, kHiddenHands, {Move::Hide(1, C("2S"))}, {"1: AH 2C 3S 2H"});
  ASSERT_TRUE(r.Apply(Move::Play(1, C("KH"))).ok());
  EXPECT_EQ(Code(r, Move::Ask(1)), ErrorCode::kNotYourTurn);
  EXPECT_EQ(Code(r, Move::Show(2)), ErrorCode::kCannotShow);  // only the caller shows
  ASSERT_TRUE(r.Apply(Move::Play(2, C("3C"))).ok());
  ASSERT_TRUE(r.Apply(Move::Ask(3)).ok());
  EXPECT_EQ(r.trump_shown_event().trick, 2);
  EXPECT_EQ(r.trump_shown_event().seat, 3);
  EXPECT_EQ(Code(r, Move::Ask(3)), ErrorCode::kCannotAsk);  // already shown
  EXPECT_EQ(Code(r, Move::Play(3, C("AD"))), ErrorCode::kMustPlayTrump);
  ASSERT_TRUE(r.Apply(Move::Play(3, C("4S"))).ok());
  EXPECT_EQ(Code(r, Move::Ask(0)), ErrorCode::kCannotAsk);
  ASSERT_TRUE(r.Apply(Move::Play(0, C("3H"))).ok());
  EXPECT_EQ(r.tricks()[1].winner, 3);  // shown before it was played: a trump
  for (const char* c : {"5S", "4H", "2S", "4C"})
    ASSERT_TRUE(r.Apply(Move::Play(r.turn(), C(c))).ok());
  ASSERT_EQ(r.pickups().size(), 1u);
  EXPECT_EQ(r.pickups()[0].trick, 3);
  EXPECT_EQ(r.pickups()[0].count, 3);
}

TEST(Hidden, AskOnlyWhenUnableToFollow) {
  Round r = RunHands(R({{"game", "hidden"}}), 0, kHiddenHands, {Move::Hide(1, C("2S"))}, {});
  EXPECT_EQ(Code(r, Move::Ask(1)), ErrorCode::kCannotAsk);  // leader, and the caller
  ASSERT_TRUE(r.Apply(Move::Play(1, C("AH"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(2, C("2C"))).ok());
  ASSERT_TRUE(r.Apply(Move::Play(3, C("3S"))).ok());
  EXPECT_EQ(Code(r, Move::Ask(0)), ErrorCode::kCannotAsk);  // holds hearts
}

TEST(Hidden, CallerShowsBeforeLeadingAfterWinning) {
  Round r = RunHands(R({{"game", "hidden"}}), 0, kHiddenHands, {Move::Hide(1, C("2S"))},
                     {"1: AH 2C 3S 2H", "1: show KH 3C 4S 3H"});
  EXPECT_EQ(r.trump_shown_event().trick, 2);
  EXPECT_EQ(r.trump_shown_event().seat, 1);
  EXPECT_EQ(r.tricks()[1].winner, 3);  // 4S cut after the show
}

TEST(Hidden, CallerWithOnlyTheFaceDownCardShowsAndPlaysIt) {
  const std::array<std::string, 4> hands = {
      "2H 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS", "2S AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H",
      "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"};
  std::vector<std::string> t = {"1: AH 2C 2D 2H"};
  for (int i = 0; i < 11; ++i) {
    t.push_back("1: " + CardName(MakeCard(kH, 11 - i)) + " " + CardName(MakeCard(kC, 1 + i)) + " " +
                CardName(MakeCard(kD, 1 + i)) + " " + CardName(MakeCard(kS, 1 + i)));
  }
  Round r = RunHands(R({{"game", "hidden"}}), 0, hands, {Move::Hide(1, C("2S"))}, t);
  EXPECT_EQ(r.completed_tricks(), 12);
  EXPECT_EQ(r.pickups().size(), 0u);
  EXPECT_TRUE(r.hand(1).empty());
  MoveList legal;
  r.LegalMoves(&legal);
  ASSERT_EQ(legal.size, 2);
  EXPECT_EQ(legal[0], Move::Play(1, C("2S")));
  EXPECT_EQ(legal[1], Move::Show(1));
  ASSERT_TRUE(r.Apply(Move::Play(1, C("2S"))).ok());
  EXPECT_TRUE(r.trump_shown());
  EXPECT_EQ(r.trump_shown_event().trick, 13);
  for (const char* c : {"AC", "AD", "AS"}) ASSERT_TRUE(r.Apply(Move::Play(r.turn(), C(c))).ok());
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.tricks()[12].winner, 0);
  EXPECT_EQ(r.result().winner, 0);
  EXPECT_EQ(r.result().kind, ResultKind::kGoonCourt);
  EXPECT_EQ(r.NextCaller(), 2);
}

TEST(Kaat, FirstCutSetsTrumpAndCountsInItsTrick) {
  const std::array<std::string, 4> hands = {
      "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 3S", "AH KH QH JH TH 9H 8H 7H 6H 5H AS KS QS",
      "2H 3H 4H 2D 3D 4D 5D 6D 7D 8D 9D TD JD", "2S 4S 5S 6S 7S 8S 9S TS JS QD KD AD AC"};
  Round r = RunHands(R({{"game", "kaat"}}), 0, hands, {}, {});
  EXPECT_EQ(r.phase(), Phase::kPlay);  // no call
  EXPECT_EQ(r.turn(), 1);
  EXPECT_EQ(Code(r, Move::Call(1, kS)), ErrorCode::kBadCall);
  for (const char* c : {"AH", "2H", "2S", "2C"})
    ASSERT_TRUE(r.Apply(Move::Play(r.turn(), C(c))).ok());
  EXPECT_EQ(r.trump(), kS);
  EXPECT_EQ(r.trump_set_event().trick, 1);
  EXPECT_EQ(r.trump_set_event().seat, 3);
  EXPECT_EQ(r.tricks()[0].winner, 3);  // 2S beat AH in its own trick
  // Later cards of that suit in the same trick count as trumps too.
  Round r2 = RunHands(R({{"game", "kaat"}}), 0, hands, {}, {"1: AH 2H 2S 3S"});
  EXPECT_EQ(r2.tricks()[0].winner, 0);
}

TEST(Kaat, CourtIsJudgedByTheTeamThatSetTrump) {
  const Rules rules = R({{"game", "kaat"}});
  // Seat 2 sets trump hearts on trick 1 and its team takes all 13: a Court.
  std::vector<std::string> t = {"1: AS 2H 2D 2C"};
  for (int i = 0; i < 12; ++i) {
    t.push_back("2: " + CardName(MakeCard(kH, 12 - i)) + " " + CardName(MakeCard(kD, 1 + i)) + " " +
                CardName(MakeCard(kC, 1 + i)) + " " + CardName(MakeCard(kS, 11 - i)));
  }
  Round court = RunScript(rules, 0, {}, t);
  ASSERT_TRUE(court.over());
  EXPECT_EQ(court.result().winner, 0);
  EXPECT_EQ(court.result().kind, ResultKind::kCourt);
  EXPECT_EQ(court.NextCaller(), 2);  // the leader's team (1) lost
  // Seat 2 sets diamonds, seat 3 overcuts and team 1 takes all 13: a Goon Court.
  const std::array<std::string, 4> hands = {
      "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC", "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
      "2D KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H", "3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD AH"};
  std::vector<std::string> g = {"1: AS 2D 3D 2C"};
  for (int i = 0; i < 11; ++i) {
    g.push_back("3: " + CardName(MakeCard(kD, 12 - i)) + " " + CardName(MakeCard(kC, 1 + i)) + " " +
                CardName(MakeCard(kS, 11 - i)) + " " + CardName(MakeCard(kH, 11 - i)));
  }
  g.push_back("3: AH AC 2S 2H");
  Round goon = RunHands(rules, 0, hands, {}, g);
  ASSERT_TRUE(goon.over());
  EXPECT_EQ(goon.trump_set_event().seat, 2);
  EXPECT_EQ(goon.result().winner, 1);
  EXPECT_EQ(goon.result().kind, ResultKind::kGoonCourt);
  EXPECT_EQ(goon.result().points, 3);
  EXPECT_EQ(goon.NextCaller(), 3);  // the leader's team took all 13
}

// RULES.md 2.4: a trump is always set in kaat (13 tricks cannot all follow suit), so the
// Court is always judged against the setter's team; FinishPileGame asserts it. Restore
// keeps that true: a kaat state without a trump must have every played card following the
// led suit, and the trump and its event go together.
TEST(Kaat, RestoreRefusesAStateThatLostItsTrump) {
  const std::array<std::string, 4> hands = {
      "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC 3S", "AH KH QH JH TH 9H 8H 7H 6H 5H AS KS QS",
      "2H 3H 4H 2D 3D 4D 5D 6D 7D 8D 9D TD JD", "2S 4S 5S 6S 7S 8S 9S TS JS QD KD AD AC"};
  const Round r = RunHands(R({{"game", "kaat"}}), 0, hands, {}, {"1: AH 2H 2S 2C"});
  ASSERT_EQ(r.trump(), kS);
  const std::string good = r.Serialize();
  // Unseeded layout: version, 9 rule bytes, dealer, phase, turn, seeded, 12 card sets of 8
  // bytes; then the trump at 110 and the set event's trick and seat at 124 and 125
  // (optional values stored +1); trick 1's trump-power marks at 143 (2S, third card).
  constexpr size_t kTrump = 110, kSetTrick = 124, kSetSeat = 125, kTrick1Marks = 143;
  ASSERT_EQ(good[kTrump], 1 + kS);
  ASSERT_EQ(good[kSetTrick], 1 + 1);
  ASSERT_EQ(good[kSetSeat], 1 + 3);
  ASSERT_EQ(good[kTrick1Marks], 1 << 2);
  ASSERT_TRUE(Round::Restore(good).ok());
  auto restore_code = [&](std::initializer_list<size_t> zeroed) {
    std::string b = good;
    for (size_t i : zeroed) b[i] = 0;
    return GetErrorCode(Round::Restore(b).status());
  };
  // No trump, no event, no trump marks, but trick 1 holds 2S on hearts led: refused.
  EXPECT_EQ(restore_code({kTrump, kSetTrick, kSetSeat, kTrick1Marks}), ErrorCode::kBadInput);
  // A trump without its event, an event without its trump: refused.
  EXPECT_EQ(restore_code({kSetTrick, kSetSeat}), ErrorCode::kBadInput);
  EXPECT_EQ(restore_code({kTrump, kTrick1Marks}), ErrorCode::kBadInput);
  EXPECT_EQ(restore_code({kSetSeat}), ErrorCode::kBadInput);
  // Before any card is off suit, no trump is the right state and restores.
  const Round before = RunHands(R({{"game", "kaat"}}), 0, hands, {}, {});
  auto restored = Round::Restore(before.Serialize());
  ASSERT_TRUE(restored.ok()) << restored.status();
  EXPECT_EQ(restored->trump(), -1);
}

TEST(Stack, WorkedExampleOfSeed001) {
  Round r = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                      {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: KD 2D 3D 4D"});
  EXPECT_EQ(r.tricks()[0].winner, 1);
  ASSERT_EQ(r.payouts().size(), 1u);
  EXPECT_EQ(r.payouts()[0].trick, 3);
  EXPECT_EQ(r.payouts()[0].team, 0);
  EXPECT_EQ(r.payouts()[0].points, 3);
  EXPECT_EQ(r.stack(), 0);
  EXPECT_EQ(r.marker(), -1);
  EXPECT_EQ(r.count(), (std::array<int, 2>{3, 0}));
}

TEST(Stack, FirstTrickNeverSetsTheMarker) {
  Round r = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                      {"1: AH 2H 3H 4H", "1: KH 5H 6H 7H"});
  EXPECT_EQ(r.payouts().size(), 0u);
  EXPECT_EQ(r.marker(), 1);
  EXPECT_EQ(r.stack(), 2);
}

TEST(Stack, MarkedPlayersAceRanksLow) {
  Round r = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                      {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: AD 2D 3D 4D"});
  EXPECT_EQ(r.tricks()[2].winner, 1);  // seat 2 was marked: its AD lost to 4D
  EXPECT_EQ(r.marker(), 1);
  EXPECT_EQ(r.stack(), 3);
}

TEST(Stack, MarkedPlayersTrumpAceIsTheLowestTrump) {
  Round r = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                      {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: 8H 2S 9H AS"});
  // Seat 2 is marked; seat 1 cuts with AS (not marked) and wins.
  EXPECT_EQ(r.tricks()[2].winner, 1);
  Round low = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                        {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: AS 2S 3S 4S"});
  EXPECT_EQ(low.tricks()[2].winner, 1);  // marked seat 2's AS is the lowest spade
  Round cut = RunScript(R({{"game", "stack"}}), 0, {Move::Call(1, kS)},
                        {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: 8H 9H AS TH"});
  EXPECT_EQ(cut.tricks()[2].winner, 0);  // seat 0 is not marked: AS cuts and wins
}

TEST(Stack, TargetReachedAtOnceEndsGame) {
  const Rules rules = R({{"game", "stack"}, {"target", 5}});
  Round r = RunScript(
      rules, 0, {Move::Call(1, kS)},
      {"1: AH 2H 3H 4H", "1: 5H KH 6H 7H", "2: KD 2D 3D 4D", "2: QD 5D 6D 7D", "2: JD 8D 9D TD"});
  ASSERT_TRUE(r.over());
  EXPECT_EQ(r.result().winner, 0);
  EXPECT_EQ(r.result().points, 5);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{5, 0}));
  EXPECT_EQ(Code(r, Move::Play(2, C("AD"))), ErrorCode::kRoundOver);
  Game g(rules, 0);
  g.FinishRound(r);
  EXPECT_TRUE(g.over());
  EXPECT_EQ(g.winner(), 0);
  EXPECT_EQ(g.score(), (std::array<int, 2>{5, 0}));
  EXPECT_EQ(g.next_caller(), -1);
}

TEST(Stack, LastTrickPaysOutTheRest) {
  // Seats 1 and 3 alternate, so nothing pays out until the 13th trick.
  const Rules rules = R({{"game", "stack"}, {"target", 9}});
  // Leaders alternate 1 and 3; the third card of each trick wins.
  const std::vector<std::string> t = {
      "1: 2H 3H AH 4H", "3: 2S 3S AS 4S", "1: 5H 6H KH 7H", "3: 5S 6S KS 7S", "1: 8H 9H QH TH",
      "3: 8S 9S QS TS", "1: JH 2D JS 3D", "3: 4D 5D AD 6D", "1: 7D 8D KD 9D", "3: TD JD QD 2C",
      "1: 3C 4C AC 5C", "3: 6C 7C KC 8C", "1: 9C TC QC JC"};
  Round r = RunScript(rules, 0, {Move::Call(1, kS)}, t);
  ASSERT_TRUE(r.over());
  ASSERT_EQ(r.payouts().size(), 1u);
  EXPECT_EQ(r.payouts()[0].trick, 13);
  EXPECT_EQ(r.payouts()[0].points, 13);
  EXPECT_EQ(r.result().count, (std::array<int, 2>{0, 13}));
}

TEST(Game, ScoresNextCallerAndTarget) {
  const Rules rules = R({{"game", "classic"}, {"target", 3}});
  Game g(rules, 0);
  EXPECT_EQ(g.next_caller(), 1);
  Round r1 = RunScript(rules, g.next_dealer(), {Move::Call(1, kS)}, kSevenToCaller);
  g.FinishRound(r1);
  EXPECT_EQ(g.score(), (std::array<int, 2>{0, 2}));
  EXPECT_EQ(g.next_caller(), 1);
  EXPECT_FALSE(g.over());
  Round r2 = RunScript(rules, g.next_dealer(), {Move::Call(1, kS)}, kSevenToCaller);
  g.FinishRound(r2);
  EXPECT_TRUE(g.over());
  EXPECT_EQ(g.winner(), 1);
  EXPECT_EQ(g.next_caller(), -1);
}

TEST(Game, SerializeRestoreCarriesTheBookkeeping) {
  const Rules rules = R({{"game", "classic"}, {"target", 3}});
  Game g(rules, 0);
  EXPECT_EQ(g.Serialize(), "game1 0 0 0 -1 1 0");
  g.FinishRound(RunScript(rules, g.next_dealer(), {Move::Call(1, kS)}, kSevenToCaller));
  EXPECT_EQ(g.Serialize(), "game1 0 2 0 -1 1 1");
  absl::StatusOr<Game> back = Game::Restore(rules, g.Serialize());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->score(), (std::array<int, 2>{0, 2}));
  EXPECT_EQ(back->next_caller(), 1);
  EXPECT_EQ(back->rounds_played(), 1);
  back->FinishRound(RunScript(rules, back->next_dealer(), {Move::Call(1, kS)}, kSevenToCaller));
  EXPECT_EQ(back->Serialize(), "game1 0 4 1 1 1 2");
  EXPECT_TRUE(Game::Restore(rules, back->Serialize()).ok());
}

TEST(Game, RestoreRefusesWhatTheRulesCannotReach) {
  const Rules rules = R({{"game", "classic"}, {"target", 3}});
  for (const char* bad : {"", "game1 0 2 0 -1 1", "game1 0 2 0 -1 1 1 7", "game2 0 2 0 -1 1 1",
                          "game1 0 3 0 -1 1 2",   // a running game at the target
                          "game1 0 -1 0 -1 1 1",  // negative score
                          "game1 0 4 1 0 1 2",    // over, but the winner is under the target
                          "game1 0 1 0 1 1 1",    // a winner in a running game
                          "game1 0 2 0 -1 4 1",   // next caller not a seat
                          "game1 0 2 2 -1 1 1",   // over neither 0 nor 1
                          "game1 0 4294967298 0 -1 1 1",  // overflows an int
                          "game15 0 0 -1 1 0", "game1 +1 0 0 -1 1 1", "game1 01 0 0 -1 1 1",
                          "game1 0\t2 0 -1 1 1", "game1 0 2 0 -1 1 1\r",
                          "game1 3 4 1 1 1 2",      // over, but the loser is at the target too
                          "game1 1 0 0 -1 1 0"}) {  // points before any round
    absl::StatusOr<Game> g = Game::Restore(rules, bad);
    ASSERT_FALSE(g.ok()) << bad;
    EXPECT_EQ(GetErrorCode(g.status()), ErrorCode::kBadInput) << bad;
  }
  const Rules stack = DefaultRules(GameType::kStack);
  EXPECT_TRUE(Game::Restore(stack, "game1 4 9 1 1 0 1").ok());
  EXPECT_TRUE(Game::Restore(stack, "game1 0 0 0 -1 0 0").ok());
  EXPECT_FALSE(Game::Restore(stack, "game1 4 9 0 -1 0 1").ok());  // one round: then over
  EXPECT_FALSE(Game::Restore(stack, "game1 9 4 1 1 0 1").ok());   // the winner has fewer
  EXPECT_FALSE(Game::Restore(stack, "game1 4 9 1 -1 0 1").ok());  // a draw of unequal points
  EXPECT_FALSE(Game::Restore(stack, "game1 3 0 0 -1 0 0").ok());  // points before the round
}

// Programmer errors stop the process in every build (COURTPIECE_CHECK), never corrupt state.
TEST(ProgrammerErrors, AbortWithTheReason) {
  const Round r = Round::FromSeed(DefaultRules(GameType::kPiles), 0, Seed{});
  EXPECT_DEATH(r.View(4), "a view is of a seat 0..3");
  EXPECT_DEATH(Round::FromSeed(DefaultRules(GameType::kPiles), 4, Seed{}),
               "the dealer is a seat 0..3");
  Game g(DefaultRules(GameType::kPiles), 0);
  EXPECT_DEATH(g.FinishRound(r), "only a finished round of a game not over");
}

}  // namespace
}  // namespace courtpiece::rules
