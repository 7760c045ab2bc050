// MuxTableDialer against a scripted PlayMux server on loopback port 0: sessions share one
// stream per address, each session's messages and end reach its own observer, Send's bounds,
// Cancel and Close, and the stream's death ending every session UNAVAILABLE. (Against real
// table instances: relay_table_e2e_test.)
#include "services/gateway/mux_table_dialer.h"

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_upstream.h"

namespace courtpiece::gateway {
namespace {

namespace pb = ::courtpiece::table::v1;

constexpr auto kWait = std::chrono::seconds(10);

// Answers `open` with `opened` (seat = the number of sessions opened on its stream so far),
// a command with a result naming its session and player, `close` with end OK. Commands:
// "end_mine" ends the session FAILED_PRECONDITION with an owner address; "die" ends the whole
// stream INTERNAL; "hold" blocks the stream's reader until Release() (the writes back up).
class ScriptedMux final : public pb::TableService::Service {
 public:
  grpc::Status PlayMux(
      grpc::ServerContext*,
      grpc::ServerReaderWriter<pb::PlayMuxResponse, pb::PlayMuxRequest>* stream) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++streams_;
    }
    std::map<uint64_t, std::string> players;
    pb::PlayMuxRequest batch;
    while (stream->Read(&batch)) {
      pb::PlayMuxResponse answers;  // one batch back per batch read
      for (const pb::SessionRequest& in : batch.requests()) {
        pb::SessionResponse& out = *answers.add_responses();
        out.set_session(in.session());
        if (in.has_open()) {
          players[in.session()] = in.player();
          out.mutable_response()->mutable_opened()->set_seat(static_cast<int>(players.size()) - 1);
          out.mutable_response()->mutable_opened()->mutable_table()->set_table_id(
              in.open().table_id());
        } else if (in.has_close()) {
          out.mutable_end()->set_code(0);
          Record("close " + players[in.session()]);
        } else if (in.command().type() == "die") {
          return grpc::Status(grpc::StatusCode::INTERNAL, "scripted death");
        } else if (in.command().type() == "end_mine") {
          out.mutable_end()->set_code(static_cast<int>(grpc::StatusCode::FAILED_PRECONDITION));
          out.mutable_end()->set_message("owned elsewhere");
          out.mutable_end()->set_owner_addr("10.0.0.9:7002");
        } else {
          if (in.command().type() == "hold") {
            std::unique_lock<std::mutex> lock(mu_);
            cv_.wait(lock, [this] { return released_; });
          }
          Record(in.command().type() + " " + players[in.session()]);
          pb::CommandResult* r = out.mutable_response()->mutable_result();
          r->set_command_id(in.command().command_id());
          r->set_message(players[in.session()]);
        }
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        batches_ = std::max(batches_, batch.requests_size());
      }
      stream->Write(answers);
    }
    return grpc::Status::OK;
  }

  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }
  int streams() {
    std::lock_guard<std::mutex> lock(mu_);
    return streams_;
  }
  // The most requests one batch carried.
  int largest_batch() {
    std::lock_guard<std::mutex> lock(mu_);
    return batches_;
  }
  // What reached the server, in order ("<type> <player>").
  std::vector<std::string> seen() {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }
  bool WaitSeen(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, kWait, [&] { return seen_.size() >= n; });
  }

 private:
  void Record(std::string what) {
    std::lock_guard<std::mutex> lock(mu_);
    seen_.push_back(std::move(what));
    cv_.notify_all();
  }
  std::mutex mu_;
  std::condition_variable cv_;
  bool released_ = false;
  int streams_ = 0;
  int batches_ = 0;
  std::vector<std::string> seen_;
};

using Observer = RecordingObserver;

pb::PlayRequest Command(uint64_t id, const std::string& type) {
  pb::PlayRequest r;
  r.mutable_command()->set_command_id(id);
  r.mutable_command()->set_type(type);
  return r;
}
pb::OpenTable Open(const std::string& table) {
  pb::OpenTable o;
  o.set_table_id(table);
  return o;
}

class MuxTableDialerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    metrics = *common::Metrics::Create({.service = "mux_dialer_test"});
    server = *common::GrpcServer::Start({.listen_address = "127.0.0.1:0"}, {&service}, *metrics);
    addr = server->LoopbackAddress();
  }
  void TearDown() override {
    service.Release();  // a test that failed while the server's reader was held
    server->Shutdown(absl::Now() + absl::Seconds(2));
  }

  ScriptedMux service;
  std::unique_ptr<common::Metrics> metrics;
  std::unique_ptr<common::GrpcServer> server;
  std::string addr;
};

TEST_F(MuxTableDialerTest, SessionsShareOneStreamAndEachGetsItsOwnMessages) {
  MuxTableDialer dialer(nullptr);
  auto a = std::make_shared<Observer>();
  auto b = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sa = dialer.Open(addr, "pa", Open("t1"), a);
  std::shared_ptr<UpstreamStream> sb = dialer.Open(addr, "pb", Open("t2"), b);
  ASSERT_TRUE(sa->Send(Command(1, "move")));
  ASSERT_TRUE(sb->Send(Command(1, "join")));
  std::optional<pb::CommandResult> ra = a->WaitResult(1);
  std::optional<pb::CommandResult> rb = b->WaitResult(1);
  ASSERT_TRUE(ra.has_value());
  ASSERT_TRUE(rb.has_value());
  EXPECT_EQ(ra->message(), "pa");
  EXPECT_EQ(rb->message(), "pb");
  {
    std::lock_guard<std::mutex> lock(a->mu);
    ASSERT_TRUE(a->responses[0].has_opened());
    EXPECT_EQ(a->responses[0].opened().table().table_id(), "t1");
    EXPECT_EQ(a->responses[0].opened().seat(), 0);
  }
  {
    std::lock_guard<std::mutex> lock(b->mu);
    EXPECT_EQ(b->responses[0].opened().table().table_id(), "t2");
    EXPECT_EQ(b->responses[0].opened().seat(), 1);  // the second session on the same stream
  }
  EXPECT_EQ(service.streams(), 1);
  EXPECT_EQ(dialer.live_streams(), 1);
  EXPECT_EQ(dialer.live_sessions(), 2);
  // The table's end of one session: its code, message and owner address; the other lives on.
  ASSERT_TRUE(sa->Send(Command(2, "end_mine")));
  ASSERT_TRUE(a->WaitEnd());
  EXPECT_EQ(*a->end, absl::FailedPreconditionError("owned elsewhere"));
  EXPECT_EQ(a->end_owner_addr, "10.0.0.9:7002");
  EXPECT_FALSE(sa->Send(Command(3, "move")));  // ended: refused
  ASSERT_TRUE(sb->Send(Command(2, "move")));
  ASSERT_TRUE(b->WaitResult(2).has_value());
  EXPECT_EQ(dialer.live_sessions(), 1);
  sb->Cancel();
  ASSERT_TRUE(b->WaitEnd());
  EXPECT_EQ(b->end->code(), absl::StatusCode::kCancelled);
  sb->Cancel();  // harmless, once ended
  EXPECT_EQ(a->ends, 1);
  EXPECT_EQ(b->ends, 1);
}

TEST_F(MuxTableDialerTest, SessionsSpreadOverStreamsPerInstance) {
  MuxTableDialer dialer(nullptr, {.streams_per_instance = 2});
  std::vector<std::shared_ptr<Observer>> seen;
  std::vector<std::shared_ptr<UpstreamStream>> streams;
  for (int i = 0; i < 4; ++i) {
    seen.push_back(std::make_shared<Observer>());
    streams.push_back(dialer.Open(addr, "p" + std::to_string(i), Open("t1"), seen.back()));
  }
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(streams[i]->Send(Command(1, "move")));
    std::optional<pb::CommandResult> r = seen[i]->WaitResult(1);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->message(), "p" + std::to_string(i));
  }
  EXPECT_EQ(dialer.live_streams(), 2);
  EXPECT_EQ(dialer.live_sessions(), 4);
  EXPECT_EQ(service.streams(), 2);
  for (auto& s : streams) s->Cancel();
  for (auto& o : seen) ASSERT_TRUE(o->WaitEnd());
}

