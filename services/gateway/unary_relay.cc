#include "services/gateway/unary_relay.h"

#include <chrono>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "courtpiece/client/v1/client.pb.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/lobby/v1/lobby.pb.h"
#include "courtpiece/moderation/v1/moderation.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/support/byte_buffer.h"

namespace courtpiece::gateway {
namespace {

namespace cv1 = client::v1;
namespace lv1 = lobby::v1;
namespace mv1 = moderation::v1;

// `service` is the upstream's "<package>.<Service>", e.g. "courtpiece.lobby.v1.Accounts".
template <typename Req, typename Resp>
UnaryMethod Method(std::string name, std::string_view service, bool needs_token,
                   bool admin_only = false) {
  UnaryMethod m;
  m.upstream = absl::StrCat("/", common::ToAbsl(service), "/", name);
  m.backend = absl::StartsWith(common::ToAbsl(service), "courtpiece.moderation.")
                  ? UnaryUpstream::kModeration
                  : UnaryUpstream::kLobby;
  m.name = std::move(name);
  m.request_prototype = &Req::default_instance();
  m.response_prototype = &Resp::default_instance();
  m.needs_token = needs_token;
  m.admin_only = admin_only;
  return m;
}

constexpr std::string_view kAccounts = "courtpiece.lobby.v1.Accounts";
constexpr std::string_view kDirectory = "courtpiece.lobby.v1.Directory";
constexpr std::string_view kStats = "courtpiece.lobby.v1.Stats";
constexpr std::string_view kLobbyAdmin = "courtpiece.lobby.v1.LobbyAdmin";
constexpr std::string_view kVoiceNotes = "courtpiece.moderation.v1.VoiceNotes";
constexpr std::string_view kModerationAdmin = "courtpiece.moderation.v1.ModerationAdmin";

const char* UpstreamName(UnaryUpstream backend) {
  return backend == UnaryUpstream::kModeration ? "moderation" : "lobby";
}

grpc::ByteBuffer ToBuffer(const google::protobuf::Message& message) {
  const std::string bytes = message.SerializeAsString();
  grpc::Slice slice(bytes);
  return grpc::ByteBuffer(&slice, 1);
}

bool FromBuffer(const grpc::ByteBuffer& buffer, google::protobuf::Message& message) {
  std::vector<grpc::Slice> slices;
  if (!buffer.Dump(&slices).ok()) return false;
  std::string bytes;
  bytes.reserve(buffer.Length());
  for (const grpc::Slice& s : slices) {
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  }
  return message.ParseFromString(bytes);
}

// One upstream call in flight: owns what gRPC writes into until it completes.
struct UnaryCall {
  grpc::ClientContext context;
  grpc::ByteBuffer request;
  grpc::ByteBuffer response;
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
};

// An upstream call's answer, to `done` (which goes with this function's return: it may hold
// the last reference to the front's connection).
void Complete(UnaryCall& call, const grpc::Status& grpc_status,
              const google::protobuf::Message* prototype, GatewayMetrics* metrics,
              const char* upstream_name, const std::string& name, UnaryDone done) {
  const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - call.started;
  metrics->UpstreamCall(name, static_cast<int>(grpc_status.error_code()), seconds.count());
  if (!grpc_status.ok()) {
    done(common::FromGrpcStatus(grpc_status), nullptr);
    return;
  }
  std::unique_ptr<google::protobuf::Message> response(prototype->New());
  if (!FromBuffer(call.response, *response)) {
    done(absl::InternalError(absl::StrCat("malformed reply of the ", upstream_name, " to ", name)),
         nullptr);
    return;
  }
  response->DiscardUnknownFields();
  done(absl::OkStatus(), std::move(response));
}

}  // namespace

std::unique_ptr<UnaryRelay> UnaryRelay::ForClients(UnaryUpstreams upstreams, const TokenGate& gate,
                                                   const Clock& clock, GatewayMetrics& metrics,
                                                   UnaryRelayOptions options) {
  UnaryMethod upload =
      Method<cv1::UploadNoteRequest, cv1::UploadNoteResponse>("UploadNote", kVoiceNotes, true);
  upload.request_bytes_max = kVoiceMessageBytesMax;
  std::vector<UnaryMethod> methods = {
      Method<cv1::GuestLoginRequest, cv1::Session>("GuestLogin", kAccounts, false),
      Method<cv1::RefreshRequest, cv1::Session>("Refresh", kAccounts, false),
      Method<cv1::GetProfileRequest, cv1::Profile>("GetProfile", kAccounts, true),
      Method<cv1::UpdateProfileRequest, cv1::Profile>("UpdateProfile", kAccounts, true),
      Method<cv1::GetPublicProfilesRequest, cv1::GetPublicProfilesResponse>("GetPublicProfiles",
                                                                            kAccounts, true),
      Method<cv1::CreateTableRequest, cv1::TableRef>("CreateTable", kDirectory, true),
      Method<cv1::ResolveCodeRequest, cv1::TableRef>("ResolveCode", kDirectory, true),
      Method<cv1::ListOpenTablesRequest, cv1::ListOpenTablesResponse>("ListOpenTables", kDirectory,
                                                                      true),
      Method<cv1::QuickJoinRequest, cv1::TableRef>("QuickJoin", kDirectory, true),
      Method<cv1::MyTablesRequest, cv1::MyTablesResponse>("MyTables", kDirectory, true),
      Method<cv1::GetStatsRequest, cv1::StatsResponse>("GetStats", kStats, true),
      Method<cv1::RecentResultsRequest, cv1::RecentResultsResponse>("RecentResults", kStats, true),
      std::move(upload),
      Method<cv1::GetNoteRequest, cv1::GetNoteResponse>("GetNote", kVoiceNotes, true),
  };
  return std::make_unique<UnaryRelay>(std::move(methods), std::move(upstreams), gate, clock,
                                      metrics, options);
}

std::unique_ptr<UnaryRelay> UnaryRelay::ForAdmins(UnaryUpstreams upstreams, const TokenGate& gate,
                                                  const Clock& clock, GatewayMetrics& metrics,
                                                  UnaryRelayOptions options) {
  std::vector<UnaryMethod> methods = {
      Method<lv1::GetPlayerRequest, lv1::PlayerDossier>("GetPlayer", kLobbyAdmin, true, true),
      Method<lv1::ListQuitsRequest, lv1::ListQuitsResponse>("ListQuits", kLobbyAdmin, true, true),
      Method<lv1::ListRoundsRequest, lv1::ListRoundsResponse>("ListRounds", kLobbyAdmin, true,
                                                              true),
      Method<mv1::ListReportsRequest, mv1::ListReportsResponse>("ListReports", kModerationAdmin,
                                                                true, true),
      Method<mv1::GetReportRequest, mv1::ReportContext>("GetReport", kModerationAdmin, true, true),
      Method<mv1::ResolveReportRequest, mv1::ResolveReportResponse>("ResolveReport",
                                                                    kModerationAdmin, true, true),
      Method<mv1::MutePlayerRequest, mv1::Mute>("MutePlayer", kModerationAdmin, true, true),
      Method<mv1::ListMutesRequest, mv1::ListMutesResponse>("ListMutes", kModerationAdmin, true,
                                                            true),
      Method<mv1::LiftMuteRequest, mv1::Mute>("LiftMute", kModerationAdmin, true, true),
      Method<mv1::ListAuditRequest, mv1::ListAuditResponse>("ListAudit", kModerationAdmin, true,
                                                            true),
  };
  return std::make_unique<UnaryRelay>(std::move(methods), std::move(upstreams), gate, clock,
                                      metrics, options);
}

UnaryRelay::UnaryRelay(std::vector<UnaryMethod> methods, UnaryUpstreams upstreams,
                       const TokenGate& gate, const Clock& clock, GatewayMetrics& metrics,
                       UnaryRelayOptions options)
    : methods_(std::move(methods)),
      upstreams_(std::move(upstreams)),
      gate_(gate),
      clock_(clock),
      metrics_(metrics),
      options_(options) {
  for (size_t i = 0; i < methods_.size(); ++i) by_name_.emplace(methods_[i].name, i);
  if (upstreams_.lobby != nullptr) {
    lobby_stub_ = std::make_unique<grpc::GenericStub>(upstreams_.lobby);
  }
  if (upstreams_.moderation != nullptr) {
    moderation_stub_ = std::make_unique<grpc::GenericStub>(upstreams_.moderation);
  }
}

UnaryRelay::~UnaryRelay() { live_->CancelAndWait(options_.finish_wait); }

grpc::GenericStub* UnaryRelay::StubFor(UnaryUpstream backend) {
  return backend == UnaryUpstream::kModeration ? moderation_stub_.get() : lobby_stub_.get();
}

const UnaryMethod* UnaryRelay::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &methods_[it->second];
}

