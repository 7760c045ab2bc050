#include "services/moderation/grpc_table_port.h"

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_status.h"

namespace courtpiece::moderation {
namespace {

namespace pb = ::courtpiece::table::v1;
constexpr char kOwnerAddr[] = "courtpiece-owner-addr";

std::string OwnerAddr(const grpc::ClientContext& ctx) {
  auto it = ctx.GetServerTrailingMetadata().find(kOwnerAddr);
  if (it == ctx.GetServerTrailingMetadata().end()) return {};
  return std::string(it->second.data(), it->second.size());
}

}  // namespace

int GrpcTablePort::channels() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(stubs_.size());
}

std::shared_ptr<GrpcTablePort::Stub> GrpcTablePort::StubFor(const std::string& addr) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = stubs_.find(addr);
  if (it != stubs_.end()) return it->second;
  if (static_cast<int>(stubs_.size()) >= channels_max_) stubs_.clear();  // addresses churned
  auto stub =
      std::shared_ptr<Stub>(pb::TableService::NewStub(common::CreateGrpcChannel(addr, metrics_)));
  stubs_[addr] = stub;
  return stub;
}

absl::Status GrpcTablePort::AtOwner(
    const std::string& table_id, absl::Time deadline,
    const std::function<grpc::Status(Stub&, grpc::ClientContext*)>& call) {
  absl::StatusOr<std::string> addr = owners_.Lookup(table_id);
  if (!addr.ok()) {
    if (addr.status().code() == absl::StatusCode::kNotFound) return addr.status();
    if (addr.status().code() == absl::StatusCode::kUnavailable) return addr.status();
    return absl::UnavailableError(absl::StrCat("table registry: ", addr.status().ToString()));
  }
  std::string at = *addr;
  for (int attempt = 0; attempt < 2; ++attempt) {
    grpc::ClientContext ctx;
    ctx.set_deadline(absl::ToChronoTime(deadline));
    absl::Status s = common::FromGrpcStatus(call(*StubFor(at), &ctx));
    if (s.ok()) return s;
    if (s.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::UnavailableError(
          absl::StrCat("table instance ", at, " timed out: ", s.message()));
    }
    if (s.code() != absl::StatusCode::kFailedPrecondition) return s;
    const std::string redirect = OwnerAddr(ctx);
    if (redirect.empty()) return s;  // the table's own refusal (no_lock, round_over)
    if (attempt == 1 || redirect == at) {
      return absl::UnavailableError(
          absl::StrCat("table ", table_id, " is moving between instances: retry"));
    }
    at = redirect;
  }
  return absl::UnavailableError("unreachable");  // the loop always returns
}

absl::StatusOr<VoiceLock> GrpcTablePort::CheckVoiceLock(const std::string& table_id,
                                                        const std::string& player,
                                                        absl::Time deadline) {
  pb::CheckVoiceLockRequest request;
  request.set_table_id(table_id);
  request.set_player(player);
  pb::CheckVoiceLockResponse out;
  absl::Status s = AtOwner(table_id, deadline, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.CheckVoiceLock(ctx, request, &out);
  });
  if (!s.ok()) return s;
  return VoiceLock{
      .may_send = out.may_send(), .round = out.round(), .seat = out.seat(), .reason = out.reason()};
}

absl::StatusOr<Announced> GrpcTablePort::AnnounceVoiceNote(const Announcement& note,
                                                           absl::Time deadline) {
  pb::AnnounceVoiceNoteRequest request;
  request.set_table_id(note.table_id);
  request.set_player(note.player);
  request.set_round(note.round);
  request.set_note_id(note.note_id);
  request.set_duration_ms(note.duration_ms);
  pb::AnnounceVoiceNoteResponse out;
  absl::Status s = AtOwner(note.table_id, deadline, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.AnnounceVoiceNote(ctx, request, &out);
  });
  if (!s.ok()) return s;
  return Announced{.play_at_ms = out.play_at_ms(), .replayed = out.replayed()};
}

absl::StatusOr<TableView> GrpcTablePort::GetTable(const std::string& table_id,
                                                  absl::Time deadline) {
  pb::GetTableRequest request;
  request.set_table_id(table_id);
  pb::TableInfo out;
  absl::Status s = AtOwner(table_id, deadline, [&](Stub& stub, grpc::ClientContext* ctx) {
    return stub.GetTable(ctx, request, &out);
  });
  if (!s.ok()) return s;
  TableView view{.table_id = out.table_id(), .round = out.round(), .phase = out.phase()};
  for (const pb::SeatInfo& seat : out.seats()) {
    view.seats.push_back({.seat = seat.seat(), .kind = seat.kind(), .player = seat.player()});
  }
  return view;
}

}  // namespace courtpiece::moderation
