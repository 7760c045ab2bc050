// The scripted player's brain on an in-memory transport over the fake game
// (fake_game_for_test.h): no network, no sleeps (pacing off).
#include "services/gateway/testing/scripted_player.h"

#include <deque>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "services/gateway/testing/fake_game_for_test.h"

namespace courtpiece::gateway::testing {
namespace {

namespace cv1 = ::courtpiece::client::v1;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// One connection to a FakeGame: what the game answers is queued for Read at once.
class FakeTransport final : public PlayTransport {
 public:
  explicit FakeTransport(FakeGame* game) : game_(game) {}
  absl::Status Send(const cv1::PlayRequest& request) override {
    if (end_.has_value()) return absl::UnavailableError("ended");
    std::vector<cv1::PlayResponse> out;
    if (request.has_open()) {
      if (request.open().table_id() == "gone") {
        end_ = StreamEnd{absl::NotFoundError("unknown table"), 0, ""};
        return absl::OkStatus();
      }
      out = game_->Open(request.open());
    } else {
      out = game_->Command(request.command());
    }
    inbox_.insert(inbox_.end(), out.begin(), out.end());
    return absl::OkStatus();
  }
  absl::StatusOr<cv1::PlayResponse> Read(absl::Duration) override {
    if (!inbox_.empty()) {
      cv1::PlayResponse m = inbox_.front();
      inbox_.pop_front();
      return m;
    }
    if (end_.has_value()) return absl::OutOfRangeError("stream ended");
    return absl::DeadlineExceededError("nothing");
  }
  std::optional<StreamEnd> end() const override { return end_; }
  void Cancel() override {
    if (!end_.has_value()) end_ = StreamEnd{absl::CancelledError("cancelled"), 0, ""};
  }
  const char* kind() const override { return "fake"; }
  void Push(cv1::PlayResponse m) { inbox_.push_back(std::move(m)); }
  // The server ends the stream (after what is queued).
  void EndWith(absl::Status s) { end_ = StreamEnd{std::move(s), 0, ""}; }

