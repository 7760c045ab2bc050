// PgParam / PgRow / PgResult: pure value conversions (no libpqxx).
#include <cstdint>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/storage/pg_pool.h"

namespace courtpiece::storage {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

PgParam PgParam::Bytes(absl::string_view raw) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string text = "\\x";
  text.reserve(2 + raw.size() * 2);
  for (unsigned char c : raw) {
    text.push_back(kHex[c >> 4]);
    text.push_back(kHex[c & 0xf]);
  }
  return PgParam(std::move(text));
}

bool PgRow::IsNull(size_t col) const { return col >= values_.size() || !values_[col]; }

const std::optional<std::string>& PgRow::Nullable(size_t col) const { return values_.at(col); }

absl::StatusOr<std::string> PgRow::String(size_t col) const {
  if (col >= values_.size()) {
    return absl::OutOfRangeError(absl::StrCat("column ", col, " of ", values_.size()));
  }
  if (!values_[col]) return absl::FailedPreconditionError(absl::StrCat("column ", col, " is NULL"));
  return *values_[col];
}

absl::StatusOr<int64_t> PgRow::Int64(size_t col) const {
  absl::StatusOr<std::string> text = String(col);
  if (!text.ok()) return text.status();
  int64_t v = 0;
  if (!absl::SimpleAtoi(*text, &v)) {
    return absl::FailedPreconditionError(
        absl::StrCat("column ", col, " is not an int64: '", text->substr(0, 40), "'"));
  }
  return v;
}

absl::StatusOr<bool> PgRow::Bool(size_t col) const {
  absl::StatusOr<std::string> text = String(col);
  if (!text.ok()) return text.status();
  if (*text == "t" || *text == "true") return true;
  if (*text == "f" || *text == "false") return false;
  return absl::FailedPreconditionError(absl::StrCat("column ", col, " is not a bool"));
}

absl::StatusOr<std::string> PgRow::Bytes(size_t col) const {
  absl::StatusOr<std::string> text = String(col);
  if (!text.ok()) return text.status();
  if (text->size() < 2 || (*text)[0] != '\\' || (*text)[1] != 'x' || text->size() % 2 != 0) {
    return absl::FailedPreconditionError(absl::StrCat("column ", col, " is not hex bytea"));
  }
  std::string raw;
  raw.reserve((text->size() - 2) / 2);
  for (size_t i = 2; i < text->size(); i += 2) {
    int hi = HexValue((*text)[i]);
    int lo = HexValue((*text)[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::FailedPreconditionError(absl::StrCat("column ", col, " has a bad hex digit"));
    }
    raw.push_back(static_cast<char>(hi << 4 | lo));
  }
  return raw;
}

absl::StatusOr<size_t> PgResult::Column(absl::string_view name) const {
  for (size_t i = 0; i < columns_.size(); ++i) {
    if (columns_[i] == name) return i;
  }
  return absl::NotFoundError(absl::StrCat("no column '", name, "'"));
}

std::string PgTextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

}  // namespace courtpiece::storage
