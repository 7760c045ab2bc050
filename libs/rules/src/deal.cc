#include "courtpiece/rules/deal.h"

#include <sodium.h>

#include <cassert>
#include <numeric>

#include "absl/strings/string_view.h"

namespace courtpiece::rules {
namespace {

// randombytes_buf_deterministic() is crypto_stream_chacha20_ietf with this nonce and the
// seed as key; reading the keystream at a block counter gives the same bytes.
constexpr unsigned char kNonce[crypto_stream_chacha20_ietf_NONCEBYTES] = {
    'L', 'i', 'b', 's', 'o', 'd', 'i', 'u', 'm', 'D', 'R', 'G'};

constexpr uint64_t HonorsMask() {
  uint64_t m = 0;
  for (int s = 0; s < 4; ++s) {
    for (int r = 9; r <= 12; ++r) m |= uint64_t{1} << MakeCard(s, r);
  }
  return m;
}
constexpr uint64_t AcesMask() {
  uint64_t m = 0;
  for (int s = 0; s < 4; ++s) m |= uint64_t{1} << MakeCard(s, kAceRank);
  return m;
}

void Assign(const std::array<Card, 52>& deck, int caller, Deal* d) {
  for (int k = 0; k < 4; ++k) {
    auto& h = d->hands[(caller + k) % 4];
    for (int i = 0; i < 5; ++i) h[i] = deck[5 * k + i];
    for (int i = 0; i < 4; ++i) h[5 + i] = deck[20 + 4 * k + i];
    for (int i = 0; i < 4; ++i) h[9 + i] = deck[36 + 4 * k + i];
  }
}

std::array<CardSet, 4> Masks(const Deal& d) {
  std::array<CardSet, 4> m{};
  for (int s = 0; s < 4; ++s) {
    for (Card c : d.hands[s]) m[s].Add(c);
  }
  return m;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void EnsureSodium() {
  static const int kInit = sodium_init();
  assert(kInit >= 0);
  (void)kInit;
}

// True when the first packets alone make every deal one-sided (a team's ten first cards
// hold 9+ honours, all four aces or ten trumps): reshuffling the rest cannot help, so none
// is tried (docs/rules-engine.md).
bool FirstPacketsOneSided(const std::array<Card, 52>& deck, int caller, int trump) {
  std::array<CardSet, 2> team{};
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 5; ++i) team[TeamOf((caller + k) % 4)].Add(deck[5 * k + i]);
  }
  for (const CardSet& t : team) {
    if ((t & CardSet(HonorsMask())).size() >= 9 || (t & CardSet(AcesMask())).size() == 4) {
      return true;
    }
    if (trump >= 0 && t.InSuit(trump).size() >= 10) return true;
  }
  return false;
}

}  // namespace

std::optional<Seed> ParseSeed(absl::string_view hex) {
  if (hex.size() != 64) return std::nullopt;
  Seed s{};
  for (size_t i = 0; i < 32; ++i) {
    int hi = HexValue(hex[2 * i]);
    int lo = HexValue(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    s[i] = static_cast<uint8_t>(hi * 16 + lo);
  }
  return s;
}

std::string HexEncode(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out += kDigits[data[i] >> 4];
    out += kDigits[data[i] & 15];
  }
  return out;
}

std::array<uint8_t, 32> Commitment(const Seed& seed) {
  EnsureSodium();
  std::array<uint8_t, 32> out{};
  crypto_hash_sha256(out.data(), seed.data(), seed.size());
  return out;
}

SeedStream::SeedStream(const Seed& seed, uint64_t offset) : seed_(seed), offset_(offset) {
  if (offset % buf_.size() != 0) {  // resume mid-buffer: fill from the buffer's start
    offset_ = offset - offset % buf_.size();
    Refill();
    pos_ = static_cast<int>(offset % buf_.size());
    offset_ = offset;
  }
}

void SeedStream::Refill() {
  EnsureSodium();
  std::array<uint8_t, 256> zeros{};
  crypto_stream_chacha20_ietf_xor_ic(buf_.data(), zeros.data(), buf_.size(), kNonce,
                                     static_cast<uint32_t>(offset_ / 64), seed_.data());
  pos_ = 0;
}

uint8_t SeedStream::NextByte() {
  if (pos_ == static_cast<int>(buf_.size())) Refill();
  ++offset_;
  return buf_[pos_++];
}

int SeedStream::Uniform(int n) {
  assert(n >= 1 && n <= 256);
  const int limit = 256 - (256 % n);
  for (;;) {
    int b = NextByte();
    if (b < limit) return b % n;
  }
}

bool IsOneSided(const std::array<CardSet, 4>& hands, int trump) {
  const CardSet honors(HonorsMask());
  const CardSet aces(AcesMask());
  for (int team = 0; team < 2; ++team) {
    CardSet t = hands[team] | hands[team + 2];
    if ((t & honors).size() >= 9) return true;
    if ((t & aces).size() == 4) return true;
    if (trump >= 0 && t.InSuit(trump).size() >= 10) return true;
  }
  for (int s = 0; s < 4; ++s) {
    for (int suit = 0; suit < 4; ++suit) {
      if (hands[s].InSuit(suit).size() >= 7) return true;
    }
  }
  return false;
}

Shuffle ShuffleFromSeed(const Seed& seed, bool fairness) {
  EnsureSodium();
  SeedStream stream(seed);
  Shuffle sh;
  const int draw = stream.Uniform(7);
  sh.check_applies = fairness && draw < 5;
  std::iota(sh.deck.begin(), sh.deck.end(), Card{0});
  for (int i = 51; i >= 1; --i) std::swap(sh.deck[i], sh.deck[stream.Uniform(i + 1)]);
  sh.stream_offset = stream.offset();
  return sh;
}

Deal DealFromShuffle(const Seed& seed, const Shuffle& shuffle, int caller, int trump) {
  Deal d;
  d.check_applies = shuffle.check_applies;
  std::array<Card, 52> deck = shuffle.deck;
  Assign(deck, caller, &d);
  if (!d.check_applies || FirstPacketsOneSided(deck, caller, trump)) return d;
  SeedStream stream(seed, shuffle.stream_offset);
  while (d.reshuffles < kMaxReshuffles && IsOneSided(Masks(d), trump)) {
    for (int i = 31; i >= 1; --i) std::swap(deck[20 + i], deck[20 + stream.Uniform(i + 1)]);
    Assign(deck, caller, &d);
    ++d.reshuffles;
  }
  return d;
}

Deal DealFromSeed(const Seed& seed, int caller, int trump, bool fairness) {
  return DealFromShuffle(seed, ShuffleFromSeed(seed, fairness), caller, trump);
}

}  // namespace courtpiece::rules
