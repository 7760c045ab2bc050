#include "courtpiece/rules/cards.h"

#include "absl/strings/string_view.h"

namespace courtpiece::rules {
namespace {
constexpr absl::string_view kRanks = "23456789TJQKA";
constexpr absl::string_view kSuits = "CDHS";
}  // namespace

std::optional<Card> ParseCard(absl::string_view text) {
  if (text.size() != 2) return std::nullopt;
  size_t r = kRanks.find(text[0]);
  size_t s = kSuits.find(text[1]);
  if (r == absl::string_view::npos || s == absl::string_view::npos) return std::nullopt;
  return MakeCard(static_cast<int>(s), static_cast<int>(r));
}

std::optional<int> ParseSuit(absl::string_view text) {
  if (text.size() != 1) return std::nullopt;
  size_t s = kSuits.find(text[0]);
  if (s == absl::string_view::npos) return std::nullopt;
  return static_cast<int>(s);
}

std::string CardName(Card c) {
  if (c >= kNumCards) return "??";
  return {kRanks[RankOf(c)], kSuits[SuitOf(c)]};
}

std::string SuitName(int suit) { return std::string(1, kSuits[suit & 3]); }

std::string CardSetText(CardSet s) {
  std::string out;
  for (Card c : s) {
    if (!out.empty()) out += ' ';
    out += CardName(c);
  }
  return out;
}

}  // namespace courtpiece::rules
