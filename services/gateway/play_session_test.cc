#include "services/gateway/play_session.h"

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/fake_upstream.h"

namespace courtpiece::gateway {
namespace {

using ::testing::ElementsAre;

class RecordingSink final : public ClientSink {
 public:
  bool Send(client::v1::PlayResponse message) override {
    std::lock_guard<std::mutex> lock(mu);
    if (finish.has_value()) return false;
    messages.push_back(std::move(message));
    return true;
  }
  void Finish(const absl::Status& status) override {
    std::lock_guard<std::mutex> lock(mu);
    ++finishes;
    if (!finish.has_value()) finish = status;
  }
  // A compact view of what the client saw: "opened r=0 seat=1", "event 3 hand", ...
  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mu);
    std::vector<std::string> out;
    for (const auto& m : messages) {
      switch (m.msg_case()) {
        case client::v1::PlayResponse::kOpened:
          out.push_back(
              absl::StrCat("opened r=", m.opened().resumed() ? 1 : 0, " seat=", m.opened().seat()));
          break;
        case client::v1::PlayResponse::kEvent:
          out.push_back(absl::StrCat("event ", m.event().seq(), " ", m.event().type()));
          break;
        case client::v1::PlayResponse::kResult:
          out.push_back(absl::StrCat("result ", m.result().command_id(), " ", m.result().code(),
                                     " ", m.result().message()));
          break;
        case client::v1::PlayResponse::kNotice:
          out.push_back(absl::StrCat("notice ", m.notice().type()));
          break;
        default:
          out.push_back("?");
      }
    }
    return out;
  }

  std::mutex mu;
  std::vector<client::v1::PlayResponse> messages;
  std::optional<absl::Status> finish;
  int finishes = 0;
};

class CountingMetrics final : public GatewayMetrics {
 public:
  void ConnectionOpened(std::string_view) override {}
  void ConnectionClosed(std::string_view) override {}
  void ConnectionRefused(std::string_view) override {}
  void MessageIn(std::string_view kind) override { ++in[std::string(kind)]; }
  void MessageOut(std::string_view kind) override { ++out[std::string(kind)]; }
  void SendQueueDrop(std::string_view) override {}
  void RateLimited(std::string_view kind) override { ++rate_limited[std::string(kind)]; }
  void UpstreamCall(std::string_view, int, double) override {}
  void Reconnect(std::string_view outcome) override { ++reconnects[std::string(outcome)]; }

  std::map<std::string, int> in, out, rate_limited, reconnects;
};

constexpr char kMaybe[] =
    "the table is moving to another server; may not have been applied; check the events";
constexpr char kNotApplied[] = "the table is moving to another server; not applied";

table::v1::PlayResponse Opened(int seat, bool resumed, uint64_t seq) {
  table::v1::PlayResponse r;
  r.mutable_opened()->set_seat(seat);
  r.mutable_opened()->set_resumed(resumed);
  r.mutable_opened()->mutable_table()->set_table_id("t-1");
  r.mutable_opened()->mutable_table()->set_seq(seq);
  r.mutable_opened()->mutable_table()->set_owner_addr("10.0.0.1:7000");  // internal
  r.mutable_opened()->mutable_table()->set_owner_instance("table-a");    // internal
  r.mutable_opened()->mutable_table()->set_owner_epoch(3);               // internal
  return r;
}

table::v1::PlayResponse Event(uint64_t seq, const std::string& type) {
  table::v1::PlayResponse r;
  r.mutable_event()->set_seq(seq);
  r.mutable_event()->set_type(type);
  return r;
}

table::v1::PlayResponse ResultOf(uint64_t id, int code) {
  table::v1::PlayResponse r;
  r.mutable_result()->set_command_id(id);
  r.mutable_result()->set_code(code);
  return r;
}

client::v1::PlayRequest OpenMsg(const std::string& table_id, uint64_t last_seq = 0) {
  client::v1::PlayRequest m;
  m.mutable_open()->set_table_id(table_id);
  m.mutable_open()->set_last_seq(last_seq);
  return m;
}