TEST_F(MuxTableDialerTest, CloseSendsTheQueuedCommandsFirstAndCancelDropsThem) {
  MuxTableDialer dialer(nullptr);
  auto a = std::make_shared<Observer>();
  auto b = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sa = dialer.Open(addr, "pa", Open("t1"), a);
  std::shared_ptr<UpstreamStream> sb = dialer.Open(addr, "pb", Open("t1"), b);
  ASSERT_TRUE(a->Wait([&] { return !a->responses.empty(); }));
  // The server's reader is held: everything below waits in the dialer's queue.
  ASSERT_TRUE(sa->Send(Command(1, "hold")));
  for (uint64_t id = 2; id <= 4; ++id) ASSERT_TRUE(sa->Send(Command(id, "leave")));
  for (uint64_t id = 1; id <= 3; ++id) ASSERT_TRUE(sb->Send(Command(id, "move")));
  sa->Close();
  EXPECT_FALSE(sa->Send(Command(5, "join")));  // nothing after Close
  sb->Cancel();
  service.Release();
  ASSERT_TRUE(a->WaitEnd());
  ASSERT_TRUE(b->WaitEnd());
  EXPECT_TRUE(a->end->ok()) << *a->end;
  EXPECT_EQ(b->end->code(), absl::StatusCode::kCancelled);
  // pa's commands all reached the table, in order, then its close. pb's close came after
  // whichever of its moves were on the wire already (Cancel drops only what still waited in
  // the dialer's queue), and its OnEnd says CANCELLED whatever the table answered.
  std::vector<std::string> pa, pb;
  for (const std::string& s : service.seen()) {
    (s.ends_with(" pa") ? pa : pb).push_back(s);
  }
  EXPECT_EQ(pa,
            (std::vector<std::string>{"hold pa", "leave pa", "leave pa", "leave pa", "close pa"}));
  ASSERT_FALSE(pb.empty());
  EXPECT_EQ(pb.back(), "close pb");
  EXPECT_LE(pb.size(), 4u);
  EXPECT_EQ(a->ends, 1);
  EXPECT_EQ(b->ends, 1);
}

