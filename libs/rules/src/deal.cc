#include "courtpiece/rules/deal.h"

#include <sodium.h>

#include <algorithm>
#include <cassert>
#include <cstring>
#include <numeric>

#include "absl/strings/string_view.h"
#include "courtpiece/common/check.h"

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

// Who, counted from the caller, receives deck[20 + i]: the second packets (4 each) are
// deck[20..35], the third deck[36..51] (Assign).
constexpr std::array<uint8_t, 32> kRestOwner = [] {
  std::array<uint8_t, 32> owner{};
  for (int i = 0; i < 32; ++i) owner[i] = static_cast<uint8_t>((i % 16) / 4);
  return owner;
}();
// For the whole deck, into eight sets: 0..3 the first packet of the k-th seat from the
// caller (deck[5k..5k+4]), 4..7 the rest of its hand (kRestOwner + 4).
constexpr std::array<uint8_t, 52> kDeckOwner = [] {
  std::array<uint8_t, 52> owner{};
  for (int i = 0; i < 20; ++i) owner[i] = static_cast<uint8_t>(i / 5);
  for (int i = 0; i < 32; ++i) owner[20 + i] = static_cast<uint8_t>(4 + kRestOwner[i]);
  return owner;
}();

constexpr unsigned char kZeros[SeedStream::kChunkBytes] = {};  // xor input: the keystream itself

// Cards in a 13-bit suit field.
struct SuitCountTable {
  uint8_t n[1 << 13] = {};
  constexpr SuitCountTable() {
    for (int v = 1; v < (1 << 13); ++v) n[v] = static_cast<uint8_t>(n[v >> 1] + (v & 1));
  }
};
constexpr SuitCountTable kSuitCount{};

// Uniform(n) without divisions: the rejection limit 256 - 256 % n per n, and b % n through
// a 16-bit reciprocal (exact for every b < 256 and n <= 256: checked at compile time).
struct UniformTables {
  uint16_t limit[257] = {};
  uint32_t recip[257] = {};
  constexpr UniformTables() {
    for (int n = 1; n <= 256; ++n) {
      limit[n] = static_cast<uint16_t>(256 - 256 % n);
      recip[n] = static_cast<uint32_t>(65536 / n + 1);
    }
  }
};
constexpr UniformTables kUniform{};
constexpr int FastMod(int b, int n) {
  return b - n * static_cast<int>((static_cast<uint32_t>(b) * kUniform.recip[n]) >> 16);
}
constexpr bool CheckFastMod() {
  for (int n = 1; n <= 256; ++n) {
    for (int b = 0; b < 256; ++b) {
      if (FastMod(b, n) != b % n) return false;
    }
  }
  return true;
}
static_assert(CheckFastMod());

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void EnsureSodium() {
  static const int kInit = sodium_init();
  COURTPIECE_CHECK(kInit >= 0, "libsodium failed to initialise");
}

// True when the first packets alone make every deal one-sided (a team's ten first cards
// are all honours, hold all four aces or are all trumps): reshuffling the rest cannot
// help, so none is tried (docs/rules-engine.md). first[k]: the k-th seat from the caller's.
bool FirstPacketsOneSided(const std::array<uint64_t, 4>& first, int trump) {
  for (int k = 0; k < 2; ++k) {
    const CardSet t(first[k] | first[k + 2]);  // seats k and k + 2 from the caller: a team
    if ((t & CardSet(HonorsMask())).size() >= kOneSidedHonors ||
        (t & CardSet(AcesMask())).size() == 4) {
      return true;
    }
    if (trump >= 0 && t.InSuit(trump).size() >= 10) return true;
  }
  return false;
}

std::array<CardSet, 4> Sets(const std::array<uint64_t, 4>& bits) {
  return {CardSet(bits[0]), CardSet(bits[1]), CardSet(bits[2]), CardSet(bits[3])};
}