client::v1::PlayRequest Command(uint64_t id, const std::string& type = "start_now") {
  client::v1::PlayRequest m;
  m.mutable_command()->set_command_id(id);
  m.mutable_command()->set_type(type);
  return m;
}

class PlaySessionTest : public ::testing::Test {
 protected:
  PlaySessionTest() : service_(Deps(), PlaySessionOptions{.kind = "websocket"}) {
    owners_.Set("t-1", std::string("10.0.0.1:7000"));
  }

  PlayDeps Deps() {
    return PlayDeps{.dialer = dialer_,
                    .owners = owners_,
                    .scheduler = scheduler_,
                    .clock = clock_,
                    .metrics = metrics_};
  }

  // Connects, opens t-1 and runs the first attempt: one upstream stream.
  void Open(uint64_t last_seq = 0) {
    conn_ = service_.Connect("p1", "1.2.3.4:5555", sink_);
    conn_->OnClientMessage(OpenMsg("t-1", last_seq));
    scheduler_.RunDue();
    ASSERT_EQ(dialer_.calls(), 1);
  }

  // Open, then the table answers opened (not resumed) and events 1..events.
  void OpenAndPlay(int events) {
    Open();
    dialer_.last().Respond(Opened(1, false, 0));
    for (int i = 1; i <= events; ++i) dialer_.last().Respond(Event(i, absl::StrCat("e", i)));
  }

  std::vector<uint64_t> SentCommandIds(const FakeCall& call) {
    std::vector<uint64_t> ids;
    for (const auto& r : call.stream->sent()) ids.push_back(r.command().command_id());
    return ids;
  }

  FakeClock clock_;
  FakeScheduler scheduler_{clock_};
  FakeTableDialer dialer_;
  FakeOwnerLookup owners_;
  CountingMetrics metrics_;
  PlaySessionService service_;
  std::shared_ptr<RecordingSink> sink_ = std::make_shared<RecordingSink>();
  std::shared_ptr<PlayConnection> conn_;
};

TEST_F(PlaySessionTest, RelaysOpenEventsCommandsAndResultsWithInternalFieldsDropped) {
  conn_ = service_.Connect("p1", "1.2.3.4:5555", sink_);
  client::v1::PlayRequest open = OpenMsg("t-1", 0);
  open.mutable_open()->set_access_token("secret-token");
  conn_->OnClientMessage(open);
  EXPECT_EQ(dialer_.calls(), 0);  // the lookup runs on the scheduler
  scheduler_.RunDue();
  ASSERT_EQ(dialer_.calls(), 1);
  const FakeCall call = dialer_.call(0);
  EXPECT_EQ(call.addr, "10.0.0.1:7000");
  EXPECT_EQ(call.player_id, "p1");
  EXPECT_EQ(call.open.table_id(), "t-1");
  EXPECT_EQ(call.open.last_seq(), 0u);
  EXPECT_EQ(call.open.SerializeAsString().find("secret-token"), std::string::npos);

  call.Respond(Opened(2, false, 0));
  call.Respond(Event(1, "seated"));
  call.Respond(Event(2, "hand"));
  conn_->OnClientMessage(Command(7, "join"));
  ASSERT_EQ(SentCommandIds(call), std::vector<uint64_t>{7});
  EXPECT_EQ(call.stream->sent()[0].command().type(), "join");
  call.Respond(ResultOf(7, 0));

  EXPECT_THAT(sink_->Lines(),
              ElementsAre("opened r=0 seat=2", "event 1 seated", "event 2 hand", "result 7 0 "));
  // The client type has no owner fields, and none ride along as unknown fields.
  const client::v1::PlayResponse& opened = sink_->messages[0];
  EXPECT_EQ(opened.opened().table().table_id(), "t-1");
  EXPECT_TRUE(
      opened.opened().table().GetReflection()->GetUnknownFields(opened.opened().table()).empty());
  EXPECT_EQ(opened.SerializeAsString().find("10.0.0.1"), std::string::npos);
  EXPECT_FALSE(sink_->finish.has_value());
  EXPECT_EQ(metrics_.in["websocket"], 2);
  EXPECT_EQ(metrics_.out["websocket"], 4);
}

