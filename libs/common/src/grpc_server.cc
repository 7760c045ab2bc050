#include "courtpiece/common/grpc_server.h"

#include <chrono>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"
#include "courtpiece/common/absl_compat.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/common/shutdown_signal.h"
#include "google/protobuf/descriptor.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/resource_quota.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_interceptor.h"

namespace courtpiece::common {
namespace {

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

// One per RPC: times it and records count and latency when the status is sent.
class MetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(std::string method, CounterFamily* handled, HistogramFamily* latency)
      : method_(std::move(method)),
        handled_(handled),
        latency_(latency),
        start_(std::chrono::steady_clock::now()) {}

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
    const prometheus::Labels labels = {{"method", method_}, {"code", GrpcCodeName(code)}};
    handled_->WithLabels(labels).Increment();
    latency_->WithLabels(labels).Observe(elapsed.count());
  }

  std::string method_;
  CounterFamily* handled_;
  HistogramFamily* latency_;
  std::chrono::steady_clock::time_point start_;
  bool recorded_ = false;
};

class MetricsInterceptorFactory final
    : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Metrics& metrics)
      : handled_(
            metrics.Counter("grpc_server_handled", "Finished RPCs by method and status code.")),
        latency_(metrics.LatencyHistogram("grpc_server_handling",
                                          "RPC latency in seconds by method and status code.")) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(MethodLabel(info->method()), &handled_, &latency_);
  }

 private:
  CounterFamily handled_;
  HistogramFamily latency_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    const GrpcServerOptions& options, const std::vector<grpc::Service*>& services,
    Metrics& metrics) {
  grpc::EnableDefaultHealthCheckService(true);
  if (options.enable_reflection) grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen_address, grpc::InsecureServerCredentials(), &port);
  // A port held by another process must fail loudly, not silently share its traffic.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  for (grpc::Service* service : services) builder.RegisterService(service);
  builder.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  builder.SetMaxSendMessageSize(options.max_send_message_bytes);
  if (options.max_threads > 0) {
    grpc::ResourceQuota quota("courtpiece_grpc_server");
    quota.SetMaxThreads(options.max_threads);
    builder.SetResourceQuota(quota);
  }
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> factories;
  factories.push_back(std::make_unique<MetricsInterceptorFactory>(metrics));
  builder.experimental().SetInterceptorCreators(std::move(factories));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("gRPC server could not listen on \"", options.listen_address, "\""));
  }
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(server), port));
}

GrpcServer::GrpcServer(std::unique_ptr<grpc::Server> server, int port)
    : server_(std::move(server)), port_(port) {
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
  SetServing(false);
  server_->Shutdown(absl::ToChronoTime(deadline));
  shut_down_ = true;
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

}  // namespace courtpiece::common
