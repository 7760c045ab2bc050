#include "services/lobby/display_name.h"

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"

namespace courtpiece::lobby {
namespace {

absl::Status Bad(std::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("display_name: ", absl::string_view(rule.data(), rule.size())));
}

// Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF); nullopt when invalid.
std::optional<std::vector<char32_t>> DecodeUtf8(std::string_view s) {
  std::vector<char32_t> out;
  for (size_t i = 0; i < s.size();) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    int len = 0;
    char32_t cp = 0;
    if (b0 < 0x80) {
      len = 1;
      cp = b0;
    } else if ((b0 & 0xE0) == 0xC0) {
      len = 2;
      cp = b0 & 0x1F;
    } else if ((b0 & 0xF0) == 0xE0) {
      len = 3;
      cp = b0 & 0x0F;
    } else if ((b0 & 0xF8) == 0xF0) {
      len = 4;
      cp = b0 & 0x07;
    } else {
      return std::nullopt;
    }
    if (i + len > s.size()) return std::nullopt;
    for (int k = 1; k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if ((b & 0xC0) != 0x80) return std::nullopt;
      cp = (cp << 6) | (b & 0x3F);
    }
    static constexpr std::array<char32_t, 5> kMinForLen = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < kMinForLen[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return std::nullopt;
    }
    out.push_back(cp);
    i += len;
  }
  return out;
}

void AppendUtf8(char32_t cp, std::string& out) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool IsSpace(char32_t c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == 0x00A0 || c == 0x2007 ||
         c == 0x202F || c == 0x3000;
}

bool In(char32_t c, char32_t lo, char32_t hi) { return c >= lo && c <= hi; }

enum class Kind { kLetter, kMark, kDigit, kPunct, kJoiner, kSpace, kOther };

Kind Classify(char32_t c) {
  if (c == ' ') return Kind::kSpace;
  if (In(c, 'a', 'z') || In(c, 'A', 'Z')) return Kind::kLetter;
  if (In(c, '0', '9')) return Kind::kDigit;
  if (c == '_' || c == '-' || c == '.') return Kind::kPunct;
  if (c == 0x200C || c == 0x200D) return Kind::kJoiner;
  // Latin-1 letters (not the multiplication and division signs) and Latin Extended-A/B.
  if (In(c, 0x00C0, 0x024F) && c != 0x00D7 && c != 0x00F7) return Kind::kLetter;
  // Arabic: letters, harakat, superscript alef, Arabic-Indic and Extended digits, the
  // letters Urdu and Persian add. Punctuation (، ؛ ؟ ٪ ۔) is left out.
  if (In(c, 0x0620, 0x064A) || In(c, 0x0671, 0x06D3) || c == 0x06D5) return Kind::kLetter;
  if (In(c, 0x064B, 0x065F) || c == 0x0670) return Kind::kMark;
  if (In(c, 0x0660, 0x0669) || In(c, 0x06F0, 0x06F9)) return Kind::kDigit;
  // Devanagari (without the dandas and the abbreviation sign), Bengali, Gurmukhi, Gujarati.
  if (In(c, 0x0900, 0x097F) || In(c, 0x0980, 0x09FF) || In(c, 0x0A00, 0x0A7F) ||
      In(c, 0x0A80, 0x0AFF)) {
    if (c == 0x0964 || c == 0x0965 || c == 0x0970) return Kind::kOther;
    const char32_t offset = (c - 0x0900) % 0x80;  // the Brahmic blocks share a layout
    if (In(offset, 0x66, 0x6F)) return Kind::kDigit;
    if (In(offset, 0x00, 0x03) || In(offset, 0x3A, 0x4F) || In(offset, 0x51, 0x57) ||
        In(offset, 0x62, 0x63)) {
      return Kind::kMark;
    }
    return Kind::kLetter;
  }
  return Kind::kOther;
}

// The ASCII letters an accented Latin letter reads as (U+00C0..U+017F), so that "Àdmin",
// "Adm\u0131n" (a dotless i) and "B\u00F3t" are checked as "admin" and "bot". Latin
// Extended-B (U+0180..U+024F), rarer and less regular, reads as '?': any one letter.
std::string_view LatinBase(char32_t c) {
  static constexpr std::string_view kLatin1[] = {
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",   // C0
      "d", "n", "o", "o", "o", "o", "o",  "",  "o", "u", "u", "u", "u", "y", "th", "ss",  // D0
      "a", "a", "a", "a", "a", "a", "ae", "c", "e", "e", "e", "e", "i", "i", "i",  "i",   // E0
      "d", "n", "o", "o", "o", "o", "o",  "",  "o", "u", "u", "u", "u", "y", "th", "y"};  // F0
  // U+0100..U+017F: each base letter's capitals and smalls in a row (U+0132/3 and U+0152/3
  // are the ligatures IJ and OE; U+0149 is 'n).
  static constexpr std::string_view kExtendedA =
      "aaaaaaccccccccddddeeeeeeeeeegggggggghhhhiiiiiiiiiiXXjjkkklllllll"
      "lllnnnnnnnnnooooooXXrrrrrrssssssssttttttuuuuuuuuuuuuwwyyyzzzzzzs";
  if (In(c, 0x00C0, 0x00FF)) return kLatin1[c - 0x00C0];
  if (In(c, 0x0100, 0x017F)) {
    if (c == 0x0132 || c == 0x0133) return "ij";
    if (c == 0x0152 || c == 0x0153) return "oe";
    return kExtendedA.substr(c - 0x0100, 1);
  }
  if (In(c, 0x0180, 0x024F)) return "?";
  return "";
}

