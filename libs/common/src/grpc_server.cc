#include "courtpiece/common/grpc_server.h"

#include <chrono>
#include <condition_variable>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/check.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/shutdown_signal.h"
#include "google/protobuf/descriptor.h"
#include "grpc/byte_buffer.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/rpc_service_method.h"
#include "grpcpp/impl/service_type.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_interceptor.h"

namespace courtpiece::common {
namespace {

// After the drain: how long gRPC's Shutdown waits for clients to close their connections
// before it closes them (and cancels anything still running).
constexpr absl::Duration kCloseConnectionsGrace = absl::Milliseconds(100);
// After the drain, how long the gate keeps refusing before gRPC's Shutdown starts.
constexpr absl::Duration kRefuseAfterDrain = absl::Milliseconds(100);

}  // namespace

// The method label: the full path for methods of linked protos and of health and reflection,
// "unknown" otherwise (so a client cannot grow the label set with made-up names).
std::string MethodLabel(const char* method) {
  if (method == nullptr) return "unknown";
  const absl::string_view path(method);
  if (absl::StartsWith(path, "/grpc.health.v1.Health/") ||
      absl::StartsWith(path, "/grpc.reflection.v1alpha.ServerReflection/")) {
    return std::string(path);
  }
  const size_t slash = path.rfind('/');
  if (path.size() < 2 || path[0] != '/' || slash == 0) return "unknown";
  const std::string full_name =
      absl::StrCat(path.substr(1, slash - 1), ".", path.substr(slash + 1));
  if (google::protobuf::DescriptorPool::generated_pool()->FindMethodByName(full_name) == nullptr) {
    return "unknown";
  }
  return std::string(path);
}

namespace {

// The {method, code} counter and latency histogram of finished RPCs.
class Recorder final : public CallRecorder {
 public:
  explicit Recorder(Metrics& metrics)
      : handled_(
            metrics.Counter("grpc_server_handled", "Finished RPCs by method and status code.")),
        latency_(metrics.LatencyHistogram("grpc_server_handling",
                                          "RPC latency in seconds by method and status code.")) {}

  void Record(const std::string& method, grpc::StatusCode code, double seconds) override {
    const prometheus::Labels labels = {{"method", method}, {"code", GrpcCodeName(code)}};
    handled_.WithLabels(labels).Increment();
    latency_.WithLabels(labels).Observe(seconds);
  }

 private:
  CounterFamily handled_;
  HistogramFamily latency_;
};

// One per RPC: times it and records count and latency when the status is sent.
class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(std::string method, CallRecorder* recorder)
      : method_(std::move(method)), recorder_(recorder), start_(std::chrono::steady_clock::now()) {}

  ~MetricsInterceptor() override {
    if (!recorded_) Record(grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      Record(methods->GetSendStatus().error_code());
    }
    methods->Proceed();
  }

 private:
  void Record(grpc::StatusCode code) {
    recorded_ = true;
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
    recorder_->Record(method_, code, elapsed.count());
  }

  std::string method_;
  CallRecorder* recorder_;
  std::chrono::steady_clock::time_point start_;
  bool recorded_ = false;
};

// An interceptor for every RPC but bidi streams and the methods of `skipped` (full paths:
// async-API methods, which record themselves). With an interceptor gRPC passes every batch
// of a call through its completion queue a second time; on a bidi stream that is every
// message: measured on the table tier (PlayMux streams, 5,000 tables at one action per second
// each, docs/table-load.md), p99 29-64 ms with the interceptor against 20-36 ms without.
class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  MetricsInterceptorFactory(std::shared_ptr<Recorder> recorder, std::set<std::string> skipped)
      : recorder_(std::move(recorder)), skipped_(std::move(skipped)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (info->type() == grpc::experimental::ServerRpcInfo::Type::BIDI_STREAMING) return nullptr;
    if (info->method() != nullptr && skipped_.count(info->method()) > 0) return nullptr;
    return new MetricsInterceptor(MethodLabel(info->method()), recorder_.get());
  }

 private:
  const std::shared_ptr<Recorder> recorder_;
  const std::set<std::string> skipped_;
};

}  // namespace

std::shared_ptr<CallRecorder> NewCallRecorder(Metrics& metrics) {
  return std::make_shared<Recorder>(metrics);
}

