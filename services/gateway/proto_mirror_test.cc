// client.proto mirrors the lobby's, the table's and moderation's messages field for field
// (internal fields reserved), so the gateway relays bytes without a hand-written copy. This
// test holds it.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/lobby/v1/lobby.pb.h"
#include "courtpiece/moderation/v1/moderation.pb.h"
#include "courtpiece/table/v1/table_service.pb.h"
#include "gtest/gtest.h"

namespace courtpiece::gateway {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::DescriptorPool;
using google::protobuf::FieldDescriptor;

// The Play messages mirror the table service's; the rest mirror the lobby's.
const std::set<std::string>& TableMessages() {
  static const auto* names = new std::set<std::string>{
      "PlayRequest", "OpenTable", "TableCommand", "PlayResponse",  "SeatInfo",
      "TableInfo",   "Opened",    "TableEvent",   "CommandResult", "Notice"};
  return *names;
}

// The voice-note messages mirror moderation's VoiceNotes.
const std::set<std::string>& ModerationMessages() {
  static const auto* names = new std::set<std::string>{"UploadNoteRequest", "UploadNoteResponse",
                                                       "GetNoteRequest", "GetNoteResponse"};
  return *names;
}

// Client-only fields the gateway consumes and never forwards.
const std::set<std::string>& ClientOnlyFields() {
  static const auto* names =
      new std::set<std::string>{"courtpiece.client.v1.OpenTable.access_token"};
  return *names;
}

// The upstream full name of a client message.
std::string Counterpart(const std::string& name) {
  if (TableMessages().count(name) > 0) return "courtpiece.table.v1." + name;
  if (ModerationMessages().count(name) > 0) return "courtpiece.moderation.v1." + name;
  if (name == "ListedTable") return "courtpiece.lobby.v1.OpenTable";
  return "courtpiece.lobby.v1." + name;
}

const Descriptor* Find(const std::string& full_name) {
  return DescriptorPool::generated_pool()->FindMessageTypeByName(full_name);
}

class MirrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Link every file so the generated pool holds them.
    (void)lobby::v1::Session::descriptor();
    (void)table::v1::PlayRequest::descriptor();
    (void)moderation::v1::UploadNoteRequest::descriptor();
  }
};

TEST_F(MirrorTest, EveryClientFieldHasItsUpstreamTwinAndEveryMissingOneIsReserved) {
  const google::protobuf::FileDescriptor* file = client::v1::PlayRequest::descriptor()->file();
  ASSERT_GT(file->message_type_count(), 30);
  int fields_checked = 0;
  for (int i = 0; i < file->message_type_count(); ++i) {
    const Descriptor* mine = file->message_type(i);
    const std::string want = Counterpart(mine->name());
    const Descriptor* theirs = Find(want);
    ASSERT_NE(theirs, nullptr) << mine->full_name() << ": no upstream message " << want;
    for (int f = 0; f < mine->field_count(); ++f) {
      const FieldDescriptor* a = mine->field(f);
      if (ClientOnlyFields().count(a->full_name()) > 0) {
        EXPECT_EQ(theirs->FindFieldByNumber(a->number()), nullptr) << a->full_name();
        EXPECT_EQ(theirs->FindFieldByName(a->name()), nullptr) << a->full_name();
        continue;
      }
      const FieldDescriptor* b = theirs->FindFieldByNumber(a->number());
      ASSERT_NE(b, nullptr) << a->full_name() << " #" << a->number() << " missing in " << want;
      EXPECT_EQ(a->name(), b->name()) << a->full_name();
      EXPECT_EQ(a->type(), b->type()) << a->full_name();
      EXPECT_EQ(a->label(), b->label()) << a->full_name();
      EXPECT_EQ(a->containing_oneof() == nullptr, b->containing_oneof() == nullptr)
          << a->full_name();
      if (a->containing_oneof() != nullptr && b->containing_oneof() != nullptr) {
        EXPECT_EQ(a->containing_oneof()->name(), b->containing_oneof()->name()) << a->full_name();
      }
      if (a->type() == FieldDescriptor::TYPE_MESSAGE) {
        EXPECT_EQ(Counterpart(a->message_type()->name()), b->message_type()->full_name())
            << a->full_name();
        EXPECT_EQ(a->message_type()->file(), file) << a->full_name();
      }
      ++fields_checked;
    }
    for (int f = 0; f < theirs->field_count(); ++f) {
      const FieldDescriptor* b = theirs->field(f);
      if (mine->FindFieldByNumber(b->number()) != nullptr) continue;
      EXPECT_TRUE(mine->IsReservedNumber(b->number()))
          << mine->full_name() << ": upstream field " << b->name() << " #" << b->number()
          << " is neither mirrored nor reserved";
      EXPECT_TRUE(mine->IsReservedName(b->name()))
          << mine->full_name() << ": reserve the name \"" << b->name() << "\" too";
    }
  }
  EXPECT_GT(fields_checked, 100);
}

TEST_F(MirrorTest, TheInternalFieldsAreTheOnesReserved) {
  EXPECT_TRUE(client::v1::TableRef::descriptor()->IsReservedName("owner_addr"));
  EXPECT_TRUE(client::v1::TableInfo::descriptor()->IsReservedName("owner_addr"));
  EXPECT_TRUE(client::v1::TableInfo::descriptor()->IsReservedName("owner_epoch"));
}

