#include "services/table/server.h"

#include <chrono>
#include <deque>
#include <map>
#include <mutex>
#include <string>

#include "courtpiece/common/grpc_status.h"
#include "services/table/host_convert.h"
#include "services/table/play_mux.h"

namespace courtpiece::table_service {

namespace {

using table::v1::PlayRequest;
using table::v1::PlayResponse;
using Steady = std::chrono::steady_clock;

std::string CodeName(absl::StatusCode code) {
  return common::GrpcCodeName(static_cast<grpc::StatusCode>(code));
}

void AddOwnerMetadata(grpc::CallbackServerContext* context, const absl::Status& status) {
  absl::optional<absl::Cord> addr = status.GetPayload(kOwnerAddrMetadata);
  if (addr.has_value()) context->AddTrailingMetadata(kOwnerAddrMetadata, std::string(*addr));
}

// One Play stream. The reactor deletes itself in OnDone; the host holds the sink (this
// object's `Sink`) by shared_ptr, which outlives the reactor and then ignores calls.
class PlayReactor final : public grpc::ServerBidiReactor<PlayRequest, PlayResponse> {
 public:
  class Sink final : public StreamSink {
   public:
    explicit Sink(PlayReactor* reactor) : reactor_(reactor) {}
    bool Send(const PlayResponse& message) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ == nullptr || finishing_) return true;  // gone: nothing to do
      return reactor_->EnqueueLocked(message);
    }
    void Finish(const absl::Status& status) override {
      std::lock_guard<std::mutex> lock(mu_);
      if (reactor_ == nullptr || finishing_) return;
      finishing_ = true;
      reactor_->FinishLocked(status);
    }
    void Detach() {
      std::lock_guard<std::mutex> lock(mu_);
      reactor_ = nullptr;
    }
    std::mutex& mu() { return mu_; }
    bool finishing() const { return finishing_; }

   private:
    std::mutex mu_;
    PlayReactor* reactor_;  // guarded by mu_
    bool finishing_ = false;
  };

  PlayReactor(grpc::CallbackServerContext* context, TableHost& host, TableMetrics* metrics,
              const StreamLimits& limits)
      : context_(context),
        host_(host),
        metrics_(metrics),
        limits_(limits),
        sink_(std::make_shared<Sink>(this)),
        bucket_(limits.commands_per_second, limits.commands_burst) {
    auto it = context->client_metadata().find(kPlayerIdMetadata);
    if (it != context->client_metadata().end()) {
      player_.assign(it->second.data(), it->second.size());
    }
    if (!ValidId(player_)) {
      sink_->Finish(absl::UnauthenticatedError(
          "metadata courtpiece-player-id: the gateway must name the player"));
      return;
    }
    if (metrics_ != nullptr) metrics_->StreamOpened(+1);
    counted_ = true;
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {
      EndForHost();
      sink_->Finish(absl::OkStatus());
      return;
    }
    if (request_.ByteSizeLong() > kPlayMessageBytesMax) {
      EndForHost();
      sink_->Finish(absl::ResourceExhaustedError("a message over 16 KiB"));
      return;
    }
    if (!opened_) {
      if (request_.msg_case() != PlayRequest::kOpen) {
        sink_->Finish(absl::InvalidArgumentError("the first message must be `open`"));
        return;
      }
      opened_ = true;
      stream_id_ = host_.Open(player_, request_.open(), sink_);
    } else if (request_.msg_case() != PlayRequest::kCommand) {
      RefuseCommand(0, absl::InvalidArgumentError("after `open`, only `command` messages"));
    } else if (!bucket_.Take(Steady::now())) {
      RefuseCommand(request_.command().command_id(),
                    absl::ResourceExhaustedError("too many commands: slow down"));
    } else {
      TimeCommand(request_.command().command_id());
      host_.Command(stream_id_, request_.command());
    }
    {
      std::lock_guard<std::mutex> lock(sink_->mu());
      if (sink_->finishing()) return;
    }
    StartRead(&request_);
  }