TEST_F(PlaySessionTest, CommandsBeforeTheStreamExistsAreHeldThenSent) {
  conn_ = service_.Connect("p1", "peer", sink_);
  conn_->OnClientMessage(OpenMsg("t-1"));
  conn_->OnClientMessage(Command(1, "join"));
  conn_->OnClientMessage(Command(2, "start_now"));
  scheduler_.RunDue();
  ASSERT_EQ(dialer_.calls(), 1);
  EXPECT_EQ(SentCommandIds(dialer_.last()), (std::vector<uint64_t>{1, 2}));
}

TEST_F(PlaySessionTest, ResumeByLastSeqSwallowsOpenedAndNeverDoublesAnEvent) {
  OpenAndPlay(3);
  const FakeCall first = dialer_.last();
  conn_->OnClientMessage(Command(9));  // in flight when the table moves
  owners_.Set("t-1", std::string("10.0.0.2:7000"));
  first.End(absl::UnavailableError("draining"));
  conn_->OnClientMessage(Command(10));  // in the pause
  EXPECT_EQ(dialer_.calls(), 1);
  scheduler_.AdvanceAndRun(absl::Milliseconds(49));
  EXPECT_EQ(dialer_.calls(), 1);
  scheduler_.AdvanceAndRun(absl::Milliseconds(1));  // the first retry, after 50 ms
  ASSERT_EQ(dialer_.calls(), 2);
  const FakeCall second = dialer_.last();
  EXPECT_EQ(second.addr, "10.0.0.2:7000");
  EXPECT_EQ(second.open.last_seq(), 3u);
  second.Respond(Opened(1, true, 5));
  second.Respond(Event(3, "e3"));  // already delivered: dropped
  second.Respond(Event(4, "e4"));
  second.Respond(Event(5, "e5"));
  first.Respond(Event(6, "stale"));  // the old stream is gone: ignored

  EXPECT_THAT(sink_->Lines(),
              ElementsAre("opened r=0 seat=1", "event 1 e1", "event 2 e2", "event 3 e3",
                          absl::StrCat("result 9 14 ", kMaybe), "notice reconnecting",
                          absl::StrCat("result 10 14 ", kNotApplied), "notice reconnected",
                          "event 4 e4", "event 5 e5"));
  EXPECT_EQ(metrics_.reconnects["resumed"], 1);
  EXPECT_EQ(metrics_.reconnects.size(), 1u);
  // Commands flow to the new stream.
  conn_->OnClientMessage(Command(11));
  EXPECT_EQ(SentCommandIds(second), std::vector<uint64_t>{11});
  EXPECT_TRUE(SentCommandIds(first).size() == 1);
}

TEST_F(PlaySessionTest, NotResumedOpenedIsForwardedAndItsViewIsNotDeduplicated) {
  OpenAndPlay(4);
  dialer_.last().End(absl::CancelledError("transport closed"));
  scheduler_.AdvanceAndRun(absl::Milliseconds(50));
  ASSERT_EQ(dialer_.calls(), 2);
  EXPECT_EQ(dialer_.last().open.last_seq(), 4u);
  dialer_.last().Respond(Opened(1, false, 2));  // e.g. a table restored from older state
  dialer_.last().Respond(Event(3, "seated"));
  dialer_.last().Respond(Event(4, "hand"));
  dialer_.last().Respond(Event(4, "hand"));  // a true repeat is still dropped
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=1", "event 1 e1", "event 2 e2",
                                          "event 3 e3", "event 4 e4", "notice reconnecting",
                                          "opened r=0 seat=1", "event 3 seated", "event 4 hand"));
  EXPECT_EQ(metrics_.reconnects["snapshot"], 1);
}

