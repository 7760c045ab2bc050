// fast_json against protobuf's own JSON converter, which is its reference: every message of
// client.proto filled at random must print byte for byte as protobuf prints it, every code
// point must be escaped as protobuf escapes it, and whatever the fast parser accepts
// (generated documents in every form it takes, then the same documents mutated) protobuf
// must accept as the same message.
#include "services/gateway/fast_json.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/test_scale.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "google/protobuf/dynamic_message.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/timestamp.pb.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/message_differencer.h"
#include "google/protobuf/wrappers.pb.h"
#include "gtest/gtest.h"
#include "services/gateway/json_codec.h"

namespace courtpiece::gateway {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::MessageFactory;
using google::protobuf::util::MessageDifferencer;

std::string ProtobufPrint(const Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.always_print_primitive_fields = true;
  std::string out;
  if (!google::protobuf::util::MessageToJsonString(message, &out, options).ok()) return "<error>";
  return out;
}

bool ProtobufParse(const std::string& json, Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  return google::protobuf::util::JsonStringToMessage(json, message, options).ok();
}

std::unique_ptr<Message> New(const Descriptor* d) {
  return std::unique_ptr<Message>(MessageFactory::generated_factory()->GetPrototype(d)->New());
}

// UTF-8 written independently of fast_json's encoder: continuation bytes from the end,
// then the lead byte (n ones and a zero, then the rest of the bits).
void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
    return;
  }
  const int n = cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  std::string bytes(static_cast<size_t>(n), '\0');
  for (int i = n - 1; i > 0; --i) {
    bytes[static_cast<size_t>(i)] = static_cast<char>(0x80 | (cp & 0x3f));
    cp >>= 6;
  }
  bytes[0] = static_cast<char>(((0xff00u >> n) & 0xffu) | cp);
  out->append(bytes);
}

// Random messages: every field set or not, strings from ASCII (with the characters JSON
// escapes), a few multi-byte ones and the format characters protobuf escapes.
class Filler {
 public:
  explicit Filler(uint32_t seed) : rng_(seed) {}

  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::string RandomString() {
    static const uint32_t kSpecial[] = {0x0,   0x1f,    '"',     '\\',    '<',     '>',
                                        '/',   0x7f,    0x80,    0xa0,    0xad,    0x600,
                                        0x7ff, 0x800,   0x2028,  0x200b,  0xfeff,  0xffff,
                                        0xe9,  0x1f0a1, 0x1d173, 0xe0041, 0x10ffff};
    std::string s;
    const int n = Below(4) == 0 ? 0 : Below(12);
    for (int i = 0; i < n; ++i) {
      if (Below(4) == 0) {
        AppendUtf8(kSpecial[Below(sizeof kSpecial / sizeof kSpecial[0])], &s);
      } else {
        s.push_back(static_cast<char>(' ' + Below(95)));
      }
    }
    return s;
  }

  uint64_t RandomBits() {
    switch (Below(4)) {
      case 0:
        return 0;
      case 1:
        return static_cast<uint64_t>(Below(1000));
      case 2:
        return ~uint64_t{0} - static_cast<uint64_t>(Below(3));  // near the top, or -1..-3
      default:
        return (static_cast<uint64_t>(rng_()) << 32) | rng_();
    }
  }

  void Fill(Message* message, int depth) {
    const Descriptor& d = *message->GetDescriptor();
    const auto& r = *message->GetReflection();
    for (int i = 0; i < d.field_count(); ++i) {
      const FieldDescriptor* f = d.field(i);
      if (Below(3) == 0) continue;
      const int count = f->is_repeated() ? Below(4) : 1;
      for (int k = 0; k < count; ++k) SetOne(message, r, f, depth);
    }
  }

