// The gRPC face over a host on fakes, served by common::GrpcServer on loopback port 0:
// what a client (the gateway) sees for the player metadata, the first message, floods,
// oversized messages, owners elsewhere, and the unary calls.
#include "services/table/server.h"

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/table/rules_engine.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/table/fake_ports.h"
#include "services/table/fake_table_store.h"

namespace courtpiece::table_service {
namespace {

namespace pb = ::courtpiece::table::v1;

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    wallet.SetBalance("player:host", 1000);
    wallet.SetBalance("player:a", 1000);
    metrics = *common::Metrics::Create({.service = "table_test"});
    table_metrics = std::make_unique<TableMetrics>(*metrics);
    HostOptions o;
    o.instance_id = "inst-a";
    o.instance_addr = "127.0.0.1:1";
    o.workers = 2;
    host = std::make_unique<TableHost>(o, clock, store, wallet, records, engines, seeds,
                                       table_metrics.get());
    ASSERT_TRUE(host->Start().ok());
    StreamLimits limits;
    limits.commands_per_second = 0.001;  // no refill within a test
    limits.commands_burst = 3;
    limits.refusals_before_cut = 5;
    service = std::make_unique<TableServiceImpl>(*host, table_metrics.get(), limits);
    server = *common::GrpcServer::Start(
        {.listen_address = "127.0.0.1:0", .max_receive_message_bytes = 64 * 1024}, {service.get()},
        *metrics);
    stub = pb::TableService::NewStub(common::CreateGrpcChannel(server->LoopbackAddress(), nullptr));
    pb::CreateTableRequest create;
    create.set_table_id("t1");
    create.set_host_player("host");
    create.set_bet_coins(100);
    create.set_turn_time_ms(10'000);
    create.set_game_options(R"({"game":"classic","target":1})");
    create.set_code("654321");
    grpc::ClientContext ctx;
    pb::CreateTableResponse out;
    ASSERT_TRUE(stub->CreateTable(&ctx, create, &out).ok());
    ASSERT_TRUE(out.created());
  }
  void TearDown() override {
    host->Shutdown();
    server->Shutdown(absl::Now() + absl::Seconds(2));
  }

  struct Stream {
    std::unique_ptr<grpc::ClientContext> ctx = std::make_unique<grpc::ClientContext>();
    std::unique_ptr<grpc::ClientReaderWriter<pb::PlayRequest, pb::PlayResponse>> rw;
  };
  Stream Open(const std::string& player, const std::string& table = "t1") {
    Stream s;
    if (!player.empty()) s.ctx->AddMetadata(kPlayerIdMetadata, player);
    common::SetTimeout(*s.ctx, absl::Seconds(10));
    s.rw = stub->Play(s.ctx.get());
    pb::PlayRequest open;
    open.mutable_open()->set_table_id(table);
    s.rw->Write(open);
    return s;
  }
  // Reads until the result of `command_id`, or the end of the stream.
  std::optional<pb::CommandResult> ResultOf(Stream& s, uint64_t command_id) {
    pb::PlayResponse m;
    while (s.rw->Read(&m)) {
      if (m.has_result() && m.result().command_id() == command_id) return m.result();
    }
    return std::nullopt;
  }
  pb::PlayRequest Command(uint64_t id, const std::string& type) {
    pb::PlayRequest r;
    r.mutable_command()->set_command_id(id);
    r.mutable_command()->set_type(type);
    return r;
  }