// The mirror in bytes: an upstream reply parsed as the client type, unknown fields dropped,
// keeps every public value and loses the internal ones.
TEST_F(MirrorTest, AnUpstreamReplyParsesAsTheClientTypeWithoutInternalFields) {
  lobby::v1::TableRef ref;
  ref.set_table_id("t-1");
  ref.set_code("123456");
  ref.set_owner_addr("10.1.2.3:7000");
  ref.set_owner_instance("table-a");
  ref.mutable_options()->set_bet_coins(50);
  ref.set_seat(-1);
  client::v1::TableRef mine;
  ASSERT_TRUE(mine.ParseFromString(ref.SerializeAsString()));
  mine.DiscardUnknownFields();
  EXPECT_EQ(mine.table_id(), "t-1");
  EXPECT_EQ(mine.code(), "123456");
  EXPECT_EQ(mine.options().bet_coins(), 50);
  EXPECT_EQ(mine.seat(), -1);
  EXPECT_EQ(mine.SerializeAsString().find("10.1.2.3"), std::string::npos);
  EXPECT_EQ(mine.SerializeAsString().find("table-a"), std::string::npos);
}

// The client's unary methods relay to a lobby method of the same name with mirrored types.
TEST_F(MirrorTest, GetPublicProfilesMirrorsTheAccountsMethod) {
  const auto* mine = client::v1::PlayRequest::descriptor()->file()->FindServiceByName("CourtPiece");
  const auto* theirs = lobby::v1::Session::descriptor()->file()->FindServiceByName("Accounts");
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  const auto* a = mine->FindMethodByName("GetPublicProfiles");
  const auto* b = theirs->FindMethodByName("GetPublicProfiles");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Counterpart(a->input_type()->name()), b->input_type()->full_name());
  EXPECT_EQ(Counterpart(a->output_type()->name()), b->output_type()->full_name());

  lobby::v1::GetPublicProfilesResponse reply;
  lobby::v1::PublicProfile* p = reply.add_profiles();
  p->set_player_id("p-1");
  p->set_display_name("Ali");
  p->set_avatar_id(12);
  client::v1::GetPublicProfilesResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(reply.SerializeAsString()));
  ASSERT_EQ(parsed.profiles_size(), 1);
  EXPECT_EQ(parsed.profiles(0).player_id(), "p-1");
  EXPECT_EQ(parsed.profiles(0).display_name(), "Ali");
  EXPECT_EQ(parsed.profiles(0).avatar_id(), 12);
  EXPECT_TRUE(parsed.GetReflection()->GetUnknownFields(parsed.profiles(0)).empty());
}

// UploadNote and GetNote relay to moderation's VoiceNotes with mirrored types, bytes intact.
TEST_F(MirrorTest, VoiceNoteMethodsMirrorModerationsVoiceNotes) {
  const auto* mine = client::v1::PlayRequest::descriptor()->file()->FindServiceByName("CourtPiece");
  const auto* theirs =
      moderation::v1::UploadNoteRequest::descriptor()->file()->FindServiceByName("VoiceNotes");
  ASSERT_NE(mine, nullptr);
  ASSERT_NE(theirs, nullptr);
  ASSERT_EQ(theirs->method_count(), 2);
  for (int i = 0; i < theirs->method_count(); ++i) {
    const auto* b = theirs->method(i);
    const auto* a = mine->FindMethodByName(b->name());
    ASSERT_NE(a, nullptr) << b->name();
    EXPECT_EQ(Counterpart(a->input_type()->name()), b->input_type()->full_name());
    EXPECT_EQ(Counterpart(a->output_type()->name()), b->output_type()->full_name());
  }
  client::v1::UploadNoteRequest upload;
  upload.set_table_id("t-1");
  upload.set_round(7);
  upload.set_audio(std::string("\x1a\x45\xdf\xa3\0\xff", 6));
  moderation::v1::UploadNoteRequest relayed;
  ASSERT_TRUE(relayed.ParseFromString(upload.SerializeAsString()));
  EXPECT_EQ(relayed.table_id(), "t-1");
  EXPECT_EQ(relayed.round(), 7u);
  EXPECT_EQ(relayed.audio(), upload.audio());

  moderation::v1::GetNoteResponse note;
  note.set_note_id("n-1");
  note.set_content_type("audio/ogg");
  note.set_audio(std::string("OggS\0", 5));
  note.set_duration_ms(6999);
  client::v1::GetNoteResponse parsed;
  ASSERT_TRUE(parsed.ParseFromString(note.SerializeAsString()));
  EXPECT_EQ(parsed.note_id(), "n-1");
  EXPECT_EQ(parsed.content_type(), "audio/ogg");
  EXPECT_EQ(parsed.audio(), note.audio());
  EXPECT_EQ(parsed.duration_ms(), 6999);
  EXPECT_TRUE(parsed.GetReflection()->GetUnknownFields(parsed).empty());
}

}  // namespace
}  // namespace courtpiece::gateway
