// GrpcServer against real clients on loopback: metrics per RPC, health, limits, shutdown.
#include "courtpiece/common/grpc_server.h"

#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "courtpiece/common/freezable_proxy.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/shutdown_signal.h"
#include "courtpiece/common/status_matchers.h"
#include "courtpiece/testing/v1/echo.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

// Outside namespace courtpiece: the proto package courtpiece.testing would shadow ::testing.
namespace {

using ::courtpiece::common::CheckHealth;
using ::courtpiece::common::CreateGrpcChannel;
using ::courtpiece::common::FreezableProxy;
using ::courtpiece::common::GrpcServer;
using ::courtpiece::common::GrpcServerOptions;
using ::courtpiece::common::IsOk;
using ::courtpiece::common::Metrics;
using ::courtpiece::common::StatusIs;
using ::courtpiece::testing::v1::EchoRequest;
using ::courtpiece::testing::v1::EchoResponse;
using ::courtpiece::testing::v1::EchoService;
using ::testing::HasSubstr;

constexpr char kEchoMethod[] = "/courtpiece.testing.v1.EchoService/Echo";

// Echoes after delay_ms, or returns early when the call is cancelled. The message "hold"
// blocks until ReleaseHeld() (or cancellation).
class EchoServiceImpl final : public EchoService::Service {
 public:
  grpc::Status Echo(grpc::ServerContext* context, const EchoRequest* request,
                    EchoResponse* response) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++started_;
    }
    started_cv_.notify_all();
    if (request->message() == "hold") {
      std::unique_lock<std::mutex> lock(mu_);
      while (!released_) {
        if (context->IsCancelled()) {
          ++cancelled_;
          return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
        }
        released_cv_.wait_for(lock, std::chrono::milliseconds(5));
      }
    }
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(request->delay_ms());
    while (std::chrono::steady_clock::now() < deadline) {
      if (context->IsCancelled()) return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (request->status_code() != 0) {
      return grpc::Status(static_cast<grpc::StatusCode>(request->status_code()), "asked to fail");
    }
    response->set_message(request->message());
    return grpc::Status::OK;
  }

  // Blocks until `n` calls have entered Echo.
  void AwaitStarted(int n) {
    std::unique_lock<std::mutex> lock(mu_);
    started_cv_.wait(lock, [this, n] { return started_ >= n; });
  }
  int started() {
    std::lock_guard<std::mutex> lock(mu_);
    return started_;
  }
  // "hold" calls that ended because the call was cancelled (its connection closed).
  int cancelled() {
    std::lock_guard<std::mutex> lock(mu_);
    return cancelled_;
  }
  void ReleaseHeld() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      released_ = true;
    }
    released_cv_.notify_all();
  }

 private:
  // std::mutex: TSan-visible (Debian's Abseil is not instrumented).
  std::mutex mu_;
  std::condition_variable started_cv_;
  std::condition_variable released_cv_;
  int started_ = 0;        // guarded by mu_
  int cancelled_ = 0;      // guarded by mu_
  bool released_ = false;  // guarded by mu_
};