 private:
  void SetOne(Message* m, const google::protobuf::Reflection& r, const FieldDescriptor* f,
              int depth) {
    const bool rep = f->is_repeated();
    const uint64_t bits = RandomBits();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        rep ? r.AddInt32(m, f, static_cast<int32_t>(bits))
            : r.SetInt32(m, f, static_cast<int32_t>(bits));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        rep ? r.AddUInt32(m, f, static_cast<uint32_t>(bits))
            : r.SetUInt32(m, f, static_cast<uint32_t>(bits));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        rep ? r.AddInt64(m, f, static_cast<int64_t>(bits))
            : r.SetInt64(m, f, static_cast<int64_t>(bits));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        rep ? r.AddUInt64(m, f, bits) : r.SetUInt64(m, f, bits);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        rep ? r.AddBool(m, f, bits % 2 == 1) : r.SetBool(m, f, bits % 2 == 1);
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        rep ? r.AddString(m, f, RandomString()) : r.SetString(m, f, RandomString());
        break;
      case FieldDescriptor::CPPTYPE_ENUM:
        if (!rep) r.SetEnumValue(m, f, 0);
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 4) Fill(rep ? r.AddMessage(m, f) : r.MutableMessage(m, f), depth + 1);
        break;
      default:
        break;  // float, double: client.proto has none
    }
  }

  std::mt19937 rng_;
};

std::vector<const Descriptor*> ClientMessages() {
  const auto* file = client::v1::PlayRequest::descriptor()->file();
  std::vector<const Descriptor*> all;
  for (int i = 0; i < file->message_type_count(); ++i) all.push_back(file->message_type(i));
  return all;
}

TEST(FastJsonTest, PrintsEveryClientMessageExactlyAsProtobufDoes) {
  const int rounds = ScaledIterations(400);
  Filler filler(7);
  int fast = 0, fallback = 0;
  for (const Descriptor* d : ClientMessages()) {
    for (int round = 0; round < rounds; ++round) {
      std::unique_ptr<Message> message = New(d);
      filler.Fill(message.get(), 0);
      std::string out;
      if (!TryPrintJsonFast(*message, &out)) {
        ++fallback;
        continue;
      }
      ++fast;
      ASSERT_EQ(out, ProtobufPrint(*message)) << d->full_name() << " " << message->DebugString();
      EXPECT_EQ(PrintJsonFullPath(*message), out);  // what the gateway answered before
    }
  }
  EXPECT_GT(fast, fallback);  // only a few messages have bytes or enums
  std::printf("printed fast %d, left to protobuf %d\n", fast, fallback);
}

TEST(FastJsonTest, ThePlayMessagesAlwaysTakeTheFastPath) {
  Filler filler(11);
  for (int round = 0; round < ScaledIterations(2000); ++round) {
    client::v1::PlayResponse response;
    filler.Fill(&response, 0);
    client::v1::PlayRequest request;
    filler.Fill(&request, 0);
    std::string out;
    ASSERT_TRUE(TryPrintJsonFast(response, &out)) << response.DebugString();
    ASSERT_TRUE(TryPrintJsonFast(request, &out)) << request.DebugString();
    client::v1::PlayRequest back;
    ASSERT_TRUE(TryParseJsonFast(out, &back)) << out;
    ASSERT_TRUE(MessageDifferencer::Equals(request, back)) << out;
  }
}

TEST(FastJsonTest, EscapesEveryCodePointAsProtobufDoes) {
  // Every scalar value (no surrogates), 64 to a string.
  client::v1::Notice notice;
  std::string text, out;
  int strings = 0;
  for (uint32_t cp = 0; cp <= 0x10ffff; ++cp) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    AppendUtf8(cp, &text);
    if (cp % 64 != 63 && cp != 0x10ffff) continue;
    notice.set_detail(text);
    ASSERT_TRUE(TryPrintJsonFast(notice, &out));
    ASSERT_EQ(out, ProtobufPrint(notice)) << "code points up to " << cp;
    client::v1::Notice back;
    ASSERT_TRUE(TryParseJsonFast(out, &back));
    ASSERT_EQ(back.detail(), text);
    text.clear();
    ++strings;
  }
  EXPECT_EQ(strings, (0x110000 - 0x800) / 64);
}

TEST(FastJsonTest, InvalidUtf8IsLeftToProtobuf) {
  client::v1::TableEvent event;
  event.set_seq(3);
  event.add_cards("AS");
  event.add_cards("\xff");
  std::string out;
  EXPECT_FALSE(TryPrintJsonFast(event, &out));
  // protobuf prints such a string as "" (and logs it): the gateway's answer is protobuf's.
  EXPECT_EQ(
      PrintJson(event),
      R"({"seq":"3","type":"","seat":0,"player":"","cards":["AS",""],"detail":"","value":"0"})");
  event.set_cards(1, "\xed\xa0\x80");  // an encoded surrogate
  EXPECT_FALSE(TryPrintJsonFast(event, &out));
  event.set_cards(1, "\xc0\xaf");  // overlong
  EXPECT_FALSE(TryPrintJsonFast(event, &out));
}

