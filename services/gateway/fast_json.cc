#include "services/gateway/fast_json.h"

#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "services/gateway/utf8.h"

namespace courtpiece::gateway {

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::FileDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

constexpr char kHex[] = "0123456789abcdef";
constexpr int kFieldsMax = 64;  // a message with more fields goes to protobuf

// A message type the fast path handles: proto3 (so no required fields to check), not a
// well-known type (those have JSON forms of their own), at most kFieldsMax fields.
bool HandledMessage(const Descriptor& d) {
  return d.file()->syntax() == FileDescriptor::SYNTAX_PROTO3 &&
         d.well_known_type() == Descriptor::WELLKNOWNTYPE_UNSPECIFIED &&
         d.file()->package() != "google.protobuf" && d.field_count() <= kFieldsMax &&
         d.oneof_decl_count() <= kFieldsMax;
}

// A field the fast path handles (see the header); false sends the whole message to protobuf.
// A scalar member of a oneof is not: protobuf prints a set one after every other field.
bool Handled(const FieldDescriptor& f) {
  if (f.is_map() || f.is_extension() || f.has_optional_keyword()) return false;
  if (f.file()->syntax() != FileDescriptor::SYNTAX_PROTO3) return false;
  if (f.containing_oneof() != nullptr && f.cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) {
    return false;
  }
  switch (f.type()) {
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BOOL:
    case FieldDescriptor::TYPE_INT32:
    case FieldDescriptor::TYPE_SINT32:
    case FieldDescriptor::TYPE_SFIXED32:
    case FieldDescriptor::TYPE_UINT32:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_INT64:
    case FieldDescriptor::TYPE_SINT64:
    case FieldDescriptor::TYPE_SFIXED64:
    case FieldDescriptor::TYPE_UINT64:
    case FieldDescriptor::TYPE_FIXED64:
      return true;
    case FieldDescriptor::TYPE_MESSAGE:
      return HandledMessage(*f.message_type());
    default:
      return false;
  }
}

// --- printing ------------------------------------------------------------------------------

// The code points protobuf's JSON printer writes as \u escapes although they are valid
// (format and separator characters, C1 controls); checked against protobuf for every code
// point by fast_json_test.
bool ProtobufEscapes(int32_t cp) {
  return cp < 0x20 || cp == '<' || cp == '>' || (cp >= 0x7f && cp <= 0x9f) || cp == 0xad ||
         (cp >= 0x600 && cp <= 0x603) || cp == 0x6dd || cp == 0x70f || cp == 0x17b4 ||
         cp == 0x17b5 || (cp >= 0x200b && cp <= 0x200f) || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x206a && cp <= 0x206f) || cp == 0xfeff ||
         (cp >= 0xfff9 && cp <= 0xfffb) || (cp >= 0x1d173 && cp <= 0x1d17a) || cp == 0xe0001 ||
         (cp >= 0xe0020 && cp <= 0xe007f);
}

void AppendU16Escape(uint32_t unit, std::string* out) {
  const char escape[6] = {'\\',
                          'u',
                          kHex[(unit >> 12) & 0xf],
                          kHex[(unit >> 8) & 0xf],
                          kHex[(unit >> 4) & 0xf],
                          kHex[unit & 0xf]};
  out->append(escape, sizeof escape);
}

// `text` as a JSON string literal escaped as protobuf escapes it; false if not valid UTF-8.
bool AppendQuoted(std::string_view text, std::string* out) {
  out->push_back('"');
  size_t i = 0;
  while (i < text.size()) {
    // Runs of plain ASCII go out in one append.
    size_t run = i;
    while (run < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[run]);
      if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>') break;
      ++run;
    }
    out->append(text.data() + i, run - i);
    i = run;
    if (i == text.size()) break;
    const size_t start = i;
    const int32_t cp = NextCodePoint(text, &i);
    if (cp < 0) return false;
    switch (cp) {
      case '"':
        out->append("\\\"");
        continue;
      case '\\':
        out->append("\\\\");
        continue;
      case '\b':
        out->append("\\b");
        continue;
      case '\f':
        out->append("\\f");
        continue;
      case '\n':
        out->append("\\n");
        continue;
      case '\r':
        out->append("\\r");
        continue;
      case '\t':
        out->append("\\t");
        continue;
      default:
        break;
    }
    if (!ProtobufEscapes(cp)) {
      out->append(text.data() + start, i - start);
    } else if (cp < 0x10000) {
      AppendU16Escape(static_cast<uint32_t>(cp), out);
    } else {
      const uint32_t v = static_cast<uint32_t>(cp) - 0x10000;
      AppendU16Escape(0xd800 + (v >> 10), out);
      AppendU16Escape(0xdc00 + (v & 0x3ff), out);
    }
  }
  out->push_back('"');
  return true;
}