void UnaryRelay::Call(const UnaryMethod& method, std::unique_ptr<google::protobuf::Message> request,
                      const UnaryContext& ctx, UnaryDone done) {
  if (method.needs_token) {
    absl::StatusOr<auth::Claims> claims =
        gate_.AuthenticateFor(ctx.authorization, method.admin_only);
    if (!claims.ok()) {
      done(claims.status(), nullptr);
      return;
    }
  }
  if (request == nullptr || request->GetDescriptor() != method.request_prototype->GetDescriptor()) {
    done(absl::InternalError(absl::StrCat("request of the wrong type for ", method.name)), nullptr);
    return;
  }
  grpc::GenericStub* stub = StubFor(method.backend);
  if (stub == nullptr) {
    done(absl::UnavailableError(absl::StrCat("no ", UpstreamName(method.backend),
                                             " service configured for ", method.name)),
         nullptr);
    return;
  }
  const absl::Time now = clock_.Now();
  const absl::Time deadline = std::min(ctx.deadline, now + options_.deadline_max);
  if (deadline <= now) {
    done(absl::DeadlineExceededError("deadline exceeded before the call started"), nullptr);
    return;
  }
  auto call = std::make_shared<UnaryCall>();
  // The real clock's remaining time, so a fake clock in tests still gives gRPC a sane deadline.
  call->context.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoMilliseconds(deadline - now));
  if (!ctx.authorization.empty()) call->context.AddMetadata("authorization", ctx.authorization);
  call->request = ToBuffer(*request);
  const google::protobuf::Message* prototype = method.response_prototype;
  GatewayMetrics* metrics = &metrics_;
  std::string name = method.name;
  const char* upstream_name = UpstreamName(method.backend);
  const uint64_t live_id = live_->Started([weak = std::weak_ptr<UnaryCall>(call)] {
    if (std::shared_ptr<UnaryCall> c = weak.lock(); c != nullptr) c->context.TryCancel();
  });
  stub->UnaryCall(
      &call->context, method.upstream, grpc::StubOptions(), &call->request, &call->response,
      [call, prototype, metrics, upstream_name, name = std::move(name), done = std::move(done),
       live = live_, live_id](grpc::Status grpc_status) mutable {
        Complete(*call, grpc_status, prototype, metrics, upstream_name, name, std::move(done));
        done = nullptr;  // certainly gone (a moved-from function need not be empty)
        live->Finished(live_id);
      });
}

int UnaryRelay::CancelAndWait(absl::Duration timeout) { return live_->CancelAndWait(timeout); }

}  // namespace courtpiece::gateway