// ASCII folding for the impersonation checks: lowercase, accented Latin letters read as
// their base letters, digits read as the letters they imitate when `leet`, the invisible
// joiners dropped (so "B\u200Cot" is "bot"); everything else (other scripts, punctuation)
// becomes a separator.
std::string Fold(const std::vector<char32_t>& cps, bool leet) {
  std::string out;
  for (char32_t c : cps) {
    if (In(c, 'A', 'Z')) {
      out += static_cast<char>(c - 'A' + 'a');
    } else if (In(c, 'a', 'z')) {
      out += static_cast<char>(c);
    } else if (leet && In(c, '0', '9')) {
      static constexpr char kLeet[] = "oizeasgtbg";  // 0 1 2 3 4 5 6 7 8 9
      out += kLeet[c - '0'];
    } else if (c == 0x200C || c == 0x200D) {
      // invisible: nothing
    } else if (std::string_view base = LatinBase(c); !base.empty()) {
      out += base;
    } else {
      out += ' ';
    }
  }
  return out;
}

// Words of the folded text; a run of one-letter words counts as one word as well, so that
// "B o t" and "B.o.t" are checked as "bot".
std::vector<std::string> Words(const std::string& folded) {
  std::vector<std::string> words;
  std::string word, letters;
  auto end_word = [&] {
    if (word.empty()) return;
    if (word.size() == 1) {
      letters += word;
    } else if (!letters.empty()) {
      if (letters.size() > 1) words.push_back(std::move(letters));
      letters.clear();
    }
    words.push_back(std::move(word));
    word.clear();
  };
  for (char c : folded) {
    if (c == ' ') {
      end_word();
    } else {
      word += c;
    }
  }
  end_word();
  if (letters.size() > 1) words.push_back(std::move(letters));
  return words;
}

// `text` at `pos` reads as `reserved`; '?' in text (a rarer Latin letter) matches any letter.
bool MatchesAt(std::string_view text, size_t pos, std::string_view reserved) {
  if (pos + reserved.size() > text.size()) return false;
  for (size_t i = 0; i < reserved.size(); ++i) {
    if (text[pos + i] != reserved[i] && text[pos + i] != '?') return false;
  }
  return true;
}

bool Contains(std::string_view text, std::string_view reserved) {
  for (size_t pos = 0; pos + reserved.size() <= text.size(); ++pos) {
    if (MatchesAt(text, pos, reserved)) return true;
  }
  return false;
}

bool Impersonates(const std::vector<char32_t>& cps) {
  // "house": the account that takes and pays coins (RULES.md §4.6) is "the house".
  static constexpr std::string_view kReservedWords[] = {"bot",     "bots",  "mod",  "system",
                                                        "support", "staff", "house"};
  static constexpr std::string_view kReservedAnywhere[] = {"admin", "moderator", "courtpiece",
                                                           "official"};
  for (bool leet : {false, true}) {
    for (const std::string& word : Words(Fold(cps, leet))) {
      for (std::string_view reserved : kReservedWords) {
        if (word.size() == reserved.size() && MatchesAt(word, 0, reserved)) return true;
      }
      if (word.size() >= 3 && MatchesAt(word, word.size() - 3, "bot")) return true;
      // Within a word only ("xXadminXx", and "a d m i n" as a run of one-letter words):
      // across words it would refuse "Ahmad Minhas".
      for (std::string_view reserved : kReservedAnywhere) {
        if (Contains(word, reserved)) return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> NormalizeDisplayName(std::string_view name) {
  if (name.size() > 4 * 64) return Bad("too long");  // before decoding anything
  std::optional<std::vector<char32_t>> decoded = DecodeUtf8(name);
  if (!decoded.has_value()) return Bad("not valid UTF-8");
  std::vector<char32_t> cps;
  for (char32_t c : *decoded) {
    if (IsSpace(c)) {
      if (!cps.empty() && cps.back() != ' ') cps.push_back(' ');
    } else {
      cps.push_back(c);
    }
  }
  if (!cps.empty() && cps.back() == ' ') cps.pop_back();
  const int chars = static_cast<int>(cps.size());
  if (chars < kDisplayNameCharsMin || chars > kDisplayNameCharsMax) {
    return Bad(
        absl::StrCat("must be ", kDisplayNameCharsMin, "..", kDisplayNameCharsMax, " characters"));
  }
  bool has_letter = false;
  for (size_t i = 0; i < cps.size(); ++i) {
    const Kind kind = Classify(cps[i]);
    if (kind == Kind::kOther) {
      return Bad("only letters, digits, spaces and _ - . are allowed");
    }
    if (kind == Kind::kJoiner) {
      const bool between_letters =
          i > 0 && i + 1 < cps.size() && Classify(cps[i - 1]) != Kind::kSpace &&
          Classify(cps[i - 1]) != Kind::kJoiner && Classify(cps[i + 1]) == Kind::kLetter;
      if (!between_letters) return Bad("a joiner must stand between two letters");
    }
    has_letter = has_letter || kind == Kind::kLetter;
  }
  const Kind first = Classify(cps.front());
  if (first == Kind::kMark || first == Kind::kPunct) {
    return Bad("must not start with a vowel sign or with _ - .");
  }
  if (!has_letter) return Bad("must contain a letter");
  if (Impersonates(cps)) return Bad("must not look like a bot, an admin or the house");
  std::string out;
  for (char32_t c : cps) AppendUtf8(c, out);
  return out;
}

}  // namespace courtpiece::lobby