// Admits RPCs while open and counts those admitted until they finish, so that Shutdown can
// refuse new calls and wait for the admitted ones before gRPC's own shutdown (which
// cancels whatever is still queued or running).
class DrainGate {
 public:
  bool TryEnter() {
    std::lock_guard<std::mutex> lock(mu_);
    if (!open_) return false;
    ++in_flight_;
    return true;
  }
  void Leave() {
    std::lock_guard<std::mutex> lock(mu_);
    COURTPIECE_CHECK(in_flight_ > 0, "Leave without Enter");
    if (--in_flight_ == 0) idle_.notify_all();
  }
  void Close() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = false;
  }
  // Waits until no admitted call is left or `deadline` passes. Returns the number of
  // admitted calls still running (0 = drained).
  int WaitIdle(absl::Time deadline) {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait_until(lock, absl::ToChronoTime(deadline), [this] { return in_flight_ == 0; });
    return in_flight_;
  }

 private:
  std::mutex mu_;  // not absl::Mutex: visible to TSan
  std::condition_variable idle_;
  bool open_ = true;   // guarded by mu_
  int in_flight_ = 0;  // guarded by mu_
};

namespace {

constexpr char kShuttingDownMessage[] = "server is shutting down; the call was not run";

// Wraps a sync method's handler with the gate. The decision is taken in Deserialize, which
// the sync server calls once per call (for methods with a request message: unary and
// server-streaming) before any interceptor or the handler runs: a refused call never reaches
// the service, and the inner handler answers UNAVAILABLE because its request status is not
// OK. Methods without a request message (client-streaming, bidi) are counted when admitted
// but not refused (their handlers ignore the request status); none of ours has one.
class GatedHandler final : public grpc::internal::MethodHandler {
 public:
  GatedHandler(std::unique_ptr<grpc::internal::RpcServiceMethod> original,
               std::shared_ptr<DrainGate> gate)
      : original_(std::move(original)), gate_(std::move(gate)) {}

  void set_gate(std::shared_ptr<DrainGate> gate) { gate_ = std::move(gate); }

  void* Deserialize(grpc_call* call, grpc_byte_buffer* req, grpc::Status* status,
                    void** handler_data) override {
    if (!gate_->TryEnter()) {
      if (req != nullptr) grpc_byte_buffer_destroy(req);  // Deserialize owns the payload
      *status = grpc::Status(grpc::StatusCode::UNAVAILABLE, kShuttingDownMessage);
      return nullptr;
    }
    return original_->handler()->Deserialize(call, req, status, handler_data);
  }

  void RunHandler(const HandlerParameter& param) override {
    const bool refused = param.status.error_code() == grpc::StatusCode::UNAVAILABLE &&
                         param.status.error_message() == kShuttingDownMessage;
    const bool has_request =
        original_->method_type() == grpc::internal::RpcMethod::NORMAL_RPC ||
        original_->method_type() == grpc::internal::RpcMethod::SERVER_STREAMING;
    // Without a request message Deserialize was not called: enter here (never refused).
    const bool entered = has_request ? !refused : gate_->TryEnter();
    original_->handler()->RunHandler(param);
    if (entered) gate_->Leave();
  }

