// The table service's gRPC face (table_service.proto) over TableHost: translation only.
// Play is a callback bidi reactor per stream (PlayMux, its many-sessions form: play_mux.h): the
// player comes from the metadata "courtpiece-player-id" (set by the gateway), commands are rate
// limited per stream, and outgoing messages wait in a bounded queue (a client that does not read is
// cut). Thread-safety: gRPC calls the service from its threads; the host is thread-safe.
#ifndef COURTPIECE_SERVICES_TABLE_SERVER_H_
#define COURTPIECE_SERVICES_TABLE_SERVER_H_

#include <cstdint>

#include "courtpiece/common/metrics.h"
#include "courtpiece/table/v1/table_service.grpc.pb.h"
#include "services/table/table_host.h"

namespace courtpiece::table_service {

inline constexpr char kPlayerIdMetadata[] = "courtpiece-player-id";
inline constexpr char kOwnerAddrMetadata[] = "courtpiece-owner-addr";

struct StreamLimits {
  int queue_max = 512;                 // messages waiting to be written to one stream
  double commands_per_second = 20;     // sustained command rate per stream
  double commands_burst = 40;          // bucket size
  int refusals_before_cut = 100;       // rate refusals after which the stream is cut
  int pending_command_times_max = 64;  // commands timed for the latency histogram at once
  // PlayMux (play_mux.h): live sessions per stream, and messages waiting in all on it.
  int mux_sessions_max = 100'000;
  int mux_queue_max = 65'536;
};

// The service's metrics (courtpiece_table_*), also the host's hooks.
class TableMetrics final : public HostMetrics {
 public:
  explicit TableMetrics(common::Metrics& metrics);
  void Command(std::string_view type, absl::StatusCode code) override;
  void Save(size_t bytes, absl::StatusCode code) override;
  void EffectSent(std::string_view kind, absl::StatusCode code) override;
  void TableClaimed() override;
  void BotMove(std::string_view level, std::string_view outcome) override;
  void CommandLatency(double seconds);
  void StreamOpened(int delta);
  void StreamCut(std::string_view why);
  void Refresh(const HostStats& stats);

 private:
  common::CounterFamily commands_, saves_, save_bytes_, effects_, effect_retries_, claims_, cuts_,
      bot_moves_;
  common::HistogramFamily latency_;
  common::GaugeFamily tables_, seats_, streams_, pending_, bot_jobs_;
  std::atomic<int64_t> open_streams_{0};
};

class TableServiceImpl final : public table::v1::TableService::CallbackService {
 public:
  TableServiceImpl(TableHost& host, TableMetrics* metrics, StreamLimits limits = {});

  grpc::ServerUnaryReactor* CreateTable(grpc::CallbackServerContext* context,
                                        const table::v1::CreateTableRequest* request,
                                        table::v1::CreateTableResponse* response) override;
  grpc::ServerUnaryReactor* GetTable(grpc::CallbackServerContext* context,
                                     const table::v1::GetTableRequest* request,
                                     table::v1::TableInfo* response) override;
  grpc::ServerUnaryReactor* ListTables(grpc::CallbackServerContext* context,
                                       const table::v1::ListTablesRequest* request,
                                       table::v1::ListTablesResponse* response) override;
  grpc::ServerUnaryReactor* JoinTable(grpc::CallbackServerContext* context,
                                      const table::v1::JoinTableRequest* request,
                                      table::v1::JoinTableResponse* response) override;
  grpc::ServerUnaryReactor* CheckVoiceLock(grpc::CallbackServerContext* context,
                                           const table::v1::CheckVoiceLockRequest* request,
                                           table::v1::CheckVoiceLockResponse* response) override;
  grpc::ServerUnaryReactor* AnnounceVoiceNote(
      grpc::CallbackServerContext* context, const table::v1::AnnounceVoiceNoteRequest* request,
      table::v1::AnnounceVoiceNoteResponse* response) override;
  grpc::ServerBidiReactor<table::v1::PlayRequest, table::v1::PlayResponse>* Play(
      grpc::CallbackServerContext* context) override;
  grpc::ServerBidiReactor<table::v1::PlayMuxRequest, table::v1::PlayMuxResponse>* PlayMux(
      grpc::CallbackServerContext* context) override;

 private:
  TableHost& host_;
  TableMetrics* metrics_;
  const StreamLimits limits_;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_SERVER_H_
