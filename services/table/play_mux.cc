#include "services/table/play_mux.h"

#include <algorithm>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "courtpiece/common/grpc_status.h"
#include "services/table/host_convert.h"
#include "services/table/server.h"

namespace courtpiece::table_service {

bool CommandBucket::Take(Steady::time_point now) {
  const double seconds = std::chrono::duration<double>(now - refill_at_).count();
  refill_at_ = now;
  tokens_ = std::min(burst_, tokens_ + seconds * per_second_);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

namespace {

using table::v1::PlayMuxRequest;
using table::v1::PlayMuxResponse;
using table::v1::PlayResponse;
using table::v1::SessionRequest;
using table::v1::SessionResponse;
using Steady = std::chrono::steady_clock;

// Commands timed for the latency histogram at once, per stream (a Play stream times 64).
constexpr size_t kTimedCommandsMax = 4096;
// A batch written at once: what waited, up to this many bytes (one larger message alone).
constexpr size_t kBatchBytesMax = 64 * 1024;

class MuxReactor final : public grpc::ServerBidiReactor<PlayMuxRequest, PlayMuxResponse> {
 public:
  // What the sessions' sinks share with the reactor: its lock, and the reactor until OnDone.
  struct Core {
    explicit Core(TableHost& h) : host(h) {}
    TableHost& host;  // outlives every call
    std::mutex mu;
    MuxReactor* reactor = nullptr;  // guarded by mu; null once gRPC is done with the call
  };

  // One session's StreamSink, held by the host.
  class Sink final : public StreamSink {
   public:
    Sink(std::shared_ptr<Core> core, uint64_t session)
        : core_(std::move(core)), session_(session) {}
    bool Send(const PlayResponse& message) override {
      std::lock_guard<std::mutex> lock(core_->mu);
      if (core_->reactor == nullptr) return true;  // gone: nothing to do
      return core_->reactor->EnqueueLocked(session_, message);
    }
    void Finish(const absl::Status& status) override {
      uint64_t stream_id = 0;
      {
        std::lock_guard<std::mutex> lock(core_->mu);
        if (core_->reactor == nullptr) return;
        stream_id = core_->reactor->EndSessionLocked(session_, status);
      }
      // The host ended it; it still hears of the end, as after a Play stream's OnDone. (Not
      // through the reactor: once the lock is released it may be gone.)
      if (stream_id != 0) core_->host.StreamEnded(stream_id);
    }

   private:
    std::shared_ptr<Core> core_;
    const uint64_t session_;
  };

  MuxReactor(TableHost& host, TableMetrics* metrics, const StreamLimits& limits)
      : host_(host), metrics_(metrics), limits_(limits), core_(std::make_shared<Core>(host)) {
    core_->reactor = this;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the caller closed its side (or went away): every session is a disconnect
      std::vector<uint64_t> ended;
      {
        std::lock_guard<std::mutex> lock(core_->mu);
        for (auto& [id, s] : sessions_) {
          if (uint64_t stream = EndSessionLocked(id, absl::OkStatus()); stream != 0) {
            ended.push_back(stream);
          }
        }
        closing_ = true;
        if (!writing_) WriteNextLocked();
      }
      for (uint64_t stream : ended) host_.StreamEnded(stream);
      return;
    }
    for (const SessionRequest& r : request_.requests()) {
      switch (r.msg_case()) {
        case SessionRequest::kOpen:
          OpenSession(r);
          break;
        case SessionRequest::kCommand:
          CommandOf(r);
          break;
        case SessionRequest::kClose:
          EndByCaller(r.session(), absl::OkStatus());
          break;
        case SessionRequest::MSG_NOT_SET:
          EndByCaller(r.session(), absl::InvalidArgumentError("a session message needs open, "
                                                              "command or close"));
          break;
      }
    }
    request_.Clear();
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      if (cut_ || finished_) return;
    }
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(core_->mu);
    writing_ = false;
    if (!ok) {  // the caller is gone; OnDone ends the sessions
      queue_.clear();
      if (!finished_) {
        finished_ = true;
        Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the caller went away"));
      }
      return;
    }
    for (const SessionResponse& written : writing_batch_.responses()) {
      auto it = sessions_.find(written.session());
      if (it == sessions_.end()) continue;
      if (written.has_end()) {
        sessions_.erase(it);
      } else {
        --it->second.queued;
      }
    }
    writing_batch_.Clear();
    WriteNextLocked();
  }

  void OnDone() override {
    std::vector<uint64_t> ended;
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      core_->reactor = nullptr;
      for (auto& [id, s] : sessions_) {
        if (s.ending) continue;
        MarkEndingLocked(s);
        if (s.stream_id != 0) ended.push_back(s.stream_id);
      }
    }
    for (uint64_t stream : ended) host_.StreamEnded(stream);
    delete this;
  }