TEST_F(PlaySessionTest, BacksOffAndGivesUpUnavailableAfterTheResumeTimeout) {
  OpenAndPlay(1);
  owners_.Set("t-1", absl::UnavailableError("owner table-a not live"));
  dialer_.last().End(absl::UnavailableError("connection refused"));
  const int lookups_before = owners_.lookups();
  // Retries at 50, 150, 350, 750, 1550 ms, then every second up to 29550 ms.
  scheduler_.AdvanceAndRun(absl::Milliseconds(1550));
  EXPECT_EQ(owners_.lookups() - lookups_before, 5);
  scheduler_.AdvanceAndRun(absl::Milliseconds(29999 - 1550));
  EXPECT_EQ(owners_.lookups() - lookups_before, 33);
  EXPECT_FALSE(sink_->finish.has_value());
  conn_->OnClientMessage(Command(5));
  scheduler_.AdvanceAndRun(absl::Milliseconds(1));
  ASSERT_TRUE(sink_->finish.has_value());
  EXPECT_EQ(sink_->finish->code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(sink_->finish->message(), "the table could not be reached for 30s; reconnect");
  EXPECT_EQ(owners_.lookups() - lookups_before, 33);
  EXPECT_EQ(dialer_.calls(), 1);
  EXPECT_EQ(metrics_.reconnects["failed"], 1);
  EXPECT_EQ(scheduler_.pending(), 0);
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=1", "event 1 e1", "notice reconnecting",
                                          absl::StrCat("result 5 14 ", kNotApplied)));
}

TEST_F(PlaySessionTest, FailedPreconditionWithOwnerAddrGoesThereAtOnce) {
  Open();
  EXPECT_EQ(dialer_.last().addr, "10.0.0.1:7000");
  dialer_.last().End(absl::FailedPreconditionError("owned by table-b"), "10.0.0.9:7001");
  scheduler_.RunDue();  // no time passes
  ASSERT_EQ(dialer_.calls(), 2);
  EXPECT_EQ(dialer_.last().addr, "10.0.0.9:7001");
  EXPECT_EQ(owners_.lookups(), 1);  // the address came from the table, not from Redis
  dialer_.last().Respond(Opened(0, false, 0));
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=0"));  // no notices before opened
  EXPECT_TRUE(metrics_.reconnects.empty());
}

TEST_F(PlaySessionTest, RedirectLoopsBackOffAfterTwoHops) {
  Open();
  dialer_.last().End(absl::FailedPreconditionError("owned elsewhere"), "b:1");
  scheduler_.RunDue();
  dialer_.last().End(absl::FailedPreconditionError("owned elsewhere"), "a:1");
  scheduler_.RunDue();
  ASSERT_EQ(dialer_.calls(), 3);
  dialer_.last().End(absl::FailedPreconditionError("owned elsewhere"), "b:1");
  scheduler_.RunDue();
  EXPECT_EQ(dialer_.calls(), 3);  // the third hop waits 50 ms
  scheduler_.AdvanceAndRun(absl::Milliseconds(50));
  EXPECT_EQ(dialer_.calls(), 4);
}

class TerminalCodeTest : public PlaySessionTest,
                         public ::testing::WithParamInterface<absl::StatusCode> {};

TEST_P(TerminalCodeTest, EndsTheClientStreamWithTheSameStatus) {
  OpenAndPlay(1);
  const absl::Status status(GetParam(), "the table said so");
  dialer_.last().End(status);  // FAILED_PRECONDITION without an owner address is terminal
  ASSERT_TRUE(sink_->finish.has_value());
  EXPECT_EQ(*sink_->finish, status);
  scheduler_.AdvanceAndRun(absl::Minutes(1));
  EXPECT_EQ(dialer_.calls(), 1);
  EXPECT_EQ(sink_->finishes, 1);
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=1", "event 1 e1"));
}