// Steps 5-6 on a copy of the shuffle: the final deck in *deck, the hands by k in the result.
// IsOneSided is given the hands by k (from the caller) rather than by seat: seats k and
// k + 2 from the caller are partners, as seats k and k + 2 are, and the other tests are per
// hand, so the answer is the same.
DealSets DealCore(const Shuffle& shuffle, int trump, std::array<Card, 52>* deck) {
  DealSets d;
  d.check_applies = shuffle.check_applies;
  for (int k = 0; k < 4; ++k) d.hands[k] = shuffle.first[k] | shuffle.rest_cards[k];
  if (!d.check_applies || FirstPacketsOneSided(shuffle.first, trump) ||
      !IsOneSided(Sets(d.hands), trump)) {
    return d;
  }
  SeedStream stream = shuffle.rest;
  do {
    // Fisher-Yates over deck[20..51]; position 20 + i is final once i is passed, so the
    // hands are built on the way instead of in a second pass.
    d.hands = shuffle.first;
    stream.ShuffleCards(deck->data() + 20, 32, kRestOwner.data(), d.hands.data());
    ++d.reshuffles;
  } while (d.reshuffles < kMaxReshuffles && IsOneSided(Sets(d.hands), trump));
  return d;
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

// The stream is read 256 bytes (four ChaCha20 blocks, block counter = offset / 64) at a
// time: libsodium's SIMD code makes four blocks per call barely dearer than one (measured:
// 64-byte reads run fewer instructions but more cycles). A stream opened at an offset
// regenerates the chunk it starts in; the second deal phase instead resumes the copy kept
// in Shuffle, buffer and all.
constexpr int kBlock = SeedStream::kChunkBytes;

SeedStream::SeedStream(const Seed& seed, uint64_t offset) : seed_(seed), offset_(offset) {
  static_assert(kBlock <= std::tuple_size_v<decltype(buf_)>);
  if (offset % kBlock != 0) {  // resume mid-block: fill from the block's start
    offset_ = offset - offset % kBlock;
    Refill();
    pos_ = static_cast<int>(offset % kBlock);
    offset_ = offset;
  }
}

void SeedStream::Refill() {
  EnsureSodium();
  crypto_stream_chacha20_ietf_xor_ic(buf_.data(), kZeros, kBlock, kNonce,
                                     static_cast<uint32_t>(offset_ / 64), seed_.data());
  pos_ = 0;
}

uint8_t SeedStream::NextByte() {
  if (pos_ >= kBlock) [[unlikely]]
    Refill();
  ++offset_;
  return buf_[pos_++];
}

void SeedStream::Read(uint8_t* out, size_t n) {
  while (n > 0) {
    if (pos_ >= kBlock) Refill();
    const size_t k = std::min(n, static_cast<size_t>(kBlock - pos_));
    std::memcpy(out, buf_.data() + pos_, k);
    pos_ += static_cast<int>(k);
    offset_ += k;
    out += k;
    n -= k;
  }
}

// The position is kept in a local: the card stores (uint8_t) may alias the stream's own
// fields, which would otherwise be reloaded on every draw. The bytes read are exactly
// those of Uniform(i + 1) called in turn.
void SeedStream::ShuffleCards(Card* cards, int n, const uint8_t* owners, uint64_t* hands) {
  COURTPIECE_CHECK(n >= 1 && n <= kNumCards, "a shuffle is of 1 to 52 cards");
  uint64_t base = offset_ - static_cast<uint64_t>(pos_);  // stream offset of buf_[0]
  int pos = pos_;
  for (int i = n - 1; i >= 1; --i) {
    const int m = i + 1;
    const int limit = kUniform.limit[m];
    int b;
    do {
      if (pos >= kBlock) [[unlikely]] {
        offset_ = base + kBlock;
        Refill();
        base = offset_;
        pos = 0;
      }
      b = buf_[pos++];
    } while (b >= limit);
    // The swap through locals: cards[i] ends as `drawn` also when j == i, and the hand
    // takes it from the register (after std::swap the compiler reloaded cards[i], as the
    // store to cards[j] may alias it: a store-to-load stall in every draw).
    Card* const pj = cards + FastMod(b, m);
    const Card kept = cards[i], drawn = *pj;
    *pj = kept;
    cards[i] = drawn;
    if (owners != nullptr) hands[owners[i]] |= uint64_t{1} << drawn;
  }
  if (owners != nullptr) hands[owners[0]] |= uint64_t{1} << cards[0];
  pos_ = pos;
  offset_ = base + static_cast<uint64_t>(pos);
}

int SeedStream::Uniform(int n) {
  assert(n >= 1 && n <= 256);  // hot path: checked in debug builds and the sanitizer pass
  const int limit = kUniform.limit[n];
  for (;;) {
    if (pos_ >= kBlock) [[unlikely]]
      Refill();
    ++offset_;
    const int b = buf_[pos_++];
    if (b < limit) [[likely]]
      return FastMod(b, n);
  }
}

bool IsOneSided(const std::array<CardSet, 4>& hands, int trump) {
  // Counts per 13-bit suit field from a table (the fairness loop calls this per reshuffle).
  auto in_suit = [](uint64_t bits, int suit) {
    return kSuitCount.n[(bits >> (13 * suit)) & 0x1FFF];
  };
  constexpr uint64_t kHonors = HonorsMask(), kAces = AcesMask();
  for (int team = 0; team < 2; ++team) {
    const uint64_t t = (hands[team] | hands[team + 2]).bits();
    const uint64_t h = t & kHonors;
    if (in_suit(h, 0) + in_suit(h, 1) + in_suit(h, 2) + in_suit(h, 3) >= kOneSidedHonors) {
      return true;
    }
    if ((t & kAces) == kAces) return true;
    if (trump >= 0 && in_suit(t, trump) >= 10) return true;
  }
  for (int s = 0; s < 4; ++s) {
    const uint64_t b = hands[s].bits();
    for (int suit = 0; suit < 4; ++suit) {
      if (in_suit(b, suit) >= 7) return true;
    }
  }
  return false;
}

void ShuffleFromSeedInto(const Seed& seed, bool fairness, Shuffle* out) {
  EnsureSodium();
  SeedStream& stream = out->rest;
  stream.Reset(seed);
  const int draw = stream.Uniform(7);
  out->check_applies = fairness && draw < 5;
  std::iota(out->deck.begin(), out->deck.end(), Card{0});
  std::array<uint64_t, 8> sets{};
  stream.ShuffleCards(out->deck.data(), kNumCards, kDeckOwner.data(), sets.data());
  for (int k = 0; k < 4; ++k) {
    out->first[k] = sets[k];
    out->rest_cards[k] = sets[4 + k];
  }
}

Shuffle ShuffleFromSeed(const Seed& seed, bool fairness) {
  Shuffle sh;
  ShuffleFromSeedInto(seed, fairness, &sh);
  return sh;
}

DealSets DealSetsFromShuffle(const Shuffle& shuffle, int trump) {
  std::array<Card, 52> deck = shuffle.deck;
  return DealCore(shuffle, trump, &deck);
}

Deal DealFromShuffle(const Shuffle& shuffle, int caller, int trump) {
  std::array<Card, 52> deck = shuffle.deck;
  const DealSets sets = DealCore(shuffle, trump, &deck);
  Deal d;
  d.check_applies = sets.check_applies;
  d.reshuffles = sets.reshuffles;
  Assign(deck, caller, &d);
  return d;
}

Deal DealFromSeed(const Seed& seed, int caller, int trump, bool fairness) {
  return DealFromShuffle(ShuffleFromSeed(seed, fairness), caller, trump);
}

}  // namespace courtpiece::rules