 private:
  struct Session {
    uint64_t stream_id = 0;  // the host's id once Open returned
    int queued = 0;          // its messages in queue_
    bool ending = false;     // its `end` is queued (or the stream is done); until then it
                             // counts in the open-streams gauge
    CommandBucket bucket;
    int refusals = 0;
    explicit Session(const StreamLimits& l) : bucket(l.commands_per_second, l.commands_burst) {}
  };

  void OpenSession(const SessionRequest& r) {
    const uint64_t session = r.session();
    if (session == 0) return;  // no session to answer: dropped, as for any unknown one
    if (r.ByteSizeLong() > kPlayMessageBytesMax + 256) {
      EndByCaller(session, absl::ResourceExhaustedError("a message over 16 KiB"));
      return;
    }
    if (!ValidId(r.player())) {
      EndByCaller(session, absl::UnauthenticatedError(
                               "player: the gateway must name the player (1..64 chars of "
                               "[A-Za-z0-9_-])"));
      return;
    }
    std::shared_ptr<Sink> sink;
    uint64_t to_end = 0;
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      auto it = sessions_.find(session);
      if (it != sessions_.end()) {
        if (it->second.ending) return;  // its end is on the way; this open is late
        to_end =
            EndSessionLocked(session, absl::InvalidArgumentError("the session is open already"));
      } else if (static_cast<int>(sessions_.size()) >= limits_.mux_sessions_max) {
        QueueRefusalLocked(session,
                           absl::ResourceExhaustedError("too many sessions on this stream"));
        return;
      } else {
        sessions_.try_emplace(session, limits_);
        if (metrics_ != nullptr) metrics_->StreamOpened(+1);
        sink = std::make_shared<Sink>(core_, session);
      }
    }
    if (to_end != 0) host_.StreamEnded(to_end);
    if (sink == nullptr) return;
    // Not under the lock: Open may finish the sink at once (bad id, draining, overloaded).
    const uint64_t stream = host_.Open(r.player(), r.open(), sink);
    bool ended_meanwhile = true;  // also when its end was written already
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      auto it = sessions_.find(session);
      if (it != sessions_.end()) {
        it->second.stream_id = stream;
        ended_meanwhile = it->second.ending;
      }
    }
    if (ended_meanwhile) host_.StreamEnded(stream);
  }

  void CommandOf(const SessionRequest& r) {
    const uint64_t session = r.session();
    uint64_t to_end = 0;
    uint64_t to_command = 0;
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      auto it = sessions_.find(session);
      if (it == sessions_.end() || it->second.ending || it->second.stream_id == 0) return;
      Session& s = it->second;
      const uint64_t command_id = r.command().command_id();
      if (r.command().ByteSizeLong() > kPlayMessageBytesMax) {
        to_end = EndSessionLocked(session, absl::ResourceExhaustedError("a message over 16 KiB"));
      } else if (!s.bucket.Take(Steady::now())) {
        PlayResponse out;
        out.mutable_result()->set_command_id(command_id);
        out.mutable_result()->set_code(static_cast<int32_t>(absl::StatusCode::kResourceExhausted));
        out.mutable_result()->set_message("too many commands: slow down");
        if (++s.refusals >= limits_.refusals_before_cut) {
          if (metrics_ != nullptr) metrics_->StreamCut("flood");
          to_end = EndSessionLocked(
              session, absl::ResourceExhaustedError("the stream sent too many refused commands"));
        } else if (!EnqueueLocked(session, out)) {
          to_end =
              EndSessionLocked(session, absl::ResourceExhaustedError("the stream's queue is full"));
        }
      } else {
        if (started_.size() < kTimedCommandsMax) {
          started_.emplace(std::make_pair(session, command_id), Steady::now());
        }
        to_command = s.stream_id;
      }
    }
    if (to_command != 0) host_.Command(to_command, r.command());
    if (to_end != 0) host_.StreamEnded(to_end);
  }

  // The caller ended `session` (close, or a bad message): a disconnect for the table.
  void EndByCaller(uint64_t session, const absl::Status& status) {
    if (session == 0) return;
    uint64_t stream = 0;
    {
      std::lock_guard<std::mutex> lock(core_->mu);
      auto it = sessions_.find(session);
      if (it == sessions_.end()) {
        if (!status.ok()) QueueRefusalLocked(session, status);  // never opened: answered
        return;
      }
      if (it->second.ending) return;
      stream = EndSessionLocked(session, status);
    }
    if (stream != 0) host_.StreamEnded(stream);
  }

  // Under the lock. Queues the session's message; false when its queue is full (the host
  // then ends it). Past the whole stream's bound the stream is cut.
  bool EnqueueLocked(uint64_t session, const PlayResponse& message) {
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second.ending || cut_) return true;  // ended: dropped
    if (it->second.queued >= limits_.queue_max) {
      if (metrics_ != nullptr) metrics_->StreamCut("queue_full");
      return false;
    }
    if (static_cast<int>(queue_.size()) >= limits_.mux_queue_max) {
      CutLocked();
      return true;  // every session ends with the stream (OnDone)
    }
    if (message.msg_case() == PlayResponse::kResult) ObserveLatencyLocked(session, message);
    SessionResponse& out = queue_.emplace_back();
    out.set_session(session);
    *out.mutable_response() = message;
    ++it->second.queued;
    if (!writing_) WriteNextLocked();
    return true;
  }

  // Under the lock. Marks `session` ending and queues its `end`; answers the host's stream
  // id to tell of the end (0: none, or told already), which the caller does after the lock.
  uint64_t EndSessionLocked(uint64_t session, const absl::Status& status) {
    auto it = sessions_.find(session);
    if (it == sessions_.end() || it->second.ending) return 0;
    Session& s = it->second;
    MarkEndingLocked(s);
    started_.erase(started_.lower_bound({session, 0}), started_.lower_bound({session + 1, 0}));
    QueueEndLocked(session, status);
    return s.stream_id;
  }

  // Under the lock: the `end` of a session that was never opened, within the stream's bound
  // (a caller that floods such messages is cut, as one that does not read).
  void QueueRefusalLocked(uint64_t session, const absl::Status& status) {
    if (static_cast<int>(queue_.size()) >= limits_.mux_queue_max) {
      CutLocked();
      return;
    }
    QueueEndLocked(session, status);
  }

  void QueueEndLocked(uint64_t session, const absl::Status& status) {
    if (cut_ || finished_) return;
    SessionResponse& out = queue_.emplace_back();
    out.set_session(session);
    table::v1::SessionEnd* end = out.mutable_end();
    end->set_code(static_cast<int32_t>(status.code()));
    end->set_message(std::string(status.message()));
    absl::optional<absl::Cord> addr = status.GetPayload(kOwnerAddrMetadata);
    if (addr.has_value()) end->set_owner_addr(std::string(*addr));
    if (!writing_) WriteNextLocked();
  }

  void MarkEndingLocked(Session& s) {
    s.ending = true;
    if (metrics_ != nullptr) metrics_->StreamOpened(-1);
  }

  void ObserveLatencyLocked(uint64_t session, const PlayResponse& message) {
    auto it = started_.find({session, message.result().command_id()});
    if (it == started_.end()) return;
    if (metrics_ != nullptr) {
      metrics_->CommandLatency(std::chrono::duration<double>(Steady::now() - it->second).count());
    }
    started_.erase(it);
  }

  // Under the lock: the caller does not read; the stream ends, and with it every session.
  void CutLocked() {
    if (cut_) return;
    cut_ = true;
    if (metrics_ != nullptr) metrics_->StreamCut("queue_full");
    queue_.clear();  // the batch in flight is writing_batch_
    if (!writing_ && !finished_) {
      finished_ = true;
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "the stream's queue is full: the caller does not read"));
    }
  }

  void WriteNextLocked() {
    if (finished_) return;
    if (cut_) {
      finished_ = true;
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          "the stream's queue is full: the caller does not read"));
      return;
    }
    if (!queue_.empty()) {
      // Everything that waited, in order, up to kBatchBytesMax (one larger message alone).
      size_t bytes = 0;
      while (!queue_.empty()) {
        const size_t next = queue_.front().ByteSizeLong();
        if (writing_batch_.responses_size() > 0 && bytes + next > kBatchBytesMax) break;
        bytes += next;
        *writing_batch_.add_responses() = std::move(queue_.front());
        queue_.pop_front();
      }
      writing_ = true;
      StartWrite(&writing_batch_);
      return;
    }
    if (closing_) {
      finished_ = true;
      Finish(grpc::Status::OK);
    }
  }

  TableHost& host_;
  TableMetrics* const metrics_;
  const StreamLimits limits_;
  std::shared_ptr<Core> core_;
  PlayMuxRequest request_;  // owned by the read in flight
  // Guarded by core_->mu.
  std::unordered_map<uint64_t, Session> sessions_;
  std::deque<SessionResponse> queue_;  // waiting for the next write
  PlayMuxResponse writing_batch_;      // the write in flight
  std::map<std::pair<uint64_t, uint64_t>, Steady::time_point> started_;  // (session, command)
  bool writing_ = false;
  bool closing_ = false;   // the caller closed its side: finish once the queue is written
  bool cut_ = false;       // the caller does not read: finish now
  bool finished_ = false;  // Finish was called
};

}  // namespace

grpc::ServerBidiReactor<PlayMuxRequest, PlayMuxResponse>* NewPlayMuxReactor(
    TableHost& host, TableMetrics* metrics, const StreamLimits& limits) {
  return new MuxReactor(host, metrics, limits);
}

}  // namespace courtpiece::table_service