INSTANTIATE_TEST_SUITE_P(
    Codes, TerminalCodeTest,
    ::testing::Values(absl::StatusCode::kOk, absl::StatusCode::kNotFound,
                      absl::StatusCode::kAborted, absl::StatusCode::kInvalidArgument,
                      absl::StatusCode::kResourceExhausted, absl::StatusCode::kPermissionDenied,
                      absl::StatusCode::kUnauthenticated, absl::StatusCode::kFailedPrecondition));

TEST_F(PlaySessionTest, RateLimitRefusesPastTheBurstAndClosesAtTheHundredthRefusal) {
  OpenAndPlay(0);
  for (uint64_t id = 1; id <= 40; ++id) conn_->OnClientMessage(Command(id));
  EXPECT_EQ(dialer_.last().stream->sent().size(), 40u);
  conn_->OnClientMessage(Command(41));     // refusal 1
  clock_.Advance(absl::Milliseconds(50));  // one token at 20/s
  conn_->OnClientMessage(Command(42));
  EXPECT_EQ(dialer_.last().stream->sent().size(), 41u);
  for (uint64_t id = 43; id <= 140; ++id) conn_->OnClientMessage(Command(id));  // 2..99
  EXPECT_FALSE(sink_->finish.has_value());
  conn_->OnClientMessage(Command(141));  // refusal 100
  ASSERT_TRUE(sink_->finish.has_value());
  EXPECT_EQ(sink_->finish->code(), absl::StatusCode::kResourceExhausted);
  conn_->OnClientMessage(Command(142));  // after the end: nothing
  int refused = 0;
  for (const auto& m : sink_->messages) {
    if (m.has_result()) {
      EXPECT_EQ(m.result().code(), 8);
      EXPECT_EQ(m.result().message(), "too many commands: at most 20 a second, burst 40");
      ++refused;
    }
  }
  EXPECT_EQ(refused, 100);
  EXPECT_EQ(metrics_.rate_limited["websocket"], 100);
  EXPECT_EQ(dialer_.last().stream->sent().size(), 41u);
  EXPECT_TRUE(dialer_.last().stream->cancelled());
}