  // A PlayMux stream and what it read, by session (messages of other sessions wait here).
  struct Mux {
    std::unique_ptr<grpc::ClientContext> ctx = std::make_unique<grpc::ClientContext>();
    std::unique_ptr<grpc::ClientReaderWriter<pb::PlayMuxRequest, pb::PlayMuxResponse>> rw;
    std::map<uint64_t, std::deque<pb::SessionResponse>> read;
  };
  std::unique_ptr<Mux> OpenMux() {
    auto m = std::make_unique<Mux>();
    common::SetTimeout(*m->ctx, absl::Seconds(10));
    m->rw = stub->PlayMux(m->ctx.get());
    return m;
  }
  // Writes `requests` as one batch.
  static void MuxWrite(Mux& m, std::vector<pb::SessionRequest> requests) {
    pb::PlayMuxRequest batch;
    for (pb::SessionRequest& r : requests) *batch.add_requests() = std::move(r);
    ASSERT_TRUE(m.rw->Write(batch));
  }
  static pb::SessionRequest OpenOf(uint64_t session, const std::string& player,
                                   const std::string& table = "t1") {
    pb::SessionRequest r;
    r.set_session(session);
    r.set_player(player);
    r.mutable_open()->set_table_id(table);
    return r;
  }
  static void MuxOpen(Mux& m, uint64_t session, const std::string& player,
                      const std::string& table = "t1") {
    MuxWrite(m, {OpenOf(session, player, table)});
  }
  void MuxCommand(Mux& m, uint64_t session, const pb::PlayRequest& command) {
    pb::SessionRequest r;
    r.set_session(session);
    *r.mutable_command() = command.command();
    MuxWrite(m, {r});
  }
  // The next message of `session`, or nothing when the stream ended first.
  static std::optional<pb::SessionResponse> NextOf(Mux& m, uint64_t session) {
    std::deque<pb::SessionResponse>& mine = m.read[session];
    while (mine.empty()) {
      pb::PlayMuxResponse batch;
      if (!m.rw->Read(&batch)) return std::nullopt;
      for (pb::SessionResponse& in : *batch.mutable_responses()) {
        m.read[in.session()].push_back(std::move(in));
      }
    }
    pb::SessionResponse out = std::move(mine.front());
    mine.pop_front();
    return out;
  }
  static std::optional<pb::CommandResult> MuxResultOf(Mux& m, uint64_t session,
                                                      uint64_t command_id) {
    while (std::optional<pb::SessionResponse> in = NextOf(m, session)) {
      if (in->has_end()) return std::nullopt;
      if (in->response().has_result() && in->response().result().command_id() == command_id) {
        return in->response().result();
      }
    }
    return std::nullopt;
  }
  // The session's end, skipping what comes before it.
  static std::optional<pb::SessionEnd> EndOf(Mux& m, uint64_t session) {
    while (std::optional<pb::SessionResponse> in = NextOf(m, session)) {
      if (in->has_end()) return in->end();
    }
    return std::nullopt;
  }
  pb::TableInfo Info() {
    grpc::ClientContext ctx;
    pb::GetTableRequest get;
    get.set_table_id("t1");
    pb::TableInfo info;
    EXPECT_TRUE(stub->GetTable(&ctx, get, &info).ok());
    return info;
  }
  // Waits (up to 5 s) until seat `seat` shows `connected`.
  bool SeatConnectedBecomes(int seat, bool connected) {
    for (int i = 0; i < 250; ++i) {
      pb::TableInfo info = Info();
      if (info.seats(seat).connected() == connected) return true;
      absl::SleepFor(absl::Milliseconds(20));
    }
    return false;
  }