// Polls `done` every 10 ms for up to `limit`.
bool WaitFor(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

// A channel with its own connection (not shared with other channels to the same address).
std::shared_ptr<grpc::Channel> OwnConnectionChannel(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  return grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
}

grpc::Status CallOn(EchoService::Stub& stub, const std::string& message, EchoResponse* response) {
  EchoRequest request;
  request.set_message(message);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return stub.Echo(&context, request, response);
}

class GrpcServerTest : public ::testing::Test {
 protected:
  void StartServer(GrpcServerOptions options = {}) {
    options.listen_address = "127.0.0.1:0";
    absl::StatusOr<std::unique_ptr<GrpcServer>> server =
        GrpcServer::Start(options, {&service_}, metrics_);
    ASSERT_THAT(server, IsOk());
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
    channel_ = grpc::CreateChannel(server_->LoopbackAddress(), grpc::InsecureChannelCredentials());
    stub_ = EchoService::NewStub(channel_);
  }

  grpc::Status Call(const std::string& message, int delay_ms, int status_code,
                    EchoResponse* response) {
    EchoRequest request;
    request.set_message(message);
    request.set_delay_ms(delay_ms);
    request.set_status_code(status_code);
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return stub_->Echo(&context, request, response);
  }

  // The lines of the registry that contain `needle`.
  std::string MetricLines(const std::string& needle) {
    std::string out;
    for (absl::string_view line : absl::StrSplit(metrics_.Serialize(), '\n')) {
      if (line.find(needle) != absl::string_view::npos && line[0] != '#') {
        out.append(line.data(), line.size());
        out.push_back('\n');
      }
    }
    return out;
  }

  Metrics metrics_{"echo"};
  EchoServiceImpl service_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<EchoService::Stub> stub_;
};

TEST_F(GrpcServerTest, CountsEachCallWithMethodAndCode) {
  StartServer();
  EchoResponse response;
  ASSERT_TRUE(Call("hi", 0, 0, &response).ok());
  EXPECT_EQ(response.message(), "hi");
  ASSERT_TRUE(Call("hi", 0, 0, &response).ok());
  const grpc::Status failed =
      Call("x", 0, static_cast<int>(grpc::StatusCode::NOT_FOUND), &response);
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(failed.error_message(), "asked to fail");

  EXPECT_EQ(MetricLines("grpc_server_handled_total{"),
            "courtpiece_echo_grpc_server_handled_total{code=\"NOT_FOUND\",method=\"" +
                std::string(kEchoMethod) + "\"} 1\n" +
                "courtpiece_echo_grpc_server_handled_total{code=\"OK\",method=\"" +
                std::string(kEchoMethod) + "\"} 2\n");
  EXPECT_EQ(MetricLines("grpc_server_handling_seconds_count{"),
            "courtpiece_echo_grpc_server_handling_seconds_count{code=\"NOT_FOUND\",method=\"" +
                std::string(kEchoMethod) + "\"} 1\n" +
                "courtpiece_echo_grpc_server_handling_seconds_count{code=\"OK\",method=\"" +
                std::string(kEchoMethod) + "\"} 2\n");
}

TEST_F(GrpcServerTest, UnknownMethodIsLabelledUnknown) {
  StartServer();
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice empty("");
  grpc::ByteBuffer request(&empty, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  generic.UnaryCall(&context, "/no.such.Service/Made_Up_1", grpc::StubOptions(), &request,
                    &response, [&](grpc::Status s) {
                      status = std::move(s);
                      done.Notify();
                    });
  done.WaitForNotification();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(MetricLines("Made_Up"), "");
}

TEST_F(GrpcServerTest, HealthCheckAnswersServing) {
  StartServer();
  EXPECT_THAT(CheckHealth(*channel_, "", absl::Seconds(10)), IsOk());
  EXPECT_EQ(CheckHealth(*channel_, "", absl::Seconds(10)).value(), true);
  EXPECT_THAT(CheckHealth(*channel_, "no.such.Service", absl::Seconds(10)),
              StatusIs(absl::StatusCode::kNotFound));
  server_->SetServing(false);
  EXPECT_EQ(CheckHealth(*channel_, "", absl::Seconds(10)).value(), false);
  EXPECT_EQ(MetricLines("handled_total{code=\"OK\",method=\"/grpc.health.v1.Health/Check\"}"),
            "courtpiece_echo_grpc_server_handled_total{code=\"OK\",method=\"/grpc.health.v1."
            "Health/Check\"} 3\n");
}

// Lists services through grpc.reflection.v1alpha with a raw bidi stream (no reflection
// protos are installed): request {list_services: ""}, then look for our service's name.
TEST_F(GrpcServerTest, ReflectionListsServices) {
  StartServer();
  grpc::GenericStub generic(channel_);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::CompletionQueue cq;
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call = generic.PrepareCall(
      &context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&](intptr_t want) {
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(reinterpret_cast<intptr_t>(tag), want);
    EXPECT_TRUE(ok);
  };
  call->StartCall(reinterpret_cast<void*>(1));
  step(1);
  grpc::Slice list_services(std::string("\x3a\x00", 2));  // field 7, empty string
  grpc::ByteBuffer request(&list_services, 1);
  call->Write(request, reinterpret_cast<void*>(2));
  step(2);
  call->WritesDone(reinterpret_cast<void*>(3));
  step(3);
  grpc::ByteBuffer response;
  call->Read(&response, reinterpret_cast<void*>(4));
  step(4);
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step(5);
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  EXPECT_TRUE(status.ok()) << status.error_message();
  grpc::Slice reply;
  ASSERT_TRUE(response.DumpToSingleSlice(&reply).ok());
  const std::string bytes(reinterpret_cast<const char*>(reply.begin()), reply.size());
  EXPECT_THAT(bytes, HasSubstr("courtpiece.testing.v1.EchoService"));
  EXPECT_THAT(bytes, HasSubstr("grpc.health.v1.Health"));
}

TEST_F(GrpcServerTest, ClientChannelCountsCallsAndHonoursTimeout) {
  StartServer();
  Metrics client_metrics("table");
  std::unique_ptr<EchoService::Stub> stub =
      EchoService::NewStub(CreateGrpcChannel(server_->LoopbackAddress(), &client_metrics));
  auto call = [&](int delay_ms, int status_code, absl::Duration timeout) {
    EchoRequest request;
    request.set_message("m");
    request.set_delay_ms(delay_ms);
    request.set_status_code(status_code);
    EchoResponse response;
    grpc::ClientContext context;
    courtpiece::common::SetTimeout(context, timeout);
    return stub->Echo(&context, request, &response).error_code();
  };
  EXPECT_EQ(call(0, 0, absl::Seconds(10)), grpc::StatusCode::OK);
  EXPECT_EQ(call(0, 9, absl::Seconds(10)), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(call(5'000, 0, absl::Milliseconds(50)), grpc::StatusCode::DEADLINE_EXCEEDED);
  std::string lines;
  for (absl::string_view line : absl::StrSplit(client_metrics.Serialize(), '\n')) {
    if (absl::StartsWith(line, "courtpiece_table_grpc_client_handled_total{") ||
        absl::StartsWith(line, "courtpiece_table_grpc_client_handling_seconds_count{")) {
      lines.append(line.data(), line.size());
      lines.push_back('\n');
    }
  }
  const std::string method = std::string("method=\"") + kEchoMethod + "\"}";
  EXPECT_EQ(
      lines,
      "courtpiece_table_grpc_client_handled_total{code=\"DEADLINE_EXCEEDED\"," + method + " 1\n" +
          "courtpiece_table_grpc_client_handled_total{code=\"FAILED_PRECONDITION\"," + method +
          " 1\n" + "courtpiece_table_grpc_client_handled_total{code=\"OK\"," + method + " 1\n" +
          "courtpiece_table_grpc_client_handling_seconds_count{code=\"DEADLINE_EXCEEDED\"," +
          method + " 1\n" +
          "courtpiece_table_grpc_client_handling_seconds_count{code=\"FAILED_PRECONDITION\"," +
          method + " 1\n" + "courtpiece_table_grpc_client_handling_seconds_count{code=\"OK\"," +
          method + " 1\n");
}

TEST_F(GrpcServerTest, InProcessChannelReachesServices) {
  StartServer();
  std::unique_ptr<EchoService::Stub> stub = EchoService::NewStub(server_->InProcessChannel());
  EchoRequest request;
  request.set_message("local");
  EchoResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(stub->Echo(&context, request, &response).ok());
  EXPECT_EQ(response.message(), "local");
}

TEST_F(GrpcServerTest, OversizedRequestIsResourceExhausted) {
  GrpcServerOptions options;
  options.max_receive_message_bytes = 1024;
  StartServer(options);
  EchoResponse response;
  EXPECT_TRUE(Call(std::string(900, 'a'), 0, 0, &response).ok());
  const grpc::Status status = Call(std::string(2000, 'a'), 0, 0, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(GrpcServerTest, ThreadCapStillServesConcurrentCalls) {
  GrpcServerOptions options;
  options.max_threads = 4;
  StartServer(options);
  grpc::Status first;
  grpc::Status second;
  EchoResponse first_response;
  EchoResponse second_response;
  std::thread a([&] { first = Call("a", 50, 0, &first_response); });
  std::thread b([&] { second = Call("b", 50, 0, &second_response); });
  a.join();
  b.join();
  EXPECT_TRUE(first.ok()) << first.error_message();
  EXPECT_TRUE(second.ok()) << second.error_message();
  EXPECT_EQ(first_response.message(), "a");
  EXPECT_EQ(second_response.message(), "b");
}

TEST_F(GrpcServerTest, PortInUseIsUnavailable) {
  StartServer();
  GrpcServerOptions options;
  options.listen_address = server_->LoopbackAddress();
  EchoServiceImpl other;
  EXPECT_THAT(GrpcServer::Start(options, {&other}, metrics_),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr(server_->LoopbackAddress())));
}

TEST_F(GrpcServerTest, SigtermDrainsInFlightCallWithinDeadline) {
  courtpiece::common::ShutdownSignal::Install();
  StartServer();
  grpc::Status in_flight;
  EchoResponse response;
  std::thread client([&] { in_flight = Call("slow", 300, 0, &response); });
  service_.AwaitStarted(1);

  const auto start = std::chrono::steady_clock::now();
  int signo = -1;
  std::thread serving(
      [&] { signo = courtpiece::common::ServeUntilShutdownSignal(*server_, absl::Seconds(5)); });
  ASSERT_EQ(raise(SIGTERM), 0);
  serving.join();
  client.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_EQ(signo, SIGTERM);
  EXPECT_TRUE(in_flight.ok()) << in_flight.error_message();
  EXPECT_EQ(response.message(), "slow");
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EchoResponse after;
  EXPECT_EQ(Call("late", 0, 0, &after).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(MetricLines("handled_total{code=\"OK\",method=\"/courtpiece"),
            "courtpiece_echo_grpc_server_handled_total{code=\"OK\",method=\"" +
                std::string(kEchoMethod) + "\"} 1\n");
}

// Many clients, each on its own connection, with calls running when Shutdown starts, plus
// idle connections: every running call finishes OK, every call after the gate closed is
// refused with UNAVAILABLE without reaching the service, and the idle connections do not
// hold the shutdown (it returns long before its one-hour drain deadline).
TEST_F(GrpcServerTest, ShutdownUnderLoadFinishesRunningCallsAndRefusesNewOnes) {
  StartServer();
  constexpr int kBusyClients = 16;
  constexpr int kIdleClients = 4;
  std::vector<std::unique_ptr<EchoService::Stub>> busy;
  std::vector<std::unique_ptr<EchoService::Stub>> idle;
  for (int i = 0; i < kBusyClients; ++i) {
    busy.push_back(EchoService::NewStub(OwnConnectionChannel(server_->LoopbackAddress())));
  }
  for (int i = 0; i < kIdleClients; ++i) {
    idle.push_back(EchoService::NewStub(OwnConnectionChannel(server_->LoopbackAddress())));
    EchoResponse response;
    ASSERT_TRUE(CallOn(*idle.back(), "warm-up", &response).ok());  // connected, then idle
  }
  std::vector<grpc::Status> running(kBusyClients);
  std::vector<EchoResponse> running_responses(kBusyClients);
  std::vector<std::thread> clients;
  for (int i = 0; i < kBusyClients; ++i) {
    clients.emplace_back([&, i] { running[i] = CallOn(*busy[i], "hold", &running_responses[i]); });
  }
  service_.AwaitStarted(kIdleClients + kBusyClients);

  const auto start = std::chrono::steady_clock::now();
  std::thread shutdown([&] { server_->Shutdown(absl::Now() + absl::Hours(1)); });
  // The gate closes before health turns NOT_SERVING.
  std::shared_ptr<grpc::Channel> health = OwnConnectionChannel(server_->LoopbackAddress());
  while (CheckHealth(*health, "", absl::Seconds(10)).value_or(true)) {
  }
  std::vector<grpc::Status> late(kBusyClients);
  std::vector<std::thread> late_clients;
  for (int i = 0; i < kBusyClients; ++i) {
    late_clients.emplace_back([&, i] {
      EchoResponse response;
      late[i] = CallOn(*busy[i], "late", &response);
    });
  }
  for (std::thread& t : late_clients) t.join();
  EXPECT_EQ(service_.started(), kIdleClients + kBusyClients);  // no late call ran
  service_.ReleaseHeld();
  for (std::thread& t : clients) t.join();
  shutdown.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;

  for (int i = 0; i < kBusyClients; ++i) {
    EXPECT_TRUE(running[i].ok()) << i << ": " << running[i].error_code() << " "
                                 << running[i].error_message();
    EXPECT_EQ(running_responses[i].message(), "hold");
    EXPECT_EQ(late[i].error_code(), grpc::StatusCode::UNAVAILABLE) << i;
    EXPECT_EQ(late[i].error_message(), "server is shutting down; the call was not run") << i;
  }
  EXPECT_EQ(server_->running_at_drain_end(), 0);
  // After Shutdown nothing listens: a call on a formerly idle connection is UNAVAILABLE.
  EchoResponse after;
  EXPECT_EQ(CallOn(*idle[0], "after", &after).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(service_.started(), kIdleClients + kBusyClients);
  EXPECT_EQ(MetricLines("handled_total{code=\"OK\",method=\"/courtpiece"),
            "courtpiece_echo_grpc_server_handled_total{code=\"OK\",method=\"" +
                std::string(kEchoMethod) + "\"} 20\n");
  EXPECT_EQ(MetricLines("handled_total{code=\"UNAVAILABLE\",method=\"/courtpiece"),
            "courtpiece_echo_grpc_server_handled_total{code=\"UNAVAILABLE\",method=\"" +
                std::string(kEchoMethod) + "\"} 16\n");
  // Reported, not asserted (no timing thresholds in tests): release to return.
  std::cout << "shutdown with " << kIdleClients << " idle connections took "
            << std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count()
            << " ms (including the late calls and the release)\n";
}

// A service object outlives one server and is served again by the next one.
TEST_F(GrpcServerTest, ServiceServedAgainAfterRestart) {
  StartServer();
  EchoResponse response;
  ASSERT_TRUE(Call("one", 0, 0, &response).ok());
  server_->Shutdown(absl::Now());
  server_.reset();
  StartServer();
  ASSERT_TRUE(Call("two", 0, 0, &response).ok());
  EXPECT_EQ(response.message(), "two");
}

TEST_F(GrpcServerTest, CallOutlivingDrainDeadlineIsCancelledAsUnavailable) {
  StartServer();
  grpc::Status in_flight;
  EchoResponse response;
  std::thread client([&] { in_flight = Call("stuck", 60'000, 0, &response); });
  service_.AwaitStarted(1);

  const auto start = std::chrono::steady_clock::now();
  server_->Shutdown(absl::Now() + absl::Milliseconds(200));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  client.join();

  EXPECT_GE(elapsed, std::chrono::milliseconds(150));
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  // gRPC cancels the leftover call; the client sees UNAVAILABLE (retryable elsewhere).
  EXPECT_EQ(in_flight.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(in_flight.error_message(), "Cancelling all calls");
  EXPECT_EQ(server_->running_at_drain_end(), 1);
  server_->Shutdown(absl::Now());  // idempotent
}

// A client that stops answering (frozen behind the proxy) is dropped by the server's pings:
// its call is cancelled within the interval plus the timeout. Without pings it stays.
TEST_F(GrpcServerTest, PingsDropAClientThatStoppedAnswering) {
  for (const bool pings : {false, true}) {
    SCOPED_TRACE(pings ? "with pings" : "without pings");
    GrpcServerOptions options;
    if (pings) {
      options.ping_interval_ms = 200;
      options.ping_timeout_ms = 300;
    }
    StartServer(options);
    const int cancelled_before = service_.cancelled();
    const int started_before = service_.started();
    FreezableProxy proxy(server_->port());
    ASSERT_TRUE(proxy.ok());
    auto stub = EchoService::NewStub(OwnConnectionChannel(proxy.address()));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    EchoRequest request;
    request.set_message("hold");
    EchoResponse response;
    grpc::Status status;
    std::thread client([&] { status = stub->Echo(&context, request, &response); });
    service_.AwaitStarted(started_before + 1);
    proxy.Freeze();
    const bool dropped = WaitFor([&] { return service_.cancelled() > cancelled_before; },
                                 std::chrono::milliseconds(pings ? 5000 : 1500));
    EXPECT_EQ(dropped, pings);
    context.TryCancel();
    client.join();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
    server_->Shutdown(absl::Now());
    server_.reset();
  }
}

// A client may ping as often as client_ping_interval_min_ms allows while no data flows; by
// gRPC's default (5 min) the same client is sent GOAWAY "too_many_pings" on its third
// early ping and its call fails.
TEST_F(GrpcServerTest, ClientPingsAreAllowedDownToTheConfiguredInterval) {
  service_.ReleaseHeld();  // "hold" returns at once; the calls below wait by delay_ms
  for (const bool allowed : {false, true}) {
    SCOPED_TRACE(allowed ? "allowed" : "gRPC's default");
    GrpcServerOptions options;
    if (allowed) options.client_ping_interval_min_ms = 50;
    StartServer(options);
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 100);
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    auto stub = EchoService::NewStub(grpc::CreateCustomChannel(
        server_->LoopbackAddress(), grpc::InsecureChannelCredentials(), args));
    EchoRequest request;
    request.set_message("pinged");
    // gRPC's client pings at most once a second; by the default the third early one (~3 s
    // in) is answered GOAWAY: 7 s leaves room on a loaded machine.
    request.set_delay_ms(allowed ? 4500 : 7000);
    EchoResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    const grpc::Status status = stub->Echo(&context, request, &response);
    if (allowed) {
      EXPECT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.message(), "pinged");
    } else {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
      EXPECT_EQ(status.error_message(), "Too many pings");
    }
    server_->Shutdown(absl::Now());
    server_.reset();
  }
}

// connection_idle_ms: a connection without a call for that long is sent GOAWAY (the client
// channel goes IDLE and dials again on its next call); without it the connection stays.
TEST_F(GrpcServerTest, IdleConnectionsAreSentAway) {
  for (const bool idle_limit : {false, true}) {
    SCOPED_TRACE(idle_limit ? "idle limit 300 ms" : "no idle limit");
    GrpcServerOptions options;
    if (idle_limit) options.connection_idle_ms = 300;
    StartServer(options);
    std::shared_ptr<grpc::Channel> channel = OwnConnectionChannel(server_->LoopbackAddress());
    auto stub = EchoService::NewStub(channel);
    EchoResponse response;
    ASSERT_TRUE(CallOn(*stub, "first", &response).ok());
    ASSERT_EQ(channel->GetState(false), GRPC_CHANNEL_READY);
    const bool went_idle = WaitFor([&] { return channel->GetState(false) == GRPC_CHANNEL_IDLE; },
                                   std::chrono::milliseconds(idle_limit ? 5000 : 1500));
    EXPECT_EQ(went_idle, idle_limit);
    ASSERT_TRUE(CallOn(*stub, "again", &response).ok());  // a new connection when it was sent away
    EXPECT_EQ(response.message(), "again");
    server_->Shutdown(absl::Now());
    server_.reset();
  }
}

// A call in progress keeps its connection from counting as idle, however long it is quiet.
TEST_F(GrpcServerTest, AConnectionWithACallOpenIsNotIdle) {
  GrpcServerOptions options;
  options.connection_idle_ms = 300;
  StartServer(options);
  std::shared_ptr<grpc::Channel> channel = OwnConnectionChannel(server_->LoopbackAddress());
  auto stub = EchoService::NewStub(channel);
  EchoRequest request;
  request.set_message("quiet");
  request.set_delay_ms(2000);  // no data either way for 2 s, over six idle limits
  EchoResponse response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status status = stub->Echo(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.message(), "quiet");
}

// streams_per_connection_max: a connection runs at most that many calls at once; the next
// waits for a slot instead of failing.
TEST_F(GrpcServerTest, StreamsPerConnectionAreCapped) {
  GrpcServerOptions options;
  options.streams_per_connection_max = 2;
  StartServer(options);
  auto stub = EchoService::NewStub(OwnConnectionChannel(server_->LoopbackAddress()));
  std::vector<grpc::Status> statuses(3);
  std::vector<std::thread> calls;
  for (int i = 0; i < 3; ++i) {
    calls.emplace_back([&, i] {
      EchoResponse response;
      statuses[i] = CallOn(*stub, "hold", &response);
    });
  }
  service_.AwaitStarted(2);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(service_.started(), 2);  // the third waits on the client for a stream
  service_.ReleaseHeld();
  for (std::thread& t : calls) t.join();
  EXPECT_EQ(service_.started(), 3);
  for (const grpc::Status& status : statuses) EXPECT_TRUE(status.ok()) << status.error_message();
}

}  // namespace
