// In-memory fakes of upstream.h for unit tests: a dialer that records every stream opened
// (the test plays the table: it pushes responses and ends streams by hand), an owner table,
// a scheduler driven by a FakeClock, and an observer that records what a real dialer's
// stream delivered (for the dialers' own tests).
// Thread-safety: safe from many threads; the tests drive them from one.
#ifndef COURTPIECE_SERVICES_GATEWAY_FAKE_UPSTREAM_H_
#define COURTPIECE_SERVICES_GATEWAY_FAKE_UPSTREAM_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/common/clock.h"
#include "services/gateway/upstream.h"

namespace courtpiece::gateway {

class FakeUpstreamStream final : public UpstreamStream {
 public:
  bool Send(table::v1::PlayRequest request) override;
  void Cancel() override;
  void Close() override;

  std::vector<table::v1::PlayRequest> sent() const;
  bool cancelled() const;
  bool closed() const;
  // Makes Send answer false from now on (a full queue).
  void RefuseSends();

 private:
  mutable std::mutex mu_;
  std::vector<table::v1::PlayRequest> sent_;  // guarded by mu_
  bool cancelled_ = false;                    // guarded by mu_
  bool closed_ = false;                       // guarded by mu_
  bool refuse_ = false;                       // guarded by mu_
};

// One Open call: what was asked, and handles to play the table's side.
struct FakeCall {
  std::string addr;
  std::string player_id;
  table::v1::OpenTable open;
  std::shared_ptr<UpstreamObserver> observer;
  std::shared_ptr<FakeUpstreamStream> stream;

  void Respond(const table::v1::PlayResponse& response) const { observer->OnResponse(response); }
  void End(const absl::Status& status, const std::string& owner_addr = "") const {
    observer->OnEnd(status, owner_addr);
  }
};

class FakeTableDialer final : public TableDialer {
 public:
  std::shared_ptr<UpstreamStream> Open(const std::string& addr, const std::string& player_id,
                                       table::v1::OpenTable open,
                                       std::shared_ptr<UpstreamObserver> observer) override;
  int calls() const;
  FakeCall call(int i) const;  // i-th Open, from 0
  FakeCall last() const;

 private:
  mutable std::mutex mu_;
  std::vector<FakeCall> calls_;  // guarded by mu_
};

class FakeOwnerLookup final : public OwnerLookup {
 public:
  absl::StatusOr<std::string> Lookup(std::string_view table_id) override;
  // Unknown tables answer NOT_FOUND.
  void Set(const std::string& table_id, absl::StatusOr<std::string> answer);
  int lookups() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, absl::StatusOr<std::string>> answers_;  // guarded by mu_
  int lookups_ = 0;                                             // guarded by mu_
};

// Tasks run only from RunDue (on the caller's thread), when the fake clock reached them.
class FakeScheduler final : public Scheduler {
 public:
  explicit FakeScheduler(FakeClock& clock) : clock_(clock) {}
  TaskId After(absl::Duration delay, std::function<void()> fn) override;
  void Cancel(TaskId id) override;

  // Runs every task due by now (including ones those tasks add that are due), in due order.
  int RunDue();
  // Advances the clock by `by` in steps to each due task, running them on the way.
  int AdvanceAndRun(absl::Duration by);
  int pending() const;

 private:
  FakeClock& clock_;
  mutable std::mutex mu_;
  TaskId next_id_ = 1;                                                         // mu_
  std::multimap<absl::Time, std::pair<TaskId, std::function<void()>>> tasks_;  // mu_
};

// Records a stream's responses and end; the Wait* helpers give up after `wait` (real time).
class RecordingObserver final : public UpstreamObserver {
 public:
  explicit RecordingObserver(absl::Duration wait = absl::Seconds(10)) : wait_(wait) {}
  void OnResponse(table::v1::PlayResponse response) override;
  void OnEnd(absl::Status status, std::string owner_addr) override;

  // Until `done` (called under mu) holds; false at the timeout.
  bool Wait(const std::function<bool()>& done);
  bool WaitEnd();
  // The result of command `id`, or nothing at the timeout.
  std::optional<table::v1::CommandResult> WaitResult(uint64_t id);
  // The first response when it is `opened`; nothing when it is not, or the stream ended.
  std::optional<table::v1::Opened> WaitOpened();

  std::mutex mu;
  std::condition_variable cv;
  std::vector<table::v1::PlayResponse> responses;  // mu
  std::optional<absl::Status> end;                 // mu
  std::string end_owner_addr;                      // mu
  int ends = 0;                                    // mu

 private:
  const absl::Duration wait_;
};

}  // namespace courtpiece::gateway

#endif  // COURTPIECE_SERVICES_GATEWAY_FAKE_UPSTREAM_H_