 private:
  FakeGame* game_;
  std::deque<cv1::PlayResponse> inbox_;
  std::optional<StreamEnd> end_;
};

class ScriptedPlayerTest : public ::testing::Test {
 protected:
  ScriptedPlayer::Dialer Dialer() {
    return [this]() -> absl::StatusOr<std::unique_ptr<PlayTransport>> {
      ++dials_;
      auto t = std::make_unique<FakeTransport>(&game_);
      last_ = t.get();
      return std::unique_ptr<PlayTransport>(std::move(t));
    };
  }
  ScriptedPlayerOptions Options() {
    ScriptedPlayerOptions o;
    o.commands_per_second = 0;
    o.command_timeout = absl::Milliseconds(100);
    o.open_timeout = absl::Milliseconds(100);
    o.reconnect_timeout = absl::Milliseconds(200);
    return o;
  }
  FakeGame game_;
  FakeTransport* last_ = nullptr;
  int dials_ = 0;
};

TEST_F(ScriptedPlayerTest, CandidatesCallThenLedSuitFirstThenHiddenTrumpSteps) {
  auto names = [](const std::vector<cv1::TableCommand>& cs) {
    std::vector<std::string> out;
    for (const auto& c : cs) out.push_back(c.move() + ":" + c.card());
    return out;
  };
  EXPECT_THAT(names(ScriptedPlayer::Candidates({"AS", "2H"}, /*calling=*/true, "")),
              ElementsAre("call:S", "call:H", "call:D", "call:C", "hide:AS", "hide:2H"));
  EXPECT_THAT(names(ScriptedPlayer::Candidates({"AS", "2H", "KH", "3D"}, false, "H")),
              ElementsAre("play:2H", "play:KH", "play:AS", "play:3D", "ask:", "show:", "hide:AS",
                          "hide:2H", "hide:KH", "hide:3D"));
  EXPECT_THAT(names(ScriptedPlayer::Candidates({}, false, "")), ElementsAre("ask:", "show:"));
}

TEST_F(ScriptedPlayerTest, PlaysTheGameTryingCandidatesUntilOneIsAccepted) {
  ScriptedPlayer p("ann", Dialer(), Options());
  absl::StatusOr<cv1::Opened> opened = p.Open("t1");
  ASSERT_TRUE(opened.ok()) << opened.status();
  EXPECT_EQ(opened->seat(), 1);
  EXPECT_FALSE(opened->resumed());
  ASSERT_TRUE(p.PlayUntil([&] { return p.games_over() == 1; }, absl::Seconds(5)).ok());
  // call S refused, call H accepted; then the led suit (D) first: 3D, accepted.
  std::vector<std::string> tried;
  for (const cv1::TableCommand& c : game_.commands) tried.push_back(c.move() + ":" + c.card());
  EXPECT_THAT(tried, ElementsAre("call:S", "call:H", "play:3D"));
  EXPECT_EQ(p.moves_ok(), 2);
  EXPECT_EQ(p.moves_refused(), 1);
  EXPECT_THAT(p.hand(), ElementsAre("AS", "KS", "2H", "4C", "9D"));
  EXPECT_THAT(p.faults(), IsEmpty());
  EXPECT_EQ(p.last_seq(), 11u);
  EXPECT_TRUE(p.CheckSeqs().ok()) << p.CheckSeqs();
  // Command ids are fresh per command.
  EXPECT_EQ(game_.commands[0].command_id(), 1u);
  EXPECT_EQ(game_.commands[2].command_id(), 3u);
}

TEST_F(ScriptedPlayerTest, ReconnectResumesWithLastSeqAndSeesNoSeqTwice) {
  ScriptedPlayer p("ann", Dialer(), Options());
  ASSERT_TRUE(p.Open("t1").ok());
  ASSERT_TRUE(p.PlayUntil([&] { return p.hand().size() == 6; }, absl::Seconds(5)).ok());
  const uint64_t seen = p.last_seq();
  ASSERT_GE(seen, 3u);
  ASSERT_TRUE(p.Reconnect().ok());
  ASSERT_EQ(game_.opens.size(), 2u);
  EXPECT_EQ(game_.opens[1].last_seq(), seen);
  EXPECT_EQ(p.reconnects(), 1);
  ASSERT_TRUE(p.PlayUntil([&] { return p.games_over() == 1; }, absl::Seconds(5)).ok());
  EXPECT_TRUE(p.CheckSeqs().ok()) << p.CheckSeqs();
  std::vector<SeqView> views = p.views();
  ASSERT_EQ(views.size(), 2u);
  EXPECT_TRUE(views[1].resumed);
  EXPECT_THAT(p.faults(), IsEmpty());
}

TEST_F(ScriptedPlayerTest, CheckSeqsCatchesADoubledEventOnResume) {
  game_.double_on_resume = true;
  ScriptedPlayer p("ann", Dialer(), Options());
  ASSERT_TRUE(p.Open("t1").ok());
  ASSERT_TRUE(p.PlayUntil([&] { return p.hand().size() == 6; }, absl::Seconds(5)).ok());
  const uint64_t seen = p.last_seq();
  ASSERT_TRUE(p.Reconnect().ok());
  ASSERT_TRUE(p.Step(absl::Milliseconds(1)).ok());  // the first event after `opened`
  absl::Status s = p.CheckSeqs();
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(s.message()),
              ::testing::HasSubstr(absl::StrCat("seq ", seen, " after ", seen)));
}

TEST_F(ScriptedPlayerTest, AutoReconnectOnUnavailableButNotOnOtherEnds) {
  ScriptedPlayer p("ann", Dialer(), Options());
  ASSERT_TRUE(p.Open("t1").ok());
  ASSERT_TRUE(p.PlayUntil([&] { return p.hand().size() == 6; }, absl::Seconds(5)).ok());
  last_->EndWith(absl::UnavailableError("draining"));
  ASSERT_TRUE(p.PlayUntil([&] { return p.games_over() == 1; }, absl::Seconds(5)).ok());
  EXPECT_EQ(dials_, 2);
  EXPECT_EQ(p.reconnects(), 1);
  // ABORTED (another connection took the seat): the stream ends for good with that status.
  last_->EndWith(absl::AbortedError("taken over"));
  absl::Status s = p.Step(absl::Milliseconds(1));
  EXPECT_EQ(s.code(), absl::StatusCode::kAborted);
  ASSERT_TRUE(p.end().has_value());
  EXPECT_EQ(p.end()->status.code(), absl::StatusCode::kAborted);
  EXPECT_EQ(dials_, 2);
}

TEST_F(ScriptedPlayerTest, OpenOfAnUnknownTableAnswersTheStreamsEnd) {
  ScriptedPlayer p("ann", Dialer(), Options());
  absl::StatusOr<cv1::Opened> opened = p.Open("gone");
  EXPECT_EQ(opened.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(opened.status().message(), "unknown table");
}

TEST_F(ScriptedPlayerTest, GatewayResumeNoticesStartAResumedView) {
  ScriptedPlayer p("ann", Dialer(), Options());
  ASSERT_TRUE(p.Open("t1").ok());
  ASSERT_TRUE(p.PlayUntil([&] { return p.games_over() == 1; }, absl::Seconds(5)).ok());
  cv1::PlayResponse m;
  m.mutable_notice()->set_type("reconnecting");
  last_->Push(m);
  m.mutable_notice()->set_type("reconnected");
  last_->Push(m);
  cv1::PlayResponse e;
  e.mutable_event()->set_type("turn");
  e.mutable_event()->set_seat(2);
  e.mutable_event()->set_seq(12);
  last_->Push(e);
  ASSERT_TRUE(p.PlayUntil([&] { return p.last_seq() == 12; }, absl::Seconds(5)).ok());
  EXPECT_TRUE(p.CheckSeqs().ok()) << p.CheckSeqs();
  ASSERT_EQ(p.views().size(), 2u);
  EXPECT_TRUE(p.views()[1].resumed);
  ASSERT_EQ(p.notices().size(), 2u);
  EXPECT_EQ(p.notices()[0].type(), "reconnecting");
  // The gateway resent an event the client had: a doubled seq across the resume.
  e.mutable_event()->set_seq(11);
  last_->Push(e);
  ASSERT_TRUE(p.PlayUntil([&] { return p.events().size() == 13; }, absl::Seconds(5)).ok());
  EXPECT_EQ(p.CheckSeqs().code(), absl::StatusCode::kInternal);
}

}  // namespace
}  // namespace courtpiece::gateway::testing