 private:
  std::unique_ptr<grpc::internal::RpcServiceMethod> original_;  // owns the inner handler
  std::shared_ptr<DrainGate> gate_;
};

// grpc::Service keeps its methods in a private vector and gRPC 1.51 offers no public hook in
// front of a sync handler (a server interceptor cannot end a call: hijacking is client-only;
// it can only rewrite the status after the handler ran). The standard allows naming a
// private member in an explicit instantiation ([temp.spec.general]/6), which is how this
// one place reaches grpc::Service::methods_ to wrap each sync handler with the gate.
using ServiceMethods = std::vector<std::unique_ptr<grpc::internal::RpcServiceMethod>>;
struct ServiceMethodsTag {
  using Member = ServiceMethods grpc::Service::*;
  friend Member MethodsMember(ServiceMethodsTag);
};
template <ServiceMethodsTag::Member M>
struct ServiceMethodsAccess {
  friend ServiceMethodsTag::Member MethodsMember(ServiceMethodsTag) { return M; }
};
template struct ServiceMethodsAccess<&grpc::Service::methods_>;

// Puts every sync method of `service` behind `gate` (a service started before keeps its
// wrappers; they are re-pointed at the new gate).
void GateSyncMethods(grpc::Service& service, const std::shared_ptr<DrainGate>& gate) {
  ServiceMethods& methods = service.*MethodsMember(ServiceMethodsTag{});
  for (std::unique_ptr<grpc::internal::RpcServiceMethod>& method : methods) {
    if (method == nullptr || method->handler() == nullptr ||
        method->api_type() != grpc::internal::RpcServiceMethod::ApiType::SYNC) {
      continue;  // generic, async, raw or callback: not served by sync handlers
    }
    if (auto* gated = dynamic_cast<GatedHandler*>(method->handler())) {
      gated->set_gate(gate);
      continue;
    }
    const char* name = method->name();
    const grpc::internal::RpcMethod::RpcType type = method->method_type();
    auto* handler = new GatedHandler(std::move(method), gate);
    method = std::make_unique<grpc::internal::RpcServiceMethod>(name, type, handler);
  }
}

// The full paths of `service`'s async-API methods.
std::set<std::string> AsyncMethodPaths(grpc::Service& service) {
  std::set<std::string> paths;
  for (const std::unique_ptr<grpc::internal::RpcServiceMethod>& method :
       service.*MethodsMember(ServiceMethodsTag{})) {
    if (method != nullptr &&
        method->api_type() == grpc::internal::RpcServiceMethod::ApiType::ASYNC) {
      paths.insert(method->name());
    }
  }
  return paths;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const GrpcServerOptions& options, const std::vector<grpc::Service*>& services,
    Metrics& metrics) {
  grpc::EnableDefaultHealthCheckService(true);
  if (options.enable_reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  auto gate = std::make_shared<DrainGate>();
  for (grpc::Service* service : services) GateSyncMethods(*service, gate);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen_address, grpc::InsecureServerCredentials(), &port);
  // A port held by another process must fail loudly, not silently share its traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (grpc::Service* service : services) builder.RegisterService(service);
  std::vector<AsyncService*> async_services;
  std::set<std::string> async_paths;
  for (grpc::Service* service : services) {
    if (auto* async = dynamic_cast<AsyncService*>(service)) {
      async_services.push_back(async);
      async_paths.merge(AsyncMethodPaths(*service));
    }
  }
  std::unique_ptr<AsyncQueues> queues;
  if (!async_services.empty()) queues = AsyncQueues::ForServer(builder, options.async_queues);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS,
                              options.sync_max_pollers);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  if (options.ping_interval_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, options.ping_interval_ms);
  }
  if (options.ping_timeout_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, options.ping_timeout_ms);
  }
  if (options.client_ping_interval_min_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                               options.client_ping_interval_min_ms);
  }
  // Our pings, and the clients', also while a connection has no call.
  if (options.ping_interval_ms > 0 || options.client_ping_interval_min_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  }
  if (options.connection_idle_ms > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, options.connection_idle_ms);
  }
  if (options.streams_per_connection_max > 0) {
    builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS, options.streams_per_connection_max);
  }
  builder.SetMaxSendMessageSize(options.max_send_message_bytes);
  if (options.max_threads > 0) {
    grpc::ResourceQuota quota("courtpiece_grpc_server");
    quota.SetMaxThreads(options.max_threads);
    builder.SetResourceQuota(quota);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
  auto recorder = std::make_shared<Recorder>(metrics);
  factories.push_back(
      std::make_unique<MetricsInterceptorFactory>(recorder, std::move(async_paths)));
  builder.experimental().SetInterceptorCreators(std::move(factories));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("gRPC server could not listen on \"", options.listen_address, "\""));
  }
  if (queues != nullptr) {
    queues->StartThreads();
    for (AsyncService* async : async_services) async->ServeOn(*queues, *recorder);
  }
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(server), std::move(gate), port,
                                                    std::move(queues), std::move(recorder)));
}

GrpcServer::GrpcServer(std::unique_ptr<grpc::Server> server, std::shared_ptr<DrainGate> gate,
                       int port, std::unique_ptr<AsyncQueues> queues,
                       std::shared_ptr<CallRecorder> recorder)
    : recorder_(std::move(recorder)),
      queues_(std::move(queues)),
      server_(std::move(server)),
      gate_(std::move(gate)),
      port_(port) {
  SetServing(true);
}

GrpcServer::~GrpcServer() {
  Shutdown(absl::Now());
  server_->Wait();
}

std::string GrpcServer::LoopbackAddress() const { return absl::StrCat("127.0.0.1:", port_); }

std::shared_ptr<grpc::Channel> GrpcServer::InProcessChannel() {
  return server_->InProcessChannel(grpc::ChannelArguments());
}

void GrpcServer::SetServing(bool serving) {
  if (grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService()) {
    health->SetServingStatus(serving);
  }
}

