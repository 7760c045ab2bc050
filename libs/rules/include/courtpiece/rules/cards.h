// Cards and card sets of Court Piece.
//
// A card is an index 0..51: suit * 13 + rank, with suits C D H S (0..3) and ranks 2..A
// (0..12). A CardSet is a 64-bit mask with bit (suit * 13 + rank). Text form: rank then
// suit, e.g. "AS", "TD", "2C" (upper case only).
// Thread-safety: value types, no shared state.
#ifndef COURTPIECE_RULES_CARDS_H_
#define COURTPIECE_RULES_CARDS_H_

#include <bit>
#if defined(__BMI2__)
#include <immintrin.h>
#endif
#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace courtpiece::rules {

inline constexpr int kNumSuits = 4;
inline constexpr int kNumRanks = 13;
inline constexpr int kNumCards = 52;
inline constexpr int kNumSeats = 4;
inline constexpr int kAceRank = 12;
// Card value used in views for a card the seat may not see (written "??").
inline constexpr uint8_t kHiddenCard = 0xFF;

using Card = uint8_t;  // 0..51

// (c * 79) >> 10 == c / 13 for every card 0..51 (checked below): no division in the hot path.
constexpr int SuitOf(Card c) { return (static_cast<unsigned>(c) * 79u) >> 10; }
constexpr int RankOf(Card c) { return c - kNumRanks * SuitOf(c); }
constexpr bool CheckSuitOf() {
  for (int c = 0; c < kNumCards; ++c) {
    if (SuitOf(static_cast<Card>(c)) != c / 13) return false;
  }
  return true;
}
static_assert(CheckSuitOf());
constexpr Card MakeCard(int suit, int rank) { return static_cast<Card>(suit * kNumRanks + rank); }
constexpr int TeamOf(int seat) { return seat & 1; }

// Parses "AS"; nullopt on bad text.
std::optional<Card> ParseCard(absl::string_view text);
// Parses "C", "D", "H" or "S".
std::optional<int> ParseSuit(absl::string_view text);
// "AS" for a card, "??" for kHiddenCard.
std::string CardName(Card c);
std::string SuitName(int suit);

namespace internal {
// kSelectInByteTable[v][k]: position of the k-th set bit of byte v.
struct SelectInByteTable {
  uint8_t t[256][8];
  constexpr SelectInByteTable() : t{} {
    for (int v = 0; v < 256; ++v) {
      int k = 0;
      for (int bit = 0; bit < 8; ++bit) {
        if (v & (1 << bit)) t[v][k++] = static_cast<uint8_t>(bit);
      }
    }
  }
};
inline constexpr SelectInByteTable kSelectInByteTable{};
}  // namespace internal

class CardSet {
 public:
  constexpr CardSet() = default;
  constexpr explicit CardSet(uint64_t bits) : bits_(bits) {}
  static constexpr CardSet Of(Card c) { return CardSet(uint64_t{1} << c); }
  static constexpr CardSet Suit(int suit) { return CardSet(uint64_t{0x1FFF} << (suit * 13)); }
  static constexpr CardSet Deck() { return CardSet((uint64_t{1} << 52) - 1); }

  constexpr uint64_t bits() const { return bits_; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr int size() const {
#if defined(__POPCNT__)
    return std::popcount(bits_);
#else  // without -mpopcnt std::popcount is a libgcc call; SWAR is faster
    uint64_t x = bits_ - ((bits_ >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
#endif
  }
  constexpr bool Has(Card c) const { return (bits_ >> c) & 1; }
  constexpr void Add(Card c) { bits_ |= uint64_t{1} << c; }
  constexpr void Remove(Card c) { bits_ &= ~(uint64_t{1} << c); }
  constexpr CardSet InSuit(int suit) const { return CardSet(bits_ & Suit(suit).bits_); }
  constexpr bool HasSuit(int suit) const { return !InSuit(suit).empty(); }
  // Lowest card; the set must not be empty.
  constexpr Card First() const { return static_cast<Card>(std::countr_zero(bits_)); }
  // The n-th lowest card (0-based); n < size(). Branch-free (random playouts call it on
  // every move): per-byte counts and a byte-select table, or pdep with BMI2.
  Card Nth(int n) const {
#if defined(__BMI2__)
    return static_cast<Card>(std::countr_zero(_pdep_u64(uint64_t{1} << n, bits_)));
#else
    constexpr uint64_t kOnes = 0x0101010101010101ULL;
    uint64_t b = bits_ - ((bits_ >> 1) & 0x5555555555555555ULL);
    b = (b & 0x3333333333333333ULL) + ((b >> 2) & 0x3333333333333333ULL);
    b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    const uint64_t prefix = b * kOnes;  // byte i: cards in bytes 0..i
    const uint64_t above = (prefix + kOnes * static_cast<uint64_t>(127 - n)) & (kOnes << 7);
    const int byte = std::countr_zero(above) >> 3;
    const int before = static_cast<int>(((prefix << 8) >> (8 * byte)) & 0xFF);
    const int in_byte = static_cast<int>((bits_ >> (8 * byte)) & 0xFF);
    return static_cast<Card>(8 * byte + internal::kSelectInByteTable.t[in_byte][n - before]);
#endif
  }

  constexpr CardSet operator|(CardSet o) const { return CardSet(bits_ | o.bits_); }
  constexpr CardSet operator&(CardSet o) const { return CardSet(bits_ & o.bits_); }
  constexpr CardSet operator~() const { return CardSet(~bits_ & Deck().bits_); }
  constexpr bool operator==(const CardSet&) const = default;

  // Iteration: for (Card c : set) ...
  class Iterator {
   public:
    constexpr explicit Iterator(uint64_t b) : b_(b) {}
    constexpr Card operator*() const { return static_cast<Card>(std::countr_zero(b_)); }
    constexpr Iterator& operator++() {
      b_ &= b_ - 1;
      return *this;
    }
    constexpr bool operator!=(const Iterator& o) const { return b_ != o.b_; }

   private:
    uint64_t b_;
  };
  constexpr Iterator begin() const { return Iterator(bits_); }
  constexpr Iterator end() const { return Iterator(0); }

 private:
  uint64_t bits_ = 0;
};

// "AS KS 2C" (cards in ascending index order).
std::string CardSetText(CardSet s);

}  // namespace courtpiece::rules

#endif  // COURTPIECE_RULES_CARDS_H_