  void OnWriteDone(bool ok) override {
    std::lock_guard<std::mutex> lock(sink_->mu());
    writing_ = false;
    if (!ok) {
      queue_.clear();
      if (!finished_) {
        finished_ = true;
        Finish(grpc::Status(grpc::StatusCode::CANCELLED, "the client went away"));
      }
      return;
    }
    queue_.pop_front();
    WriteNextLocked();
  }

  void OnCancel() override { EndForHost(); }

  void OnDone() override {
    sink_->Detach();
    EndForHost();
    if (counted_ && metrics_ != nullptr) metrics_->StreamOpened(-1);
    delete this;
  }

  // Under the sink's lock.
  bool EnqueueLocked(const PlayResponse& message) {
    if (static_cast<int>(queue_.size()) >= limits_.queue_max) {
      if (metrics_ != nullptr) metrics_->StreamCut("queue_full");
      return false;
    }
    if (message.msg_case() == PlayResponse::kResult) ObserveLatency(message.result().command_id());
    queue_.push_back(message);
    if (!writing_) WriteNextLocked();
    return true;
  }
  void FinishLocked(const absl::Status& status) {
    AddOwnerMetadata(context_, status);
    finish_status_ = common::ToGrpcStatus(status);
    if (static_cast<int>(queue_.size()) >= limits_.queue_max) {
      queue_.resize(writing_ ? 1 : 0);  // a client that does not read gets no backlog
    }
    if (!writing_) WriteNextLocked();
  }

 private:
  void WriteNextLocked() {
    if (finished_) return;
    if (!queue_.empty()) {
      writing_ = true;
      StartWrite(&queue_.front());
      return;
    }
    if (sink_->finishing()) {
      finished_ = true;
      Finish(finish_status_);
    }
  }

  void EndForHost() {
    if (ended_for_host_.exchange(true)) return;
    if (opened_) host_.StreamEnded(stream_id_);
  }

  void RefuseCommand(uint64_t command_id, const absl::Status& status) {
    PlayResponse out;
    out.mutable_result()->set_command_id(command_id);
    out.mutable_result()->set_code(static_cast<int32_t>(status.code()));
    out.mutable_result()->set_message(std::string(status.message()));
    if (++refusals_ >= limits_.refusals_before_cut) {
      if (metrics_ != nullptr) metrics_->StreamCut("flood");
      EndForHost();
      sink_->Finish(absl::ResourceExhaustedError("the stream sent too many refused commands"));
      return;
    }
    if (!sink_->Send(out)) {
      EndForHost();
      sink_->Finish(absl::ResourceExhaustedError("the stream's queue is full"));
    }
  }

  void TimeCommand(uint64_t command_id) {
    std::lock_guard<std::mutex> lock(sink_->mu());
    if (static_cast<int>(command_started_.size()) < limits_.pending_command_times_max) {
      command_started_.emplace(command_id, Steady::now());
    }
  }
  // Under the sink's lock.
  void ObserveLatency(uint64_t command_id) {
    auto it = command_started_.find(command_id);
    if (it == command_started_.end()) return;
    if (metrics_ != nullptr) {
      metrics_->CommandLatency(std::chrono::duration<double>(Steady::now() - it->second).count());
    }
    command_started_.erase(it);
  }

  grpc::CallbackServerContext* const context_;
  TableHost& host_;
  TableMetrics* const metrics_;
  const StreamLimits limits_;
  std::shared_ptr<Sink> sink_;
  std::string player_;
  PlayRequest request_;
  bool opened_ = false;
  bool counted_ = false;
  uint64_t stream_id_ = 0;
  std::atomic<bool> ended_for_host_{false};
  CommandBucket bucket_;
  int refusals_ = 0;
  // Guarded by the sink's mutex.
  std::deque<PlayResponse> queue_;
  bool writing_ = false;
  bool finished_ = false;
  grpc::Status finish_status_;
  std::map<uint64_t, Steady::time_point> command_started_;
};

}  // namespace

// --- metrics -----------------------------------------------------------------------------