// A JSON text for `message` in one of the forms the fast parser takes, chosen at random:
// either name, quoted or bare integers, escaped or raw characters, spacing, fields in any
// order, defaults written or not.
class Writer {
 public:
  explicit Writer(uint32_t seed) : rng_(seed) {}

  std::string Write(const Message& message) {
    std::string out;
    Space(&out);
    Object(message, &out);
    Space(&out);
    return out;
  }

 private:
  int Below(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  void Space(std::string* out) {
    static const char kSpace[] = {' ', '\t', '\n', '\r'};
    while (Below(4) == 0) out->push_back(kSpace[Below(4)]);
  }

  void Quoted(const std::string& text, std::string* out) {
    out->push_back('"');
    size_t i = 0;
    while (i < text.size()) {
      const unsigned char c = static_cast<unsigned char>(text[i]);
      size_t len = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
      uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
      for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (text[i + k] & 0x3f);
      const bool must = cp < 0x20 || cp == '"' || cp == '\\';
      if (must || Below(5) == 0) {
        if (cp == '"' || cp == '\\' || (cp == '/' && Below(2) == 0)) {
          out->push_back('\\');
          out->push_back(static_cast<char>(cp));
        } else if ((cp == '\n' || cp == '\b' || cp == '\f' || cp == '\r' || cp == '\t') &&
                   Below(2) == 0) {
          static const char kShort[] = {'b', 't', 'n', 'v', 'f', 'r'};  // \b is 8, \r is 13
          out->push_back('\\');
          out->push_back(kShort[cp - '\b']);
        } else if (cp < 0x10000) {
          std::string hex = absl::StrCat(absl::Hex(cp, absl::kZeroPad4));
          if (Below(2) == 0) hex = absl::AsciiStrToUpper(hex);
          out->append(absl::StrCat("\\u", hex));
        } else {
          const uint32_t v = cp - 0x10000;
          out->append(absl::StrCat("\\u", absl::Hex(0xd800 + (v >> 10), absl::kZeroPad4), "\\u",
                                   absl::Hex(0xdc00 + (v & 0x3ff), absl::kZeroPad4)));
        }
      } else {
        out->append(text, i, len);
      }
      i += len;
    }
    out->push_back('"');
  }

  void Integer(const std::string& digits, std::string* out) {
    if (Below(2) == 0) {
      out->append(absl::StrCat("\"", digits, "\""));
    } else {
      out->append(digits);
    }
  }

  void Value(const Message& m, const FieldDescriptor* f, int index, std::string* out) {
    const auto& r = *m.GetReflection();
    const bool rep = f->is_repeated();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_INT32:
        Integer(absl::StrCat(rep ? r.GetRepeatedInt32(m, f, index) : r.GetInt32(m, f)), out);
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        Integer(absl::StrCat(rep ? r.GetRepeatedUInt32(m, f, index) : r.GetUInt32(m, f)), out);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        Integer(absl::StrCat(rep ? r.GetRepeatedInt64(m, f, index) : r.GetInt64(m, f)), out);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        Integer(absl::StrCat(rep ? r.GetRepeatedUInt64(m, f, index) : r.GetUInt64(m, f)), out);
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        out->append((rep ? r.GetRepeatedBool(m, f, index) : r.GetBool(m, f)) ? "true" : "false");
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        Quoted(rep ? r.GetRepeatedString(m, f, index) : r.GetString(m, f), out);
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        Object(rep ? r.GetRepeatedMessage(m, f, index) : r.GetMessage(m, f), out);
        break;
      default:
        out->append("null");  // not a type the Play messages have
        break;
    }
  }

