#include "courtpiece/rules/deal.h"

#include <sodium.h>

#include <vector>

#include "courtpiece/rules/round.h"
#include "gtest/gtest.h"

namespace courtpiece::rules {
namespace {

Seed SeedOf(uint64_t n) {
  Seed s{};
  for (int i = 0; i < 8; ++i) s[i] = static_cast<uint8_t>(n >> (8 * i));
  return s;
}

std::array<CardSet, 4> Masks(const Deal& d) {
  std::array<CardSet, 4> m{};
  for (int s = 0; s < 4; ++s) {
    for (Card c : d.hands[s]) m[s].Add(c);
  }
  return m;
}

TEST(Deal, StreamIsRandombytesBufDeterministic) {
  ASSERT_GE(sodium_init(), 0);
  Seed seed = SeedOf(12345);
  seed[31] = 0xAB;
  std::vector<uint8_t> want(70000);
  randombytes_buf_deterministic(want.data(), want.size(), seed.data());
  SeedStream s(seed);
  for (size_t i = 0; i < want.size(); ++i) ASSERT_EQ(s.NextByte(), want[i]) << i;
}

TEST(Deal, StreamResumesAtAnyOffset) {
  ASSERT_GE(sodium_init(), 0);
  Seed seed = SeedOf(77);
  std::vector<uint8_t> want(2048);
  randombytes_buf_deterministic(want.data(), want.size(), seed.data());
  for (uint64_t offset : {0, 1, 63, 64, 200, 255, 256, 257, 1000, 1024}) {
    SeedStream s(seed, offset);
    for (uint64_t i = offset; i < 2048; ++i) ASSERT_EQ(s.NextByte(), want[i]) << offset;
  }
}

TEST(Deal, UniformRejectsTheBiasedTail) {
  // n = 52: bytes 208..255 are rejected.
  Seed seed = SeedOf(9);
  std::vector<uint8_t> bytes(4096);
  randombytes_buf_deterministic(bytes.data(), bytes.size(), seed.data());
  SeedStream s(seed);
  size_t pos = 0;
  for (int k = 0; k < 500; ++k) {
    while (bytes[pos] >= 208) ++pos;
    ASSERT_EQ(s.Uniform(52), bytes[pos] % 52);
    ++pos;
  }
  EXPECT_EQ(s.offset(), pos);
}

TEST(Deal, CommitmentIsSha256OfSeed) {
  Seed zero{};
  auto c = Commitment(zero);
  EXPECT_EQ(HexEncode(c.data(), c.size()),
            "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925");
}

TEST(Deal, ParseSeed) {
  EXPECT_FALSE(ParseSeed("00").has_value());
  EXPECT_FALSE(ParseSeed(std::string(63, '0') + "g").has_value());
  auto s = ParseSeed(std::string(62, '0') + "Ff");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ((*s)[31], 0xFF);
}

TEST(Deal, DeterministicFullDeckAndPacketsFromTheCaller) {
  for (uint64_t n = 0; n < 200; ++n) {
    Deal a = DealFromSeed(SeedOf(n), static_cast<int>(n % 4), static_cast<int>(n % 5) - 1, true);
    Deal b = DealFromSeed(SeedOf(n), static_cast<int>(n % 4), static_cast<int>(n % 5) - 1, true);
    EXPECT_EQ(a.hands, b.hands);
    CardSet all;
    for (auto& h : a.hands) {
      for (Card c : h) {
        EXPECT_FALSE(all.Has(c));
        all.Add(c);
      }
    }
    EXPECT_EQ(all, CardSet::Deck());
  }
  // The caller gets the first packet of the shuffled deck; another caller rotates seats.
  Deal c0 = DealFromSeed(SeedOf(7), 0, -1, false);
  Deal c2 = DealFromSeed(SeedOf(7), 2, -1, false);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(c0.hands[s], c2.hands[(s + 2) % 4]);
}

TEST(Deal, FirstPacketsDoNotDependOnTrump) {
  for (uint64_t n = 0; n < 300; ++n) {
    Deal none = DealFromSeed(SeedOf(n), 1, -1, true);
    for (int trump = 0; trump < 4; ++trump) {
      Deal d = DealFromSeed(SeedOf(n), 1, trump, true);
      for (int s = 0; s < 4; ++s) {
        for (int i = 0; i < 5; ++i) ASSERT_EQ(d.hands[s][i], none.hands[s][i]);
      }
    }
  }
}

// A team's ten first-packet cards that make every deal one-sided (all honours, all four
// aces or all trumps; teams are seats {0, 2} and {1, 3}): the engine tries no reshuffle
// then (docs/rules-engine.md, step 6).
bool FirstPacketsHopeless(const Deal& d, int trump) {
  for (int team = 0; team < 2; ++team) {
    int honors = 0, aces = 0, trumps = 0;
    for (int s : {team, team + 2}) {
      for (int i = 0; i < 5; ++i) {
        const Card c = d.hands[s][i];
        honors += RankOf(c) >= 9;
        aces += RankOf(c) == kAceRank;
        trumps += trump >= 0 && SuitOf(c) == trump;
      }
    }
    if (honors >= kOneSidedHonors || aces == 4 || trumps >= 10) return true;
  }
  return false;
}

// The same seed without fairness deals the first shuffle as it is (the 5-in-7 draw is
// consumed either way): a fair deal is that deal unless the check applies and it is
// one-sided, and then it is reshuffled until it is not (or the cap is reached).
TEST(Deal, CheckAppliesFiveTimesInSevenAndFixesOneSidedDeals) {
  int applies = 0, fixed = 0;
  const int n = 7000;
  for (int i = 0; i < n; ++i) {
    const int caller = i % 4, trump = i % 4;
    Deal d = DealFromSeed(SeedOf(i), caller, trump, true);
    Deal off = DealFromSeed(SeedOf(i), caller, trump, false);
    EXPECT_FALSE(off.check_applies);
    EXPECT_EQ(off.reshuffles, 0);
    applies += d.check_applies;
    const bool one_sided = IsOneSided(Masks(off), trump);
    if (!d.check_applies || !one_sided || FirstPacketsHopeless(off, trump)) {
      EXPECT_EQ(d.reshuffles, 0) << i;
      EXPECT_EQ(d.hands, off.hands) << i;
      continue;
    }
    ASSERT_GT(d.reshuffles, 0) << i;
    for (int s = 0; s < 4; ++s) {  // the first packets stay
      for (int k = 0; k < 5; ++k) EXPECT_EQ(d.hands[s][k], off.hands[s][k]) << i;
    }
    if (d.reshuffles < kMaxReshuffles) {
      EXPECT_FALSE(IsOneSided(Masks(d), trump)) << i;
    }
    ++fixed;
  }
  EXPECT_NEAR(applies / double(n), 5.0 / 7.0, 0.02);
  // A random deal is one-sided about 53% of the time with 10 honours (83% with 9: an
  // independent simulation of the section 3 conditions), so about 5/7 * 0.53 = 38% of the
  // rounds are reshuffled; the window excludes the old threshold's 59%.
  EXPECT_GT(fixed, n * 33 / 100);
  EXPECT_LT(fixed, n * 43 / 100);
}

TEST(Deal, OneSidedConditions) {
  auto hands_of = [](std::vector<std::string> text) {
    std::array<CardSet, 4> h{};
    for (int s = 0; s < 4; ++s) {
      for (size_t i = 0; i + 1 < text[s].size(); i += 3) {
        h[s].Add(*ParseCard(text[s].substr(i, 2)));
      }
    }
    return h;
  };
  // Balanced: 8 honours each side, two aces each, no 7-card suit.
  auto fair = hands_of(
      {"AS KS QC JC 2D 3D 4D 5D 6H 7H 8H 9H TS", "AH KH QS JS 2C 3C 4C 5C 6S 7S 8S 9S TH",
       "AD KD QH JH 2S 3S 4S 5S 6C 7C 8C 9C TD", "AC KC QD JD 2H 3H 4H 5H 6D 7D 8D 9D TC"});
  EXPECT_FALSE(IsOneSided(fair, -1));
  EXPECT_FALSE(IsOneSided(fair, 3));
  auto seven = hands_of(
      {"AS KS QC JC 2D 3D 4D 5D 6D 7D 8D 9H TH", "AH KH QS JS 2C 3C 4C 5C 6S 7S 8S 9S TS",
       "AD KD QH JH 2S 3S 4S 5S 6C 7C 8C 9C TC", "AC KC QD JD 2H 3H 4H 5H 6H 7H 8H 9D TD"});
  EXPECT_TRUE(IsOneSided(seven, -1));  // seat 0 holds seven diamonds
  auto nine = hands_of(
      {"AS KS QC JC JD 3D 4D 5D 6H 7H 8H 9H TS", "AH KH QS JS 2C 3C 4C 5C 6S 7S 8S 9S TH",
       "AD KD QH JH 2S 3S 4S 5S 6C 7C 8C 9C TD", "AC KC QD 2D 2H 3H 4H 5H 6D 7D 8D 9D TC"});
  // Team 0 holds 9 of the 16 honours (AS KS QC JC JD + AD KD QH JH): fair since the
  // amendment (10 or more is one-sided); no other condition holds.
  EXPECT_FALSE(IsOneSided(nine, -1));
  for (int trump = 0; trump < 4; ++trump) EXPECT_FALSE(IsOneSided(nine, trump));
  // The same with QD and 3D swapped between seats 3 and 0: team 0 holds 10.
  auto ten = hands_of(
      {"AS KS QC JC JD QD 4D 5D 6H 7H 8H 9H TS", "AH KH QS JS 2C 3C 4C 5C 6S 7S 8S 9S TH",
       "AD KD QH JH 2S 3S 4S 5S 6C 7C 8C 9C TD", "AC KC 3D 2D 2H 3H 4H 5H 6D 7D 8D 9D TC"});
  EXPECT_TRUE(IsOneSided(ten, -1));
  // Team 1 (seats 1 and 3) holding the ten is one-sided as well.
  auto ten_team1 = hands_of(
      {"AH KH QS JS 2C 3C 4C 5C 6S 7S 8S 9S TH", "AS KS QC JC JD QD 4D 5D 6H 7H 8H 9H TS",
       "AC KC 3D 2D 2H 3H 4H 5H 6D 7D 8D 9D TC", "AD KD QH JH 2S 3S 4S 5S 6C 7C 8C 9C TD"});
  EXPECT_TRUE(IsOneSided(ten_team1, -1));
  auto aces = hands_of(
      {"AS AC QC JC 2D 3D 4D 5D 6H 7H 8H 9S TS", "KS KH QS JS 2C 3C 4C 5C 6S 7S 8S 9H TH",
       "AD AH QH JH 2S 3S 4S 5S 6C 7C 8C 9D TD", "KC KD QD JD 2H 3H 4H 5H 6D 7D 8D 9C TC"});
  EXPECT_TRUE(IsOneSided(aces, -1));  // 8-8 honours but team 0 holds all four aces
  // Ten trumps: team 1 holds ten hearts (five each), otherwise balanced.
  auto trumps = hands_of(
      {"4H 3H 2H QS JS 5S 6S 7S AC KC 6D 7D 8D", "AH QH TH 8H 6H AS KS 2S 3S 4S 2C 3C 4C",
       "8S 9S TS JC 7C 8C 9C TC AD KD QD 9D TD", "KH JH 9H 7H 5H QC JD 2D 3D 4D 5D 5C 6C"});
  EXPECT_FALSE(IsOneSided(trumps, -1));
  EXPECT_FALSE(IsOneSided(trumps, 3));
  EXPECT_TRUE(IsOneSided(trumps, 2));
}

TEST(Deal, SeededRoundDealsInTwoPhases) {
  Rules rules;
  rules.game = GameType::kPiles;
  rules.target = 10;
  Seed seed = SeedOf(42);
  Round r = Round::FromSeed(rules, 3, seed);
  for (int s = 0; s < 4; ++s) EXPECT_EQ(r.hand(s).size(), 5);
  Deal d = DealFromSeed(seed, 0, 2, true);
  ASSERT_TRUE(r.Apply(Move::Call(0, 2)).ok());
  for (int s = 0; s < 4; ++s) {
    CardSet want;
    for (Card c : d.hands[s]) want.Add(c);
    EXPECT_EQ(r.hand(s), want);
  }
}

}  // namespace
}  // namespace courtpiece::rules