TableMetrics::TableMetrics(common::Metrics& m)
    : commands_(m.Counter("commands", "Play commands by type and result code.")),
      saves_(m.Counter("snapshot_writes", "Table state saves to Redis by result.")),
      save_bytes_(m.Counter("snapshot_bytes", "Bytes of table state saved to Redis.")),
      effects_(m.Counter("effects_sent", "Effects sent to their receivers, by kind and result.")),
      effect_retries_(m.Counter("effect_retries", "Effect sends answered retry-later, by kind.")),
      claims_(m.Counter("failovers", "Tables taken over from a dead or departed instance.")),
      cuts_(m.Counter("streams_cut", "Play streams ended by the server, by reason.")),
      bot_moves_(m.Counter("bot_moves",
                           "Searching bots' moves by level and outcome (searched, late, "
                           "pool_full).")),
      latency_(m.LatencyHistogram("command_to_event",
                                  "From a command's arrival to its result on the stream "
                                  "(after its events).")),
      tables_(m.Gauge("live_tables", "Tables hosted by this instance.")),
      seats_(m.Gauge("seats", "Seats of hosted tables by kind.")),
      streams_(m.Gauge("streams", "Open Play streams.")),
      pending_(m.Gauge("pending_effects", "Effects not yet acknowledged by their receiver.")),
      bot_jobs_(m.Gauge("bot_jobs", "Searching bots' jobs: queued now, expired unrun (total).")) {
  // The series a dashboard or an alert reads exist from the start at 0 ("no data" otherwise).
  for (const char* why : {"queue_full", "flood"}) cuts_.WithLabels({{"reason", why}});
}

void TableMetrics::Command(std::string_view type, absl::StatusCode code) {
  const std::string t = table::ParseCommandType(type).has_value() ? std::string(type) : "unknown";
  commands_.WithLabels({{"type", t}, {"code", CodeName(code)}}).Increment();
}
void TableMetrics::Save(size_t bytes, absl::StatusCode code) {
  saves_.WithLabels({{"code", CodeName(code)}}).Increment();
  if (code == absl::StatusCode::kOk) {
    save_bytes_.WithLabels({}).Increment(static_cast<double>(bytes));
  }
}
void TableMetrics::EffectSent(std::string_view kind, absl::StatusCode code) {
  effects_.WithLabels({{"kind", std::string(kind)}, {"code", CodeName(code)}}).Increment();
  if (code != absl::StatusCode::kOk && code != absl::StatusCode::kFailedPrecondition) {
    effect_retries_.WithLabels({{"kind", std::string(kind)}}).Increment();
  }
}
void TableMetrics::TableClaimed() { claims_.WithLabels({}).Increment(); }
void TableMetrics::BotMove(std::string_view level, std::string_view outcome) {
  bot_moves_.WithLabels({{"level", std::string(level)}, {"outcome", std::string(outcome)}})
      .Increment();
}
void TableMetrics::CommandLatency(double seconds) { latency_.WithLabels({}).Observe(seconds); }
void TableMetrics::StreamOpened(int delta) {
  streams_.WithLabels({}).Set(static_cast<double>(open_streams_.fetch_add(delta) + delta));
}
void TableMetrics::StreamCut(std::string_view why) {
  cuts_.WithLabels({{"reason", std::string(why)}}).Increment();
}
void TableMetrics::Refresh(const HostStats& s) {
  tables_.WithLabels({}).Set(static_cast<double>(s.tables));
  seats_.WithLabels({{"kind", "person"}}).Set(static_cast<double>(s.seats_people));
  seats_.WithLabels({{"kind", "bot"}}).Set(static_cast<double>(s.seats_bots));
  seats_.WithLabels({{"kind", "empty"}}).Set(static_cast<double>(s.seats_empty));
  pending_.WithLabels({}).Set(static_cast<double>(s.pending_effects));
  bot_jobs_.WithLabels({{"state", "queued"}}).Set(static_cast<double>(s.bot_jobs_queued));
  bot_jobs_.WithLabels({{"state", "expired"}}).Set(static_cast<double>(s.bot_jobs_expired));
}