  void Object(const Message& m, std::string* out) {
    const Descriptor& d = *m.GetDescriptor();
    const auto& r = *m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    for (int i = 0; i < d.field_count(); ++i) {
      const FieldDescriptor* f = d.field(i);
      const bool present = f->is_repeated() ? r.FieldSize(m, f) > 0 : r.HasField(m, f);
      const bool may_write_default =
          f->containing_oneof() == nullptr && f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE;
      if (present || (may_write_default && Below(2) == 0)) fields.push_back(f);
    }
    std::shuffle(fields.begin(), fields.end(), rng_);
    out->push_back('{');
    for (size_t i = 0; i < fields.size(); ++i) {
      if (i > 0) out->push_back(',');
      Space(out);
      Quoted(Below(2) == 0 ? f_json(fields[i]) : fields[i]->name(), out);
      Space(out);
      out->push_back(':');
      Space(out);
      if (fields[i]->is_repeated()) {
        out->push_back('[');
        for (int k = 0; k < r.FieldSize(m, fields[i]); ++k) {
          if (k > 0) out->push_back(',');
          Space(out);
          Value(m, fields[i], k, out);
          Space(out);
        }
        out->push_back(']');
      } else {
        Value(m, fields[i], 0, out);
      }
      Space(out);
    }
    out->push_back('}');
  }

  static std::string f_json(const FieldDescriptor* f) { return f->json_name(); }

  std::mt19937 rng_;
};

TEST(FastJsonTest, ParsesEveryFormItTakesAsProtobufDoes) {
  Filler filler(3);
  Writer writer(5);
  int accepted = 0;
  for (const Descriptor* d :
       {client::v1::PlayRequest::descriptor(), client::v1::PlayResponse::descriptor(),
        client::v1::TableOptions::descriptor(), client::v1::GuestLoginRequest::descriptor()}) {
    for (int round = 0; round < ScaledIterations(3000); ++round) {
      std::unique_ptr<Message> message = New(d);
      filler.Fill(message.get(), 0);
      const std::string json = writer.Write(*message);
      std::unique_ptr<Message> fast = New(d);
      ASSERT_TRUE(TryParseJsonFast(json, fast.get())) << json;
      ASSERT_TRUE(MessageDifferencer::Equals(*message, *fast)) << json;
      std::unique_ptr<Message> reference = New(d);
      ASSERT_TRUE(ProtobufParse(json, reference.get())) << json;
      ASSERT_TRUE(MessageDifferencer::Equals(*reference, *fast)) << json;
      ++accepted;
    }
  }
  EXPECT_EQ(accepted, 4 * ScaledIterations(3000));
}