  FakeClock clock{absl::FromUnixSeconds(1'800'000'000)};
  FakeTableStore store{clock};
  FakeWalletPort wallet{clock};
  FakeRecordsPort records{clock};
  table::RulesEngineFactory engines;
  table::DeterministicSeedSource seeds{"m", "t"};
  std::unique_ptr<common::Metrics> metrics;
  std::unique_ptr<TableMetrics> table_metrics;
  std::unique_ptr<TableHost> host;
  std::unique_ptr<TableServiceImpl> service;
  std::unique_ptr<common::GrpcServer> server;
  std::unique_ptr<pb::TableService::Stub> stub;
};

TEST_F(ServerTest, WithoutThePlayerMetadataTheStreamIsUnauthenticated) {
  Stream s = Open("");
  pb::PlayResponse m;
  EXPECT_FALSE(s.rw->Read(&m));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServerTest, TheFirstMessageMustBeOpen) {
  Stream s;
  s.ctx->AddMetadata(kPlayerIdMetadata, "a");
  s.rw = stub->Play(s.ctx.get());
  s.rw->Write(Command(1, "join"));
  pb::PlayResponse m;
  EXPECT_FALSE(s.rw->Read(&m));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerTest, AnUnknownTableIsNotFound) {
  Stream s = Open("a", "nope");
  pb::PlayResponse m;
  EXPECT_FALSE(s.rw->Read(&m));
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, ATableOwnedElsewhereNamesItsOwnersAddress) {
  ASSERT_TRUE(store.Heartbeat({"inst-b", "10.0.0.2:7002"}, 60'000).ok());
  ASSERT_TRUE(store.Create("t9", "inst-b", "").ok());
  Stream s = Open("a", "t9");
  pb::PlayResponse m;
  EXPECT_FALSE(s.rw->Read(&m));
  grpc::Status st = s.rw->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  auto it = s.ctx->GetServerTrailingMetadata().find(kOwnerAddrMetadata);
  ASSERT_NE(it, s.ctx->GetServerTrailingMetadata().end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), "10.0.0.2:7002");
}

TEST_F(ServerTest, CommandsAreAnsweredExactly) {
  Stream s = Open("a");
  pb::PlayRequest move = Command(1, "move");
  move.mutable_command()->set_move("play");
  move.mutable_command()->set_card("AS");
  s.rw->Write(move);
  std::optional<pb::CommandResult> r = ResultOf(s, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), grpc::StatusCode::PERMISSION_DENIED);
  s.rw->Write(Command(2, "join"));
  r = ResultOf(s, 2);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), 0) << r->message();
  grpc::ClientContext ctx;
  pb::GetTableRequest get;
  get.set_table_id("t1");
  pb::TableInfo info;
  ASSERT_TRUE(stub->GetTable(&ctx, get, &info).ok());
  EXPECT_EQ(info.seats(2).player(), "a");
  EXPECT_TRUE(info.seats(2).connected());
  EXPECT_EQ(info.owner_instance(), "inst-a");
  s.ctx->TryCancel();
}

TEST_F(ServerTest, AFloodIsRefusedThenCutAndTheTableCarriesOn) {
  Stream flood = Open("a");
  for (uint64_t i = 1; i <= 20; ++i) flood.rw->Write(Command(i, "start_now"));
  int exhausted = 0;
  pb::PlayResponse m;
  while (flood.rw->Read(&m)) {
    if (m.has_result() && m.result().code() == grpc::StatusCode::RESOURCE_EXHAUSTED) ++exhausted;
  }
  EXPECT_EQ(flood.rw->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(exhausted, 4);  // 3 admitted by the burst, 4 refused, the 5th refusal cuts
  Stream host_stream = Open("host");
  host_stream.rw->Write(Command(1, "start_now"));
  std::optional<pb::CommandResult> r = ResultOf(host_stream, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), 0) << r->message();
  host_stream.ctx->TryCancel();
}

TEST_F(ServerTest, TheStreamCutSeriesAreThereAtZeroFromTheStart) {
  const std::string text = metrics->Serialize();
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "courtpiece_table_test_streams_cut_total{reason=\"queue_full\"} 0"));
  EXPECT_THAT(text,
              ::testing::HasSubstr("courtpiece_table_test_streams_cut_total{reason=\"flood\"} 0"));
}

// Also: the server's per-RPC interceptor counts the unary calls but not the Play streams (it
// would pass every message through the completion queue twice; the streams have their own
// metrics).
TEST_F(ServerTest, AnOversizedMessageIsRefused) {
  Stream s = Open("a");
  pb::PlayRequest big = Command(1, "report");
  big.mutable_command()->set_note_id(std::string(20 * 1024, 'x'));
  s.rw->Write(big);
  pb::PlayResponse m;
  while (s.rw->Read(&m)) {
  }
  EXPECT_EQ(s.rw->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  const std::string text = metrics->Serialize();
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "courtpiece_table_test_grpc_server_handled_total{code=\"OK\",method=\"/"
                        "courtpiece.table.v1.TableService/CreateTable\"} 1\n"));
  EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("TableService/Play\"")));
}

