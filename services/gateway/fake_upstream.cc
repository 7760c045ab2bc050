#include "services/gateway/fake_upstream.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/absl_compat.h"

namespace courtpiece::gateway {

bool FakeUpstreamStream::Send(table::v1::PlayRequest request) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_ || closed_ || refuse_) return false;
  sent_.push_back(std::move(request));
  return true;
}

void FakeUpstreamStream::Cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
}

void FakeUpstreamStream::Close() {
  std::lock_guard<std::mutex> lock(mu_);
  closed_ = true;
}

bool FakeUpstreamStream::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

std::vector<table::v1::PlayRequest> FakeUpstreamStream::sent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return sent_;
}

bool FakeUpstreamStream::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

void FakeUpstreamStream::RefuseSends() {
  std::lock_guard<std::mutex> lock(mu_);
  refuse_ = true;
}

std::shared_ptr<UpstreamStream> FakeTableDialer::Open(const std::string& addr,
                                                      const std::string& player_id,
                                                      table::v1::OpenTable open,
                                                      std::shared_ptr<UpstreamObserver> observer) {
  auto stream = std::make_shared<FakeUpstreamStream>();
  std::lock_guard<std::mutex> lock(mu_);
  calls_.push_back(FakeCall{.addr = addr,
                            .player_id = player_id,
                            .open = std::move(open),
                            .observer = std::move(observer),
                            .stream = stream});
  return stream;
}

int FakeTableDialer::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(calls_.size());
}

FakeCall FakeTableDialer::call(int i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_.at(static_cast<size_t>(i));
}

FakeCall FakeTableDialer::last() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_.at(calls_.size() - 1);
}

absl::StatusOr<std::string> FakeOwnerLookup::Lookup(std::string_view table_id) {
  std::lock_guard<std::mutex> lock(mu_);
  ++lookups_;
  auto it = answers_.find(std::string(table_id));
  if (it == answers_.end()) {
    return absl::NotFoundError(absl::StrCat("unknown table ", common::ToAbsl(table_id)));
  }
  return it->second;
}

void FakeOwnerLookup::Set(const std::string& table_id, absl::StatusOr<std::string> answer) {
  std::lock_guard<std::mutex> lock(mu_);
  answers_.insert_or_assign(table_id, std::move(answer));
}

int FakeOwnerLookup::lookups() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lookups_;
}

Scheduler::TaskId FakeScheduler::After(absl::Duration delay, std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mu_);
  const TaskId id = next_id_++;
  tasks_.emplace(clock_.Now() + delay, std::make_pair(id, std::move(fn)));
  return id;
}

void FakeScheduler::Cancel(TaskId id) {
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = tasks_.begin(); it != tasks_.end(); ++it) {
    if (it->second.first == id) {
      tasks_.erase(it);
      return;
    }
  }
}

int FakeScheduler::RunDue() {
  int ran = 0;
  for (;;) {
    std::function<void()> fn;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty() || tasks_.begin()->first > clock_.Now()) return ran;
      fn = std::move(tasks_.begin()->second.second);
      tasks_.erase(tasks_.begin());
    }
    fn();
    ++ran;
  }
}

int FakeScheduler::AdvanceAndRun(absl::Duration by) {
  const absl::Time end = clock_.Now() + by;
  int ran = RunDue();
  for (;;) {
    absl::Time next;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (tasks_.empty() || tasks_.begin()->first > end) break;
      next = tasks_.begin()->first;
    }
    if (next > clock_.Now()) clock_.Set(next);
    ran += RunDue();
  }
  clock_.Set(end);
  return ran + RunDue();
}

int FakeScheduler::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(tasks_.size());
}

void RecordingObserver::OnResponse(table::v1::PlayResponse response) {
  std::lock_guard<std::mutex> lock(mu);
  responses.push_back(std::move(response));
  cv.notify_all();
}

void RecordingObserver::OnEnd(absl::Status status, std::string owner_addr) {
  std::lock_guard<std::mutex> lock(mu);
  ++ends;
  end = status;
  end_owner_addr = std::move(owner_addr);
  cv.notify_all();
}

bool RecordingObserver::Wait(const std::function<bool()>& done) {
  std::unique_lock<std::mutex> lock(mu);
  return cv.wait_for(lock, absl::ToChronoMilliseconds(wait_), done);
}

bool RecordingObserver::WaitEnd() {
  return Wait([this] { return end.has_value(); });
}

std::optional<table::v1::CommandResult> RecordingObserver::WaitResult(uint64_t id) {
  std::optional<table::v1::CommandResult> out;
  Wait([&] {
    for (const auto& r : responses) {
      if (r.has_result() && r.result().command_id() == id) out = r.result();
    }
    return out.has_value();
  });
  return out;
}

std::optional<table::v1::Opened> RecordingObserver::WaitOpened() {
  std::optional<table::v1::Opened> out;
  Wait([&] {
    if (!responses.empty() && responses[0].has_opened()) out = responses[0].opened();
    return out.has_value() || end.has_value();
  });
  return out;
}

}  // namespace courtpiece::gateway