TEST_F(MuxTableDialerTest, SendIsBoundedPerSessionAndRefusesAnOversizedCommand) {
  MuxTableDialer dialer(nullptr, {.send_queue_max = 3});
  auto a = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sa = dialer.Open(addr, "pa", Open("t1"), a);
  ASSERT_TRUE(a->Wait([&] { return !a->responses.empty(); }));
  pb::PlayRequest big = Command(9, "report");
  big.mutable_command()->set_note_id(std::string(16 * 1024 + 1, 'x'));
  EXPECT_FALSE(sa->Send(big));
  ASSERT_TRUE(sa->Send(Command(1, "hold")));
  // With the server's reader held, the stream's flow-control window fills (8 KiB commands),
  // then the dialer's queue: Send refuses once 3 of the session's commands wait.
  uint64_t last_accepted = 1;
  bool refused = false;
  for (uint64_t id = 2; id <= 400 && !refused; ++id) {
    pb::PlayRequest padded = Command(id, "move");
    padded.mutable_command()->set_note_id(std::string(8 * 1024, 'p'));
    if (sa->Send(padded)) {
      last_accepted = id;
    } else {
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_GE(last_accepted, 3u);  // at least the bound (more while writes complete)
  service.Release();
  // Every accepted command reaches the table and is answered; then there is room again.
  ASSERT_TRUE(a->WaitResult(last_accepted).has_value());
  // The 3 commands that waited were in the write the window stalled or behind it in the
  // queue, which goes as one batch: either way one batch carried at least 2. (Without a
  // stalled write, how Sends group depends on when each write completes.)
  EXPECT_GE(service.largest_batch(), 2);
  // Room again once the writes that carried them have completed. A write's completion
  // (OnWriteDone, which frees the session's places) may come after the answers to what it
  // carried: in CI's sanitizer run the first Send after the last answer was refused.
  bool sent = false;
  for (int i = 0; i < 500 && !sent; ++i) {
    sent = sa->Send(Command(1000, "move"));
    if (!sent) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(sent);
  ASSERT_TRUE(a->WaitResult(1000).has_value());
  sa->Cancel();
  ASSERT_TRUE(a->WaitEnd());
}

TEST_F(MuxTableDialerTest, AStreamsDeathEndsEverySessionUnavailableAndTheNextOpenDialsAgain) {
  MuxTableDialer dialer(nullptr);
  auto a = std::make_shared<Observer>();
  auto b = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sa = dialer.Open(addr, "pa", Open("t1"), a);
  std::shared_ptr<UpstreamStream> sb = dialer.Open(addr, "pb", Open("t1"), b);
  ASSERT_TRUE(b->Wait([&] { return !b->responses.empty(); }));
  ASSERT_TRUE(sa->Send(Command(1, "die")));
  ASSERT_TRUE(a->WaitEnd());
  ASSERT_TRUE(b->WaitEnd());
  EXPECT_EQ(a->end->code(), absl::StatusCode::kUnavailable) << *a->end;
  EXPECT_EQ(b->end->code(), absl::StatusCode::kUnavailable) << *b->end;
  EXPECT_EQ(a->end_owner_addr, "");
  EXPECT_FALSE(sb->Send(Command(2, "move")));
  EXPECT_EQ(dialer.live_streams(), 0);
  auto c = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sc = dialer.Open(addr, "pc", Open("t1"), c);
  ASSERT_TRUE(sc->Send(Command(1, "move")));
  std::optional<pb::CommandResult> rc = c->WaitResult(1);
  ASSERT_TRUE(rc.has_value());
  EXPECT_EQ(rc->message(), "pc");
  EXPECT_EQ(service.streams(), 2);
  // Nothing listening: UNAVAILABLE, after Open returned.
  server->Shutdown(absl::Now() + absl::Seconds(2));
  auto d = std::make_shared<Observer>();
  ASSERT_TRUE(c->WaitEnd());
  EXPECT_EQ(c->end->code(), absl::StatusCode::kUnavailable);
  dialer.Open(addr, "pd", Open("t1"), d);
  ASSERT_TRUE(d->WaitEnd());
  EXPECT_EQ(d->end->code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(d->ends, 1);
}

// main destroys the dialer before the metrics its channels record each finished call to:
// the destructor cancels every stream still running and returns once they have ended (the
// sessions told), so no call finishes on a gRPC thread after the metrics are gone.
TEST_F(MuxTableDialerTest, DestroyingTheDialerEndsEveryStreamBeforeItReturns) {
  auto a = std::make_shared<Observer>();
  auto b = std::make_shared<Observer>();
  std::shared_ptr<UpstreamStream> sa, sb;
  {
    MuxTableDialer dialer(metrics.get(), {.streams_per_instance = 2});
    sa = dialer.Open(addr, "pa", Open("t1"), a);
    sb = dialer.Open(addr, "pb", Open("t1"), b);
    ASSERT_TRUE(a->WaitOpened().has_value());
    ASSERT_TRUE(b->WaitOpened().has_value());
    ASSERT_EQ(dialer.live_streams(), 2);
  }
  for (const std::shared_ptr<Observer>& o : {a, b}) {
    std::lock_guard<std::mutex> lock(o->mu);  // no wait: ended already
    EXPECT_EQ(o->ends, 1);
    ASSERT_TRUE(o->end.has_value());
    EXPECT_EQ(o->end->code(), absl::StatusCode::kUnavailable) << *o->end;
  }
  EXPECT_FALSE(sa->Send(Command(1, "move")));  // the handles stay safe to call
  sb->Cancel();
}

}  // namespace
}  // namespace courtpiece::gateway