TEST_F(ServerTest, CheckVoiceLockNamesTheLockHolderOnly) {
  grpc::ClientContext ctx;
  pb::CheckVoiceLockRequest req;
  req.set_table_id("t1");
  req.set_player("host");
  pb::CheckVoiceLockResponse out;
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx, req, &out).ok());
  EXPECT_FALSE(out.may_send());
  EXPECT_EQ(out.reason(), "alone");
  EXPECT_EQ(out.seat(), 0);
  grpc::ClientContext ctx2;
  req.set_player("zed");
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx2, req, &out).ok());
  EXPECT_EQ(out.reason(), "not_seated");
  // Two people and a voice_start: the host holds the lock.
  Stream a = Open("a");
  a.rw->Write(Command(1, "join"));
  ASSERT_EQ(ResultOf(a, 1)->code(), 0);
  Stream h = Open("host");
  h.rw->Write(Command(1, "voice_start"));
  ASSERT_EQ(ResultOf(h, 1)->code(), 0);
  grpc::ClientContext ctx3;
  req.set_player("host");
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx3, req, &out).ok());
  EXPECT_TRUE(out.may_send());
  EXPECT_EQ(out.reason(), "");
  EXPECT_EQ(out.round(), 0u);
  grpc::ClientContext ctx4;
  req.set_player("a");
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx4, req, &out).ok());
  EXPECT_FALSE(out.may_send());
  EXPECT_EQ(out.reason(), "no_lock");
  // The host's discard uses the round's allowance.
  h.rw->Write(Command(2, "voice_discard"));
  ASSERT_EQ(ResultOf(h, 2)->code(), 0);
  grpc::ClientContext ctx5;
  req.set_player("host");
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx5, req, &out).ok());
  EXPECT_FALSE(out.may_send());
  EXPECT_EQ(out.reason(), "allowance_used");
  a.ctx->TryCancel();
  h.ctx->TryCancel();
}