void GrpcServer::Shutdown(absl::Time deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (shut_down_) return;
  // 1. Refuse new calls (UNAVAILABLE, never run) and let the admitted ones finish. gRPC's own
  //    Shutdown would instead cancel at once every call it has received but not yet handed
  //    to a handler thread (its clients saw CANCELLED), and cancel the rest at the deadline.
  //    The gate closes before health says NOT_SERVING: whoever sees NOT_SERVING knows that
  //    its next call is refused.
  gate_->Close();
  SetServing(false);
  running_at_drain_end_ = gate_->WaitIdle(deadline);
  // 2. Keep refusing a little longer: a client whose call just finished may send its next
  //    one right now; the gate answers it UNAVAILABLE, whereas gRPC's Shutdown would cancel it
  //    (CANCELLED) had it arrived between the two.
  if (running_at_drain_end_ == 0) {
    absl::SleepFor(std::min(kRefuseAfterDrain, deadline - absl::Now()));
  }
  // 3. Close the listener and every connection. Nothing admitted is running now (unless the
  //    deadline passed), so the short deadline only stops idle client connections from
  //    holding the shutdown until they hang up; what is left at it is cancelled (UNAVAILABLE).
  server_->Shutdown(absl::ToChronoTime(std::min(deadline, absl::Now() + kCloseConnectionsGrace)));
  // 4. The async methods' queues: every call was cancelled by now; deliver what is left.
  if (queues_ != nullptr) queues_->Stop();
  shut_down_ = true;
}

int GrpcServer::running_at_drain_end() {
  std::lock_guard<std::mutex> lock(mu_);
  return running_at_drain_end_;
}

void GrpcServer::Wait() { server_->Wait(); }

int ServeUntilShutdownSignal(GrpcServer& server, absl::Duration drain) {
  const int signo = WaitForShutdownSignal();
  server.Shutdown(absl::Now() + drain);
  return signo;
}

namespace {

// grpc.health.v1.HealthCheckRequest{service} in protobuf wire format (field 1, string).
std::string EncodeHealthRequest(std::string_view service) {
  if (service.empty()) return "";
  std::string out = "\x0a";
  for (size_t len = service.size(); true; len >>= 7) {
    if (len < 0x80) {
      out.push_back(static_cast<char>(len));
      break;
    }
    out.push_back(static_cast<char>((len & 0x7f) | 0x80));
  }
  out.append(service);
  return out;
}

// The status field (1, varint) of grpc.health.v1.HealthCheckResponse; 0 when absent.
std::optional<int> DecodeHealthStatus(const std::string& bytes) {
  if (bytes.empty()) return 0;
  if (bytes.size() == 2 && bytes[0] == '\x08' && (bytes[1] & 0x80) == 0) return bytes[1];
  return std::nullopt;
}

}  // namespace

absl::StatusOr<bool> CheckHealth(grpc::Channel& channel, std::string_view service,
                                 absl::Duration timeout) {
  std::shared_ptr<grpc::Channel> unowned(&channel, [](grpc::Channel*) {});
  grpc::GenericStub stub(unowned);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  const std::string request_bytes = EncodeHealthRequest(service);
  grpc::Slice slice(request_bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &request, &response,
                 [&](grpc::Status s) {
                   status = std::move(s);
                   done.Notify();
                 });
  done.WaitForNotification();
  if (!status.ok()) return FromGrpcStatus(status);
  grpc::Slice reply;
  std::string reply_bytes;
  if (response.Length() > 0) {
    if (!response.DumpToSingleSlice(&reply).ok()) return absl::InternalError("bad health reply");
    reply_bytes.assign(reinterpret_cast<const char*>(reply.begin()), reply.size());
  }
  const std::optional<int> serving_status = DecodeHealthStatus(reply_bytes);
  if (!serving_status.has_value()) return absl::InternalError("malformed health reply");
  return *serving_status == 1;  // SERVING
}

absl::Time ServerDeadline(const grpc::ServerContextBase& context, const Clock& clock,
                          absl::Duration rpc_deadline_max) {
  const absl::Time capped = clock.Now() + rpc_deadline_max;
  const auto client = context.deadline();
  if (client == std::chrono::system_clock::time_point::max()) return capped;
  return std::min(capped, absl::FromChrono(client));
}

bool WaitServing(const std::string& address, absl::Duration timeout) {
  auto channel = grpc::CreateChannel(address, grpc::InsecureChannelCredentials());
  const absl::Time until = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<bool> serving = CheckHealth(*channel, "", absl::Milliseconds(200));
    if (serving.ok() && *serving) return true;
    if (absl::Now() >= until) return false;
    absl::SleepFor(absl::Milliseconds(100));
  }
}

}  // namespace courtpiece::common