// The client goes: the upstream is closed after what it sent (a `leave` sent just before the
// client closed reaches the table as a leave, not a disconnect), then cut after 2 s if the
// table has not ended it; nothing more reaches the gone client.
TEST_F(PlaySessionTest, ClientGoneClosesUpstreamAfterItsCommandsThenCutsItAfterTheGrace) {
  OpenAndPlay(1);
  const FakeCall call = dialer_.last();
  conn_->OnClientMessage(Command(7, "leave"));
  conn_->OnClientGone();
  EXPECT_THAT(SentCommandIds(call), ElementsAre(7));
  EXPECT_EQ(call.stream->sent()[0].command().type(), "leave");
  EXPECT_TRUE(call.stream->closed());
  EXPECT_FALSE(call.stream->cancelled());
  scheduler_.AdvanceAndRun(absl::Milliseconds(1'999));
  EXPECT_FALSE(call.stream->cancelled());
  scheduler_.AdvanceAndRun(absl::Milliseconds(1));
  EXPECT_TRUE(call.stream->cancelled());
  call.Respond(Event(2, "late"));
  call.End(absl::CancelledError("cancelled"));
  scheduler_.AdvanceAndRun(absl::Seconds(5));
  EXPECT_EQ(dialer_.calls(), 1);
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=1", "event 1 e1"));
  EXPECT_FALSE(sink_->finish.has_value());
}

TEST_F(PlaySessionTest, ClientGoneDuringResumeCancelsTheRetry) {
  OpenAndPlay(0);
  dialer_.last().End(absl::UnavailableError("gone"));
  EXPECT_EQ(scheduler_.pending(), 1);
  conn_->OnClientGone();
  EXPECT_EQ(scheduler_.pending(), 0);
  scheduler_.AdvanceAndRun(absl::Seconds(5));
  EXPECT_EQ(dialer_.calls(), 1);
}

TEST_F(PlaySessionTest, AFreedSessionIgnoresUpstreamCallbacks) {
  OpenAndPlay(0);
  const FakeCall call = dialer_.last();
  conn_->OnClientGone();
  conn_.reset();  // the session is freed; the dialer still holds the observer
  call.Respond(Event(1, "late"));
  call.End(absl::UnavailableError("gone"));
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=0 seat=1"));
}

TEST_F(PlaySessionTest, BadFirstMessagesEndInvalidArgument) {
  {
    auto conn = service_.Connect("p1", "peer", sink_);
    conn->OnClientMessage(Command(1));
    ASSERT_TRUE(sink_->finish.has_value());
    EXPECT_EQ(*sink_->finish, absl::InvalidArgumentError("the first message must be open"));
  }
  {
    auto sink = std::make_shared<RecordingSink>();
    auto conn = service_.Connect("p1", "peer", sink);
    conn->OnClientMessage(OpenMsg("t-1"));
    conn->OnClientMessage(OpenMsg("t-1"));
    ASSERT_TRUE(sink->finish.has_value());
    EXPECT_EQ(*sink->finish, absl::InvalidArgumentError("a second open on this stream"));
    EXPECT_EQ(scheduler_.pending(), 0);
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "t 1", "t/../x", std::string(65, 'a')}) {
    auto sink = std::make_shared<RecordingSink>();
    auto conn = service_.Connect("p1", "peer", sink);
    conn->OnClientMessage(OpenMsg(bad));
    ASSERT_TRUE(sink->finish.has_value()) << bad;
    EXPECT_EQ(sink->finish->code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  {
    auto sink = std::make_shared<RecordingSink>();
    auto conn = service_.Connect("p1", "peer", sink);
    conn->OnClientMessage(client::v1::PlayRequest());
    ASSERT_TRUE(sink->finish.has_value());
    EXPECT_EQ(sink->finish->code(), absl::StatusCode::kInvalidArgument);
  }
  scheduler_.RunDue();
  EXPECT_EQ(dialer_.calls(), 0);
}

TEST_F(PlaySessionTest, UnknownTableEndsNotFound) {
  conn_ = service_.Connect("p1", "peer", sink_);
  conn_->OnClientMessage(OpenMsg("t-nope"));
  scheduler_.RunDue();
  ASSERT_TRUE(sink_->finish.has_value());
  EXPECT_EQ(*sink_->finish, absl::NotFoundError("unknown table t-nope"));
  EXPECT_EQ(dialer_.calls(), 0);
}

TEST_F(PlaySessionTest, FirstConnectRetriesSilentlyWhileTheOwnerIsDown) {
  owners_.Set("t-1", absl::UnavailableError("owner not live"));
  conn_ = service_.Connect("p1", "peer", sink_);
  conn_->OnClientMessage(OpenMsg("t-1", 7));
  scheduler_.RunDue();
  EXPECT_EQ(dialer_.calls(), 0);
  owners_.Set("t-1", std::string("10.0.0.3:7000"));
  scheduler_.AdvanceAndRun(absl::Milliseconds(50));
  ASSERT_EQ(dialer_.calls(), 1);
  EXPECT_EQ(dialer_.last().open.last_seq(), 7u);
  dialer_.last().Respond(Opened(1, true, 9));
  dialer_.last().Respond(Event(8, "e8"));
  EXPECT_THAT(sink_->Lines(), ElementsAre("opened r=1 seat=1", "event 8 e8"));
  EXPECT_TRUE(metrics_.reconnects.empty());
}

// A sink that ends the connection from inside Send (a front whose queue is full) must not
// deadlock the session.
TEST_F(PlaySessionTest, SinkThatCallsBackIntoTheSessionDoesNotDeadlock) {
  class ReentrantSink final : public ClientSink {
   public:
    bool Send(client::v1::PlayResponse) override {
      ++sends;
      if (sends == 2 && conn != nullptr) conn->OnClientGone();
      return sends < 2;
    }
    void Finish(const absl::Status&) override {}
    PlayConnection* conn = nullptr;
    int sends = 0;
  };
  auto sink = std::make_shared<ReentrantSink>();
  conn_ = service_.Connect("p1", "peer", sink);
  sink->conn = conn_.get();
  conn_->OnClientMessage(OpenMsg("t-1"));
  scheduler_.RunDue();
  const FakeCall call = dialer_.last();
  call.Respond(Opened(1, false, 0));
  call.Respond(Event(1, "e1"));
  call.Respond(Event(2, "e2"));
  EXPECT_EQ(sink->sends, 2);
  EXPECT_TRUE(call.stream->closed());
}

// An upstream callback may be handing a message to the sink when the client goes (another
// thread): OnClientGone returns only after that Send returned and was counted, and nothing
// reaches the sink or the metrics after it, so the front may free both once it returned.
TEST_F(PlaySessionTest, ClientGoneWaitsForASendUnderWayOnAnotherThreadAndStopsTheDrain) {
  class BlockingSink final : public ClientSink {
   public:
    bool Send(client::v1::PlayResponse message) override {
      std::unique_lock<std::mutex> lock(mu);
      sent.push_back(message.event().seq());
      if (message.event().seq() == 1) {
        in_send = true;
        cv.notify_all();
        cv.wait(lock, [this] { return released; });
      }
      ++returned;
      return true;
    }
    void Finish(const absl::Status&) override { ++finishes; }
    std::mutex mu;
    std::condition_variable cv;
    bool in_send = false;
    bool released = false;
    std::vector<uint64_t> sent;  // event seqs (0: not an event), as each Send began
    int returned = 0;            // Sends that returned
    int finishes = 0;
  };
  auto sink = std::make_shared<BlockingSink>();
  conn_ = service_.Connect("p1", "peer", sink);
  conn_->OnClientMessage(OpenMsg("t-1"));
  scheduler_.RunDue();
  const FakeCall call = dialer_.last();
  call.Respond(Opened(1, false, 0));
  std::thread upstream([&] { call.Respond(Event(1, "e1")); });  // blocks in the sink
  {
    std::unique_lock<std::mutex> lock(sink->mu);
    ASSERT_TRUE(sink->cv.wait_for(lock, std::chrono::seconds(10), [&] { return sink->in_send; }));
  }
  call.Respond(Event(2, "e2"));  // queued behind the drain under way
  int begun_at_return = -1, returned_at_return = -1, counted_at_return = -1;
  std::thread front([&] {
    conn_->OnClientGone();
    std::lock_guard<std::mutex> lock(sink->mu);
    begun_at_return = static_cast<int>(sink->sent.size());
    returned_at_return = sink->returned;
    counted_at_return = metrics_.out["websocket"];
  });
  // Release e1's Send only once the front is inside OnClientGone: it closes the upstream
  // stream there, under the session's lock, after marking the client gone (without the wait
  // it would return now, with e1's Send still blocked).
  for (int i = 0; i < 10'000 && !call.stream->closed(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_TRUE(call.stream->closed());  // (not ASSERT: the threads must still be joined)
  {
    std::lock_guard<std::mutex> lock(sink->mu);
    sink->released = true;
    sink->cv.notify_all();
  }
  front.join();
  upstream.join();
  EXPECT_EQ(begun_at_return, returned_at_return);  // no Send under way when it returned
  EXPECT_EQ(counted_at_return, returned_at_return);
  call.Respond(Event(3, "e3"));
  call.End(absl::UnavailableError("gone"));
  std::lock_guard<std::mutex> lock(sink->mu);
  EXPECT_EQ(static_cast<int>(sink->sent.size()), begun_at_return);  // nothing after the return
  EXPECT_EQ(sink->sent, (std::vector<uint64_t>{0, 1}));             // e2 waited behind e1: dropped
  EXPECT_EQ(sink->finishes, 0);
  EXPECT_EQ(metrics_.out["websocket"], 2);
}

}  // namespace
}  // namespace courtpiece::gateway