// --- the service ---------------------------------------------------------------------------

TableServiceImpl::TableServiceImpl(TableHost& host, TableMetrics* metrics, StreamLimits limits)
    : host_(host), metrics_(metrics), limits_(limits) {}

grpc::ServerUnaryReactor* TableServiceImpl::CreateTable(
    grpc::CallbackServerContext* context, const table::v1::CreateTableRequest* request,
    table::v1::CreateTableResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  host_.CreateTable(*request,
                    [reactor, response](absl::StatusOr<table::v1::CreateTableResponse> r) {
                      if (r.ok()) *response = std::move(*r);
                      reactor->Finish(common::ToGrpcStatus(r.status()));
                    });
  return reactor;
}

grpc::ServerUnaryReactor* TableServiceImpl::GetTable(grpc::CallbackServerContext* context,
                                                     const table::v1::GetTableRequest* request,
                                                     table::v1::TableInfo* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  host_.GetTable(request->table_id(), [reactor, response](absl::StatusOr<table::v1::TableInfo> r) {
    if (r.ok()) *response = std::move(*r);
    reactor->Finish(common::ToGrpcStatus(r.status()));
  });
  return reactor;
}

grpc::ServerUnaryReactor* TableServiceImpl::ListTables(grpc::CallbackServerContext* context,
                                                       const table::v1::ListTablesRequest* request,
                                                       table::v1::ListTablesResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  TableHost::ListFilter filter{.player = request->player(), .open_only = request->open_only()};
  for (table::v1::TableInfo& info : host_.ListTables(filter)) {
    *response->add_tables() = std::move(info);
  }
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* TableServiceImpl::JoinTable(grpc::CallbackServerContext* context,
                                                      const table::v1::JoinTableRequest* request,
                                                      table::v1::JoinTableResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  host_.JoinTable(request->table_id(), request->player(),
                  [context, reactor, response](absl::StatusOr<table::v1::JoinTableResponse> r) {
                    if (r.ok()) {
                      *response = std::move(*r);
                    } else {
                      AddOwnerMetadata(context, r.status());
                    }
                    reactor->Finish(common::ToGrpcStatus(r.status()));
                  });
  return reactor;
}

grpc::ServerUnaryReactor* TableServiceImpl::CheckVoiceLock(
    grpc::CallbackServerContext* context, const table::v1::CheckVoiceLockRequest* request,
    table::v1::CheckVoiceLockResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  host_.CheckVoiceLock(
      request->table_id(), request->player(),
      [context, reactor, response](absl::StatusOr<table::v1::CheckVoiceLockResponse> r) {
        if (r.ok()) {
          *response = std::move(*r);
        } else {
          AddOwnerMetadata(context, r.status());
        }
        reactor->Finish(common::ToGrpcStatus(r.status()));
      });
  return reactor;
}

grpc::ServerUnaryReactor* TableServiceImpl::AnnounceVoiceNote(
    grpc::CallbackServerContext* context, const table::v1::AnnounceVoiceNoteRequest* request,
    table::v1::AnnounceVoiceNoteResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  host_.AnnounceVoiceNote(*request, [context, reactor, response](
                                        absl::StatusOr<table::v1::AnnounceVoiceNoteResponse> r) {
    if (r.ok()) {
      *response = std::move(*r);
    } else {
      AddOwnerMetadata(context, r.status());
    }
    reactor->Finish(common::ToGrpcStatus(r.status()));
  });
  return reactor;
}

grpc::ServerBidiReactor<PlayRequest, PlayResponse>* TableServiceImpl::Play(
    grpc::CallbackServerContext* context) {
  return new PlayReactor(context, host_, metrics_, limits_);
}

grpc::ServerBidiReactor<table::v1::PlayMuxRequest, table::v1::PlayMuxResponse>*
TableServiceImpl::PlayMux(grpc::CallbackServerContext*) {
  return NewPlayMuxReactor(host_, metrics_, limits_);
}

}  // namespace courtpiece::table_service