TEST_F(ServerTest, AnnounceVoiceNoteAnnouncesToEveryStreamAndReplays) {
  Stream a = Open("a");
  a.rw->Write(Command(1, "join"));
  ASSERT_EQ(ResultOf(a, 1)->code(), 0);
  Stream h = Open("host");
  h.rw->Write(Command(1, "voice_start"));
  ASSERT_EQ(ResultOf(h, 1)->code(), 0);
  pb::AnnounceVoiceNoteRequest req;
  req.set_table_id("t1");
  req.set_player("host");
  req.set_round(0);
  req.set_note_id("note-1");
  req.set_duration_ms(4'200);
  const int64_t play_at = absl::ToUnixMillis(clock.Now()) + 1'000;  // the clock stands still
  pb::AnnounceVoiceNoteResponse out;
  {
    grpc::ClientContext ctx;
    common::SetTimeout(ctx, absl::Seconds(10));
    grpc::Status st = stub->AnnounceVoiceNote(&ctx, req, &out);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(out.play_at_ms(), play_at);
    EXPECT_FALSE(out.replayed());
  }
  // The other stream gets the note.
  pb::PlayResponse m;
  bool seen = false;
  while (!seen && a.rw->Read(&m)) {
    if (!m.has_event() || m.event().type() != "voice_note") continue;
    seen = true;
    EXPECT_EQ(m.event().seat(), 0);
    EXPECT_EQ(m.event().player(), "host");
    EXPECT_EQ(m.event().detail(), "note-1");
    EXPECT_EQ(m.event().value(), play_at);
  }
  EXPECT_TRUE(seen);
  {
    grpc::ClientContext ctx;
    common::SetTimeout(ctx, absl::Seconds(10));
    ASSERT_TRUE(stub->AnnounceVoiceNote(&ctx, req, &out).ok());
    EXPECT_EQ(out.play_at_ms(), play_at);
    EXPECT_TRUE(out.replayed());
  }
  {
    grpc::ClientContext ctx;
    common::SetTimeout(ctx, absl::Seconds(10));
    req.set_note_id("note-2");
    grpc::Status st = stub->AnnounceVoiceNote(&ctx, req, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(st.error_message(), "no_lock: you are not recording");
  }
  {
    grpc::ClientContext ctx;
    common::SetTimeout(ctx, absl::Seconds(10));
    req.set_round(7);
    grpc::Status st = stub->AnnounceVoiceNote(&ctx, req, &out);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(st.error_message(), "round_over: the note is of round 7, the table is in round 0");
  }
  {
    grpc::ClientContext ctx;
    common::SetTimeout(ctx, absl::Seconds(10));
    req.set_duration_ms(7'501);
    EXPECT_EQ(stub->AnnounceVoiceNote(&ctx, req, &out).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  a.ctx->TryCancel();
  h.ctx->TryCancel();
}

TEST_F(ServerTest, AnnounceVoiceNoteOfATableOwnedElsewhereNamesItsOwnersAddress) {
  ASSERT_TRUE(store.Heartbeat({"inst-b", "10.0.0.2:7002"}, 60'000).ok());
  ASSERT_TRUE(store.Create("t9", "inst-b", "").ok());
  pb::AnnounceVoiceNoteRequest req;
  req.set_table_id("t9");
  req.set_player("a");
  req.set_note_id("n1");
  req.set_duration_ms(1'000);
  grpc::ClientContext ctx;
  common::SetTimeout(ctx, absl::Seconds(10));
  pb::AnnounceVoiceNoteResponse out;
  grpc::Status st = stub->AnnounceVoiceNote(&ctx, req, &out);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  auto it = ctx.GetServerTrailingMetadata().find(kOwnerAddrMetadata);
  ASSERT_NE(it, ctx.GetServerTrailingMetadata().end());
  EXPECT_EQ(std::string(it->second.data(), it->second.size()), "10.0.0.2:7002");
  grpc::ClientContext ctx2;
  common::SetTimeout(ctx2, absl::Seconds(10));
  req.set_table_id("nope");
  EXPECT_EQ(stub->AnnounceVoiceNote(&ctx2, req, &out).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ServerTest, AStreamsVoiceSentIsRefused) {
  Stream a = Open("a");
  a.rw->Write(Command(1, "join"));
  ASSERT_EQ(ResultOf(a, 1)->code(), 0);
  a.rw->Write(Command(2, "voice_start"));
  ASSERT_EQ(ResultOf(a, 2)->code(), 0);
  pb::PlayRequest sent = Command(3, "voice_sent");
  sent.mutable_command()->set_note_id("n1");
  sent.mutable_command()->set_duration_ms(3'000);
  a.rw->Write(sent);
  std::optional<pb::CommandResult> r = ResultOf(a, 3);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(r->message(),
            "voice_sent: a note is announced by the moderation service after its upload (POST "
            "/v1/voice or CourtPiece.UploadNote)");
  grpc::ClientContext ctx;
  pb::CheckVoiceLockRequest req;
  req.set_table_id("t1");
  req.set_player("a");
  pb::CheckVoiceLockResponse out;
  ASSERT_TRUE(stub->CheckVoiceLock(&ctx, req, &out).ok());
  EXPECT_TRUE(out.may_send());  // the lock stays
  a.ctx->TryCancel();
}

TEST_F(ServerTest, AMessageOver16KiBIsRefusedByTheStreamUnderGrpcsOwnBound) {
  Stream s = Open("a");
  pb::PlayRequest big = Command(1, "report");
  big.mutable_command()->set_note_id(std::string(16 * 1024 + 100, 'x'));  // under gRPC's 64
  s.rw->Write(big);
  pb::PlayResponse m;
  while (s.rw->Read(&m)) {
  }
  grpc::Status st = s.rw->Finish();
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(st.error_message(), "a message over 16 KiB");
}

// --- PlayMux: sessions are Play streams --------------------------------------------------

TEST_F(ServerTest, TwoSessionsOfOneMuxPlayAsTwoStreams) {
  std::unique_ptr<Mux> m = OpenMux();
  MuxWrite(*m, {OpenOf(1, "host"), OpenOf(2, "a")});  // one batch, two sessions
  std::optional<pb::SessionResponse> opened = NextOf(*m, 2);
  ASSERT_TRUE(opened.has_value());
  ASSERT_TRUE(opened->response().has_opened());
  EXPECT_EQ(opened->response().opened().seat(), -1);
  opened = NextOf(*m, 1);
  ASSERT_TRUE(opened.has_value());
  EXPECT_EQ(opened->response().opened().seat(), 0);
  MuxCommand(*m, 2, Command(7, "join"));
  std::optional<pb::CommandResult> r = MuxResultOf(*m, 2, 7);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), 0) << r->message();
  // The host's session sees the join.
  bool seen = false;
  while (!seen) {
    std::optional<pb::SessionResponse> in = NextOf(*m, 1);
    ASSERT_TRUE(in.has_value());
    seen = in->response().has_event() && in->response().event().type() == "seated" &&
           in->response().event().player() == "a";
    if (seen) {
      EXPECT_EQ(in->response().event().seat(), 2);
    }
  }
  pb::TableInfo info = Info();
  EXPECT_EQ(info.seats(2).player(), "a");
  EXPECT_TRUE(info.seats(2).connected());
  // close: the session ends OK and the table sees a disconnect; the other one carries on.
  pb::SessionRequest close;
  close.set_session(2);
  close.set_close(true);
  MuxWrite(*m, {close});
  std::optional<pb::SessionEnd> end = EndOf(*m, 2);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), 0);
  EXPECT_TRUE(SeatConnectedBecomes(2, false));
  EXPECT_TRUE(Info().seats(0).connected());
  bool away = false;  // and the host's session hears of it
  while (!away) {
    std::optional<pb::SessionResponse> in = NextOf(*m, 1);
    ASSERT_TRUE(in.has_value());
    away = in->response().has_event() && in->response().event().type() == "away" &&
           in->response().event().player() == "a";
    if (away) {
      EXPECT_EQ(in->response().event().detail(), "disconnected");
    }
  }
  m->ctx->TryCancel();
}

TEST_F(ServerTest, ASessionEndsWithWhatAPlayStreamWouldBeFinishedWith) {
  ASSERT_TRUE(store.Heartbeat({"inst-b", "10.0.0.2:7002"}, 60'000).ok());
  ASSERT_TRUE(store.Create("t9", "inst-b", "").ok());
  std::unique_ptr<Mux> m = OpenMux();
  MuxOpen(*m, 1, "");
  MuxOpen(*m, 2, "a", "nope");
  MuxOpen(*m, 3, "a", "t9");
  MuxOpen(*m, 4, "a");
  pb::SessionRequest command_first;  // a command of a session never opened: dropped
  command_first.set_session(5);
  command_first.mutable_command()->set_type("join");
  pb::SessionRequest empty;  // neither open, command nor close
  empty.set_session(6);
  MuxWrite(*m, {command_first, empty});
  std::optional<pb::SessionEnd> end = EndOf(*m, 1);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(end->message(),
            "player: the gateway must name the player (1..64 chars of [A-Za-z0-9_-])");
  end = EndOf(*m, 2);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::NOT_FOUND);
  end = EndOf(*m, 3);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(end->owner_addr(), "10.0.0.2:7002");
  end = EndOf(*m, 6);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::INVALID_ARGUMENT);
  std::optional<pb::SessionResponse> opened = NextOf(*m, 4);
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->response().has_opened());
  MuxOpen(*m, 4, "a");  // a second open of a live session
  end = EndOf(*m, 4);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(end->message(), "the session is open already");
  EXPECT_TRUE(m->read[5].empty());
  m->ctx->TryCancel();
}

TEST_F(ServerTest, AFloodOrAnOversizedCommandEndsOnlyItsSession) {
  std::unique_ptr<Mux> m = OpenMux();
  MuxOpen(*m, 1, "a");
  MuxOpen(*m, 2, "host");
  MuxOpen(*m, 3, "b");
  ASSERT_TRUE(NextOf(*m, 1).has_value());  // opened
  for (uint64_t i = 1; i <= 20; ++i) MuxCommand(*m, 1, Command(i, "start_now"));
  int exhausted = 0;
  std::optional<pb::SessionEnd> end;
  while (std::optional<pb::SessionResponse> in = NextOf(*m, 1)) {
    if (in->has_end()) {
      end = in->end();
      break;
    }
    if (in->response().has_result() &&
        in->response().result().code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
      ++exhausted;
    }
  }
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(end->message(), "the stream sent too many refused commands");
  EXPECT_EQ(exhausted, 4);  // 3 admitted by the burst, 4 refused, the 5th refusal cuts
  ASSERT_TRUE(NextOf(*m, 3).has_value());  // opened
  pb::PlayRequest big = Command(1, "report");
  big.mutable_command()->set_note_id(std::string(16 * 1024 + 100, 'x'));
  MuxCommand(*m, 3, big);
  end = EndOf(*m, 3);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(end->message(), "a message over 16 KiB");
  MuxCommand(*m, 2, Command(1, "start_now"));
  std::optional<pb::CommandResult> r = MuxResultOf(*m, 2, 1);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->code(), 0) << r->message();
  m->ctx->TryCancel();
}

TEST_F(ServerTest, TheEndOfTheMuxIsADisconnectForEverySession) {
  std::unique_ptr<Mux> m = OpenMux();
  MuxOpen(*m, 1, "host");
  MuxOpen(*m, 2, "a");
  MuxCommand(*m, 2, Command(1, "join"));
  ASSERT_EQ(MuxResultOf(*m, 2, 1)->code(), 0);
  EXPECT_TRUE(SeatConnectedBecomes(0, true));
  ASSERT_TRUE(m->rw->WritesDone());
  EXPECT_EQ(EndOf(*m, 1)->code(), 0);
  EXPECT_EQ(EndOf(*m, 2)->code(), 0);
  pb::PlayMuxResponse rest;
  EXPECT_FALSE(m->rw->Read(&rest));
  EXPECT_TRUE(m->rw->Finish().ok());
  EXPECT_TRUE(SeatConnectedBecomes(0, false));
  EXPECT_TRUE(SeatConnectedBecomes(2, false));
  // A mux cancelled by its caller: the same.
  std::unique_ptr<Mux> again = OpenMux();
  MuxOpen(*again, 1, "a");
  ASSERT_TRUE(NextOf(*again, 1).has_value());
  EXPECT_TRUE(SeatConnectedBecomes(2, true));
  again->ctx->TryCancel();
  EXPECT_TRUE(SeatConnectedBecomes(2, false));
}

TEST_F(ServerTest, AnOpenPastTheSessionsBoundEndsOnlyThatSession) {
  StreamLimits limits;
  limits.mux_sessions_max = 2;
  TableServiceImpl bounded(*host, table_metrics.get(), limits);
  std::unique_ptr<common::GrpcServer> bounded_server =
      *common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {&bounded}, *metrics);
  auto bounded_stub = pb::TableService::NewStub(
      common::CreateGrpcChannel(bounded_server->LoopbackAddress(), nullptr));
  Mux m;
  common::SetTimeout(*m.ctx, absl::Seconds(10));
  m.rw = bounded_stub->PlayMux(m.ctx.get());
  MuxWrite(m, {OpenOf(1, "host"), OpenOf(2, "a"), OpenOf(3, "b")});
  std::optional<pb::SessionEnd> end = EndOf(m, 3);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(end->message(), "too many sessions on this stream");
  std::optional<pb::SessionResponse> opened = NextOf(m, 2);
  ASSERT_TRUE(opened.has_value());
  EXPECT_TRUE(opened->response().has_opened());
  m.ctx->TryCancel();
  bounded_server->Shutdown(absl::Now() + absl::Seconds(2));
}

TEST_F(ServerTest, ListTablesNamesThisInstancesTables) {
  grpc::ClientContext ctx;
  pb::ListTablesResponse out;
  ASSERT_TRUE(stub->ListTables(&ctx, pb::ListTablesRequest(), &out).ok());
  ASSERT_EQ(out.tables_size(), 1);
  EXPECT_EQ(out.tables(0).table_id(), "t1");
  EXPECT_EQ(out.tables(0).code(), "654321");
}

TEST_F(ServerTest, ListTablesFiltersAndJoinTableSeatsOverGrpc) {
  {
    grpc::ClientContext ctx;
    pb::ListTablesRequest req;
    req.set_open_only(true);  // t1 is not listed
    pb::ListTablesResponse out;
    ASSERT_TRUE(stub->ListTables(&ctx, req, &out).ok());
    EXPECT_EQ(out.tables_size(), 0);
  }
  {
    grpc::ClientContext ctx;
    pb::JoinTableRequest req;
    req.set_table_id("t1");
    req.set_player("a");
    pb::JoinTableResponse out;
    grpc::Status s = stub->JoinTable(&ctx, req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(out.seat(), 2);
    EXPECT_EQ(out.table().seats(2).player(), "a");
    EXPECT_FALSE(out.table().seats(2).connected());
  }
  {
    grpc::ClientContext ctx;
    pb::ListTablesRequest req;
    req.set_player("a");
    pb::ListTablesResponse out;
    ASSERT_TRUE(stub->ListTables(&ctx, req, &out).ok());
    ASSERT_EQ(out.tables_size(), 1);
    EXPECT_EQ(out.tables(0).table_id(), "t1");
  }
  {
    grpc::ClientContext ctx;
    pb::JoinTableRequest req;
    req.set_table_id("nope");
    req.set_player("a");
    pb::JoinTableResponse out;
    EXPECT_EQ(stub->JoinTable(&ctx, req, &out).error_code(), grpc::StatusCode::NOT_FOUND);
  }
}

}  // namespace
}  // namespace courtpiece::table_service
