// Fair deals from a 256-bit round seed (RULES.md section 3; docs/rules-engine.md gives the
// exact derivation so anyone can re-derive a deal).
//
// The only randomness is the ChaCha20 stream of libsodium's
// randombytes_buf_deterministic(seed). The commitment published before a round is
// SHA-256(seed).
// Thread-safety: pure functions (libsodium must be initialised; the functions do it).
#ifndef COURTPIECE_RULES_DEAL_H_
#define COURTPIECE_RULES_DEAL_H_

#include <array>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "courtpiece/rules/cards.h"

namespace courtpiece::rules {

using Seed = std::array<uint8_t, 32>;

// Parses 64 hex digits.
std::optional<Seed> ParseSeed(absl::string_view hex);
std::string HexEncode(const uint8_t* data, size_t size);
// SHA-256 of the 32 seed bytes.
std::array<uint8_t, 32> Commitment(const Seed& seed);

// The cards of one deal. hands[seat][0..4] is the seat's first packet, [5..8] the second,
// [9..12] the third.
struct Deal {
  std::array<std::array<Card, 13>, 4> hands{};
  bool check_applies = false;  // the 5-in-7 draw said the fairness check applies
  int reshuffles = 0;          // reshuffles of the cards after the first packets (0..1000)
};

inline constexpr int kMaxReshuffles = 1000;
// RULES.md section 3: a team holding this many or more of the 16 aces, kings, queens and
// jacks makes a deal one-sided (10 since the amendment; it was 9).
inline constexpr int kOneSidedHonors = 10;

// Reads the seed's stream (exposed for tests and docs): byte `offset` of
// randombytes_buf_deterministic(seed).
class SeedStream {
 public:
  SeedStream() = default;  // the all-zero seed's stream
  explicit SeedStream(const Seed& seed, uint64_t offset = 0);
  uint8_t NextByte();
  // The next `n` bytes.
  void Read(uint8_t* out, size_t n);
  // Uniform integer in [0, n), n in 1..256, by rejection sampling on single bytes.
  int Uniform(int n);
  // Fisher-Yates: for i = n - 1 down to 1, swaps cards[i] with cards[Uniform(i + 1)]
  // (n in 1..52). With `owners`, also ORs each card's bit into hands[owners[i]] as its
  // position i becomes final (so the dealt hands come out of the same pass).
  void ShuffleCards(Card* cards, int n, const uint8_t* owners = nullptr, uint64_t* hands = nullptr);
  uint64_t offset() const { return offset_; }
  // Restarts as SeedStream(seed) would, in place (no buffer copy).
  void Reset(const Seed& seed) {
    seed_ = seed;
    offset_ = 0;
    pos_ = kChunkBytes;
  }
  // Bytes generated per libsodium call (four ChaCha20 blocks).
  static constexpr int kChunkBytes = 256;

 private:
  void Refill();
  Seed seed_{};
  uint64_t offset_ = 0;  // bytes consumed
  // Valid from pos_ to the end; never read before a Refill, so not initialised: zeroing
  // 256 bytes for every round (and every Round) was a visible part of a seeded round's cost.
  std::array<uint8_t, kChunkBytes> buf_;
  int pos_ = kChunkBytes;  // empty: the first read generates
};

// Steps 1-4 of the derivation (check draw and shuffle), and steps 5-6 (deal, fairness
// reshuffles) resumed from them: DealFromSeed = DealFromShuffle(ShuffleFromSeed(..)).
// Rounds use the split to shuffle once although they deal in two phases.
// The stream is kept where the shuffle left it, with its buffered bytes: the reshuffles
// resume it without generating that ChaCha20 block again.
struct Shuffle {
  std::array<Card, 52> deck{};
  bool check_applies = false;
  // The cards of deck[5k..5k+4] (first[k]) and of the rest that Assign gives the k-th seat
  // from the caller (rest[k]), made in the same pass as the shuffle.
  std::array<uint64_t, 4> first{};
  std::array<uint64_t, 4> rest_cards{};
  SeedStream rest;  // the seed's stream after the shuffle's draws
};
Shuffle ShuffleFromSeed(const Seed& seed, bool fairness);
// The same, into *out (a Round keeps its shuffle: no copy of the stream's buffer).
void ShuffleFromSeedInto(const Seed& seed, bool fairness, Shuffle* out);
Deal DealFromShuffle(const Shuffle& shuffle, int caller, int trump);
// Steps 5-6 as card sets: hands[k] is the hand of the k-th seat from the caller (first
// packet included), the same cards DealFromShuffle deals that seat.
struct DealSets {
  std::array<uint64_t, 4> hands{};
  bool check_applies = false;
  int reshuffles = 0;
};
DealSets DealSetsFromShuffle(const Shuffle& shuffle, int trump);

// Deals from `seed` with `caller` receiving the first packet. `trump` (0..3) is the named
// suit for the 10-of-13 check, or -1 when there is none (kaat) or it is not known yet (the
// first packets do not depend on it). `fairness` is the deal_fairness option.
Deal DealFromSeed(const Seed& seed, int caller, int trump, bool fairness);

// True when the deal is one-sided (RULES.md section 3); trump -1 skips the trump test.
bool IsOneSided(const std::array<CardSet, 4>& hands, int trump);

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_DEAL_H_
