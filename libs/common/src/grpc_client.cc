#include "courtpiece/common/grpc_client.h"

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "courtpiece/common/grpc_status.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "grpcpp/support/client_interceptor.h"

namespace courtpiece::common {
namespace {

// One per call: records count and latency when the status arrives.
class ClientMetricsInterceptor final : public grpc::experimental::Interceptor {
 public:
  ClientMetricsInterceptor(const char* method, CounterFamily* handled, HistogramFamily* latency)
      : method_(method == nullptr ? "unknown" : method),
        handled_(handled),
        latency_(latency),
        start_(std::chrono::steady_clock::now()) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::POST_RECV_STATUS)) {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start_;
      const prometheus::Labels labels = {
          {"method", method_}, {"code", GrpcCodeName(methods->GetRecvStatus()->error_code())}};
      handled_->WithLabels(labels).Increment();
      latency_->WithLabels(labels).Observe(elapsed.count());
    }
    methods->Proceed();
  }

 private:
  std::string method_;
  CounterFamily* handled_;
  HistogramFamily* latency_;
  std::chrono::steady_clock::time_point start_;
};

class ClientMetricsInterceptorFactory final
    : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit ClientMetricsInterceptorFactory(Metrics& metrics)
      : handled_(metrics.Counter("grpc_client_handled",
                                 "Finished outgoing RPCs by method and status code.")),
        latency_(metrics.LatencyHistogram(
            "grpc_client_handling", "Outgoing RPC latency in seconds by method and status code.")) {
  }

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo* info) override {
    return new ClientMetricsInterceptor(info->method(), &handled_, &latency_);
  }

 private:
  CounterFamily handled_;
  HistogramFamily latency_;
};

}  // namespace

void PinGrpcCallbackQueue() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Deliberately never destroyed (reachable from this static: no leak report).
    static std::shared_ptr<grpc::Channel>* const pinned = new std::shared_ptr<grpc::Channel>(
        grpc::CreateChannel("unix:/nonexistent/courtpiece-grpc-callback-queue-pin",
                            grpc::InsecureChannelCredentials()));
    grpc::GenericStub stub(*pinned);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now());  // fails at once, never connects
    grpc::Slice empty("");
    grpc::ByteBuffer request(&empty, 1), response;  // a default ByteBuffer is no message
    std::mutex mu;
    std::condition_variable finished;
    bool done = false;
    stub.UnaryCall(&context, "/courtpiece.Pin/Pin", grpc::StubOptions(), &request, &response,
                   [&](grpc::Status) {
                     std::lock_guard<std::mutex> lock(mu);
                     done = true;
                     finished.notify_one();
                   });
    std::unique_lock<std::mutex> lock(mu);
    finished.wait(lock, [&] { return done; });
  });
}

std::shared_ptr<grpc::Channel> CreateGrpcChannel(const std::string& address, Metrics* metrics,
                                                 const GrpcChannelOptions& options) {
  PinGrpcCallbackQueue();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options.max_send_message_bytes);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> factories;
  if (metrics != nullptr) {
    factories.push_back(std::make_unique<ClientMetricsInterceptorFactory>(*metrics));
  }
  return grpc::experimental::CreateCustomChannelWithInterceptors(
      address, grpc::InsecureChannelCredentials(), args, std::move(factories));
}

void SetTimeout(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace courtpiece::common