// Mutated documents: whatever the fast parser still accepts, protobuf must accept as the
// same message (the rest goes to protobuf, whose answer is the gateway's).
TEST(FastJsonTest, WhatItAcceptsOfMutatedDocumentsProtobufParsesTheSame) {
  Filler filler(13);
  Writer writer(17);
  std::mt19937 rng(19);
  const auto below = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  static const std::string kBits[] = {"{", "}",    "[",    "]",    "\"",       ",",
                                      ":", "0",    "-",    "1",    "9",        ".",
                                      "e", "\\",   "\\u",  "null", "true",     " ",
                                      "x", "\xc3", "\xa9", "\x01", "\"seq\":", "\"open\":{}"};
  int accepted = 0, refused = 0;
  for (int round = 0; round < ScaledIterations(30000); ++round) {
    client::v1::PlayRequest request;
    client::v1::PlayResponse response;
    Message* message = round % 2 == 0 ? static_cast<Message*>(&request) : &response;
    filler.Fill(message, 0);
    std::string json = writer.Write(*message);
    for (int edits = 1 + below(3); edits > 0 && !json.empty(); --edits) {
      const size_t at = static_cast<size_t>(below(static_cast<int>(json.size())));
      switch (below(3)) {
        case 0:
          json.erase(at, 1 + static_cast<size_t>(below(3)));
          break;
        case 1:
          json.insert(at, kBits[below(sizeof kBits / sizeof kBits[0])]);
          break;
        default:
          json[at] = kBits[below(sizeof kBits / sizeof kBits[0])][0];
          break;
      }
    }
    std::unique_ptr<Message> fast(message->New());
    if (!TryParseJsonFast(json, fast.get())) {
      ++refused;
      continue;
    }
    ++accepted;
    std::unique_ptr<Message> reference(message->New());
    ASSERT_TRUE(ProtobufParse(json, reference.get())) << json;
    ASSERT_TRUE(MessageDifferencer::Equals(*reference, *fast)) << json;
    std::unique_ptr<Message> full(message->New());
    ASSERT_TRUE(ParseJsonFullPath(json, full.get()).ok()) << json;  // protobuf + shape check
    ASSERT_TRUE(MessageDifferencer::Equals(*full, *fast)) << json;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(refused, 0);
  std::printf("mutated documents: fast path took %d, left %d to protobuf\n", accepted, refused);
}

TEST(FastJsonTest, LeavesToProtobufWhatItDoesNotTake) {
  client::v1::PlayRequest request;
  for (const char* json : {
           R"({"command":null})",                             // null
           R"({"open":{},"command":{}})",                     // two members of a oneof
           R"({"open":{"tableId":"a","tableId":"b"}})",       // a key twice
           R"({"open":{"table_id":"a","tableId":"b"}})",      // both names of one field
           R"({"open":{"lastSeq":1.0}})",                     // a fraction
           R"({"open":{"lastSeq":1e3}})",                     // an exponent
           R"({"open":{"lastSeq":01}})",                      // a leading zero
           R"({"open":{"lastSeq":-1}})",                      // negative for a uint64
           R"({"open":{"lastSeq":"18446744073709551616"}})",  // 2^64
           R"({"command":{"seat":2147483648}})",              // over int32
           R"({"command":{"seat":-0}})",                      // minus zero
           R"({"command":{"yes":"true"}})",                   // a quoted bool
           R"({"command":{"type":7}})",                       // a number for a string
           R"({"command":{"type":"\ud800"}})",                // a lone surrogate
           R"({"command":{"type":"a\u00"}})",                 // a short escape
           "{\"command\":{\"type\":\"\xff\"}}",               // not UTF-8
           "{\"command\":{\"type\":\"a\x01\"}}",              // a raw control character
           R"({"nope":1})",                                   // an unknown key
           R"({"open":{}} x)",                                // something after the object
           R"({"open":{},})",                                 // a trailing comma
           R"([])",
           "",
           "   ",
       }) {
    EXPECT_FALSE(TryParseJsonFast(json, &request)) << json;
  }
}

// Shapes client.proto does not have, declared at run time: the fast path must decline them
// (or, where it takes them, agree with protobuf).
class FastJsonShapesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    google::protobuf::FileDescriptorProto proto3, proto2;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"pb(
          name: "shapes3.proto"
          package: "shapes"
          syntax: "proto3"
          message_type {
            name: "Rec"
            field {
              name: "child"
              number: 1
              label: LABEL_OPTIONAL
              type: TYPE_MESSAGE
              type_name: ".shapes.Rec"
              json_name: "child"
            }
            field { name: "v" number: 2 label: LABEL_OPTIONAL type: TYPE_INT32 json_name: "v" }
          }
          message_type {
            name: "ScalarOneof"
            field {
              name: "before"
              number: 1
              label: LABEL_OPTIONAL
              type: TYPE_STRING
              json_name: "before"
            }
            field {
              name: "ai"
              number: 2
              label: LABEL_OPTIONAL
              type: TYPE_INT32
              oneof_index: 0
              json_name: "ai"
            }
            field { name: "mid" number: 3 label: LABEL_OPTIONAL type: TYPE_STRING json_name: "mid" }
            oneof_decl { name: "a" }
          }
        )pb",
        &proto3));
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
        R"pb(
          name: "shapes2.proto"
          package: "shapes"
          syntax: "proto2"
          message_type {
            name: "Req"
            field { name: "a" number: 1 label: LABEL_REQUIRED type: TYPE_INT32 json_name: "a" }
          }
        )pb",
        &proto2));
    ASSERT_NE(pool_.BuildFile(proto3), nullptr);
    ASSERT_NE(pool_.BuildFile(proto2), nullptr);
  }

  std::unique_ptr<Message> Make(const std::string& name) {
    const Descriptor* d = pool_.FindMessageTypeByName(name);
    EXPECT_NE(d, nullptr) << name;
    return std::unique_ptr<Message>(factory_.GetPrototype(d)->New());
  }

  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_{&pool_};
};