bool PrintMessage(const Message& message, int depth, std::string* out);

// One value of `f` (element `index` when repeated).
bool PrintValue(const Message& message, const Reflection& r, const FieldDescriptor& f, int index,
                int depth, std::string* out) {
  const bool repeated = f.is_repeated();
  switch (f.cpp_type()) {
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(out,
                      repeated ? r.GetRepeatedInt32(message, &f, index) : r.GetInt32(message, &f));
      return true;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(
          out, repeated ? r.GetRepeatedUInt32(message, &f, index) : r.GetUInt32(message, &f));
      return true;
    case FieldDescriptor::CPPTYPE_INT64:
      absl::StrAppend(out, "\"",
                      repeated ? r.GetRepeatedInt64(message, &f, index) : r.GetInt64(message, &f),
                      "\"");
      return true;
    case FieldDescriptor::CPPTYPE_UINT64:
      absl::StrAppend(out, "\"",
                      repeated ? r.GetRepeatedUInt64(message, &f, index) : r.GetUInt64(message, &f),
                      "\"");
      return true;
    case FieldDescriptor::CPPTYPE_BOOL:
      out->append((repeated ? r.GetRepeatedBool(message, &f, index) : r.GetBool(message, &f))
                      ? "true"
                      : "false");
      return true;
    case FieldDescriptor::CPPTYPE_STRING: {
      std::string scratch;
      const std::string& value = repeated
                                     ? r.GetRepeatedStringReference(message, &f, index, &scratch)
                                     : r.GetStringReference(message, &f, &scratch);
      return AppendQuoted(value, out);
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      return PrintMessage(
          repeated ? r.GetRepeatedMessage(message, &f, index) : r.GetMessage(message, &f),
          depth + 1, out);
    default:
      return false;  // not reached: Handled() said which types come here
  }
}

// `depth`: this message's nesting, 1 for the top. protobuf's printer fails past 64; the fast
// path leaves anything past kFastJsonDepthMax to it.
bool PrintMessage(const Message& message, int depth, std::string* out) {
  const Descriptor& d = *message.GetDescriptor();
  const Reflection& r = *message.GetReflection();
  if (depth > kFastJsonDepthMax || !HandledMessage(d)) return false;
  out->push_back('{');
  bool first = true;
  for (int i = 0; i < d.field_count(); ++i) {
    const FieldDescriptor& f = *d.field(i);
    if (!Handled(f)) return false;
    const bool repeated = f.is_repeated();
    if (!repeated && f.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && !r.HasField(message, &f)) {
      continue;  // an unset message field (a oneof's members but the one set among them)
    }
    if (!first) out->push_back(',');
    first = false;
    if (!AppendQuoted(f.json_name(), out)) return false;
    out->push_back(':');
    if (!repeated) {
      if (!PrintValue(message, r, f, 0, depth, out)) return false;
      continue;
    }
    out->push_back('[');
    const int size = r.FieldSize(message, &f);
    for (int k = 0; k < size; ++k) {
      if (k > 0) out->push_back(',');
      if (!PrintValue(message, r, f, k, depth, out)) return false;
    }
    out->push_back(']');
  }
  out->push_back('}');
  return true;
}

// --- parsing -------------------------------------------------------------------------------

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool Document(Message* message) {
    SkipSpace();
    if (!Object(message, 1)) return false;
    SkipSpace();
    return pos_ == text_.size();
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return text_[pos_]; }

  void SkipSpace() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }

  bool Consume(char c) {
    SkipSpace();
    if (AtEnd() || Peek() != c) return false;
    ++pos_;
    return true;
  }

  // Four hex digits at pos_.
  bool Hex4(uint32_t* unit) {
    if (text_.size() - pos_ < 4) return false;
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = text_[pos_ + k];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
    }
    pos_ += 4;
    *unit = v;
    return true;
  }

  // A JSON string (pos_ at its opening quote, after SkipSpace), decoded into *out.
  bool String(std::string* out) {
    if (AtEnd() || Peek() != '"') return false;
    ++pos_;
    out->clear();
    while (true) {
      size_t run = pos_;
      while (run < text_.size()) {
        const unsigned char c = static_cast<unsigned char>(text_[run]);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++run;
      }
      out->append(text_.data() + pos_, run - pos_);
      pos_ = run;
      if (AtEnd()) return false;
      const unsigned char c = static_cast<unsigned char>(Peek());
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;  // a raw control character
      if (c >= 0x80) {
        const size_t start = pos_;
        if (NextCodePoint(text_, &pos_) < 0) return false;
        out->append(text_.data() + start, pos_ - start);
        continue;
      }
      ++pos_;  // the backslash
      if (AtEnd()) return false;
      const char e = Peek();
      ++pos_;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t unit = 0;
          if (!Hex4(&unit)) return false;
          if (unit >= 0xdc00 && unit <= 0xdfff) return false;  // a lone low surrogate
          if (unit >= 0xd800 && unit <= 0xdbff) {
            uint32_t low = 0;
            if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
              return false;
            }
            pos_ += 2;
            if (!Hex4(&low) || low < 0xdc00 || low > 0xdfff) return false;
            unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
          }
          AppendUtf8(unit, out);
          break;
        }
        default:
          return false;
      }
    }
  }

  // An integer token at pos_ (bare or quoted): -? (0 | [1-9][0-9]*), nothing after it that
  // would make it a fraction or an exponent. *negative and *magnitude say its value.
  bool Integer(bool* negative, uint64_t* magnitude) {
    const bool quoted = !AtEnd() && Peek() == '"';
    if (quoted) ++pos_;
    *negative = !AtEnd() && Peek() == '-';
    if (*negative) ++pos_;
    if (AtEnd() || Peek() < '0' || Peek() > '9') return false;
    uint64_t v = 0;
    if (Peek() == '0') {
      ++pos_;
    } else {
      while (!AtEnd() && Peek() >= '0' && Peek() <= '9') {
        const uint64_t digit = static_cast<uint64_t>(Peek() - '0');
        if (v > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
        v = v * 10 + digit;
        ++pos_;
      }
    }
    if (!AtEnd() &&
        (Peek() == '.' || Peek() == 'e' || Peek() == 'E' || (Peek() >= '0' && Peek() <= '9'))) {
      return false;
    }
    if (*negative && v == 0) return false;  // "-0": left to protobuf
    if (quoted) {
      if (AtEnd() || Peek() != '"') return false;
      ++pos_;
    }
    *magnitude = v;
    return true;
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  // One value of `f` into `message` (added when f is repeated).
  bool Value(Message* message, const Reflection& r, const FieldDescriptor& f, int depth) {
    SkipSpace();
    if (AtEnd()) return false;
    const bool repeated = f.is_repeated();
    switch (f.cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING: {
        std::string value;
        if (!String(&value)) return false;
        if (repeated) {
          r.AddString(message, &f, std::move(value));
        } else {
          r.SetString(message, &f, std::move(value));
        }
        return true;
      }
      case FieldDescriptor::CPPTYPE_BOOL: {
        bool value = false;
        if (Literal("true")) {
          value = true;
        } else if (!Literal("false")) {
          return false;
        }
        if (repeated) {
          r.AddBool(message, &f, value);
        } else {
          r.SetBool(message, &f, value);
        }
        return true;
      }
      case FieldDescriptor::CPPTYPE_MESSAGE: {
        Message* child = repeated ? r.AddMessage(message, &f) : r.MutableMessage(message, &f);
        return Object(child, depth + 1);
      }
      default:
        break;
    }
    bool negative = false;
    uint64_t magnitude = 0;
    if (!Integer(&negative, &magnitude)) return false;
    switch (f.cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32: {
        const uint64_t limit = negative ? uint64_t{1} << 31 : (uint64_t{1} << 31) - 1;
        if (magnitude > limit) return false;
        const auto value = static_cast<int32_t>(negative ? -static_cast<int64_t>(magnitude)
                                                         : static_cast<int64_t>(magnitude));
        repeated ? r.AddInt32(message, &f, value) : r.SetInt32(message, &f, value);
        return true;
      }
      case FieldDescriptor::CPPTYPE_UINT32: {
        if (negative || magnitude > std::numeric_limits<uint32_t>::max()) return false;
        const auto value = static_cast<uint32_t>(magnitude);
        repeated ? r.AddUInt32(message, &f, value) : r.SetUInt32(message, &f, value);
        return true;
      }
      case FieldDescriptor::CPPTYPE_INT64: {
        const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
        if (magnitude > limit) return false;
        const int64_t value =
            negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
        repeated ? r.AddInt64(message, &f, value) : r.SetInt64(message, &f, value);
        return true;
      }
      case FieldDescriptor::CPPTYPE_UINT64: {
        if (negative) return false;
        repeated ? r.AddUInt64(message, &f, magnitude) : r.SetUInt64(message, &f, magnitude);
        return true;
      }
      default:
        return false;
    }
  }

  // The field whose json_name or name is `key`, when exactly one is.
  static const FieldDescriptor* FieldFor(const Descriptor& d, std::string_view key) {
    const FieldDescriptor* found = nullptr;
    for (int i = 0; i < d.field_count(); ++i) {
      const FieldDescriptor* f = d.field(i);
      if (f->json_name() == key || f->name() == key) {
        if (found != nullptr && found != f) return nullptr;
        found = f;
      }
    }
    return found;
  }

  // An object (pos_ at or before its '{') into `message`.
  bool Object(Message* message, int depth) {
    if (depth > kFastJsonDepthMax || !Consume('{')) return false;
    const Descriptor& d = *message->GetDescriptor();
    const Reflection& r = *message->GetReflection();
    if (!HandledMessage(d)) return false;
    uint64_t seen_fields = 0;
    uint64_t seen_oneofs = 0;
    SkipSpace();
    if (!AtEnd() && Peek() == '}') {
      ++pos_;
      return true;
    }
    std::string key;
    while (true) {
      SkipSpace();
      if (!String(&key) || !Consume(':')) return false;
      const FieldDescriptor* f = FieldFor(d, key);
      if (f == nullptr || !Handled(*f)) return false;
      const uint64_t field_bit = uint64_t{1} << f->index();
      if ((seen_fields & field_bit) != 0) return false;
      seen_fields |= field_bit;
      if (const auto* oneof = f->containing_oneof(); oneof != nullptr) {
        const uint64_t oneof_bit = uint64_t{1} << oneof->index();
        if ((seen_oneofs & oneof_bit) != 0) return false;
        seen_oneofs |= oneof_bit;
      }
      if (f->is_repeated()) {
        if (!Array(message, r, *f, depth)) return false;
      } else if (!Value(message, r, *f, depth)) {
        return false;
      }
      SkipSpace();
      if (AtEnd()) return false;
      if (Peek() == '}') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') return false;
      ++pos_;
    }
  }

  bool Array(Message* message, const Reflection& r, const FieldDescriptor& f, int depth) {
    if (depth + 1 > kFastJsonDepthMax || !Consume('[')) return false;
    SkipSpace();
    if (!AtEnd() && Peek() == ']') {
      ++pos_;
      return true;
    }
    while (true) {
      if (!Value(message, r, f, depth + 1)) return false;
      SkipSpace();
      if (AtEnd()) return false;
      if (Peek() == ']') {
        ++pos_;
        return true;
      }
      if (Peek() != ',') return false;
      ++pos_;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

bool TryPrintJsonFast(const Message& message, std::string* out) {
  out->clear();
  return PrintMessage(message, 1, out);
}

bool TryParseJsonFast(std::string_view json, Message* message) {
  message->Clear();
  return Parser(json).Document(message);
}

}  // namespace courtpiece::gateway