TEST_F(FastJsonShapesTest, NestingPastTheLimitIsLeftToProtobuf) {
  for (int depth = 1; depth <= kFastJsonDepthMax + 2; ++depth) {
    std::unique_ptr<Message> top = Make("shapes.Rec");
    Message* m = top.get();
    for (int i = 1; i < depth; ++i) {
      m->GetReflection()->SetInt32(m, m->GetDescriptor()->FindFieldByName("v"), i);
      m = m->GetReflection()->MutableMessage(m, m->GetDescriptor()->FindFieldByName("child"));
    }
    std::string out;
    const bool fast = TryPrintJsonFast(*top, &out);
    EXPECT_EQ(fast, depth <= kFastJsonDepthMax) << depth;
    const std::string reference = ProtobufPrint(*top);
    if (fast) {
      EXPECT_EQ(out, reference) << depth;
    }
    EXPECT_EQ(PrintJson(*top), reference) << depth;
    std::unique_ptr<Message> back = Make("shapes.Rec");
    EXPECT_EQ(TryParseJsonFast(reference, back.get()), depth <= kFastJsonDepthMax) << depth;
    ASSERT_TRUE(ParseJson(reference, back.get()).ok()) << depth;
    EXPECT_TRUE(MessageDifferencer::Equals(*top, *back)) << depth;
  }
}

TEST_F(FastJsonShapesTest, AScalarOneofMemberIsLeftToProtobufWhichPrintsItLast) {
  std::unique_ptr<Message> m = Make("shapes.ScalarOneof");
  m->GetReflection()->SetInt32(m.get(), m->GetDescriptor()->FindFieldByName("ai"), 0);
  std::string out;
  EXPECT_FALSE(TryPrintJsonFast(*m, &out));
  EXPECT_EQ(PrintJson(*m), R"({"before":"","mid":"","ai":0})");
  std::unique_ptr<Message> back = Make("shapes.ScalarOneof");
  EXPECT_FALSE(TryParseJsonFast(R"({"ai":3})", back.get()));
  ASSERT_TRUE(ParseJson(R"({"ai":3})", back.get()).ok());
  EXPECT_EQ(back->GetReflection()->GetInt32(*back, back->GetDescriptor()->FindFieldByName("ai")),
            3);
}

TEST_F(FastJsonShapesTest, Proto2AndWellKnownTypesAreLeftToProtobuf) {
  std::unique_ptr<Message> req = Make("shapes.Req");
  std::string out;
  EXPECT_FALSE(TryParseJsonFast("{}", req.get()));
  EXPECT_FALSE(ParseJson("{}", req.get()).ok());  // a = 1 is required
  req->GetReflection()->SetInt32(req.get(), req->GetDescriptor()->FindFieldByName("a"), 1);
  EXPECT_FALSE(TryPrintJsonFast(*req, &out));

  google::protobuf::Timestamp at;
  at.set_seconds(5);
  EXPECT_FALSE(TryPrintJsonFast(at, &out));
  EXPECT_EQ(PrintJson(at), R"("1970-01-01T00:00:05Z")");
  EXPECT_FALSE(TryParseJsonFast(R"({"seconds":"5"})", &at));
  google::protobuf::Value value;
  EXPECT_FALSE(TryParseJsonFast(R"({"stringValue":"x"})", &value));
  google::protobuf::Int32Value wrapped;
  wrapped.set_value(3);
  EXPECT_FALSE(TryPrintJsonFast(wrapped, &out));
  EXPECT_EQ(PrintJson(wrapped), "3");
}

TEST(FastJsonTest, ParsesTheLimitsOfEachIntegerType) {
  client::v1::TableCommand command;
  ASSERT_TRUE(TryParseJsonFast(
      R"({"commandId":"18446744073709551615","seat":-2147483648,"durationMs":-9223372036854775808})",
      &command));
  EXPECT_EQ(command.command_id(), 18446744073709551615u);
  EXPECT_EQ(command.seat(), -2147483647 - 1);
  EXPECT_EQ(command.duration_ms(), INT64_MIN);
  ASSERT_TRUE(TryParseJsonFast(
      R"({"command_id":0,"seat":"2147483647","duration_ms":"9223372036854775807"})", &command));
  EXPECT_EQ(command.command_id(), 0u);
  EXPECT_EQ(command.seat(), 2147483647);
  EXPECT_EQ(command.duration_ms(), INT64_MAX);
  EXPECT_FALSE(TryParseJsonFast(R"({"durationMs":"9223372036854775808"})", &command));
  EXPECT_FALSE(TryParseJsonFast(R"({"seat":"-2147483649"})", &command));
}

}  // namespace
}  // namespace courtpiece::gateway
