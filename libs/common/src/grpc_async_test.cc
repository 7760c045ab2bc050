// AsyncQueues on a real server and client over loopback: an async-API Echo served on three
// queues through GrpcServer (AsyncService) and called on two client queues; every call
// object is freed by its last operation, also when the server stops with requests waiting.
#include "courtpiece/common/grpc_async.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/testing/v1/echo.grpc.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Outside namespace courtpiece: the proto package courtpiece.testing would shadow ::testing.
namespace {

using ::courtpiece::common::AsyncOp;
using ::courtpiece::common::AsyncQueues;
using ::courtpiece::common::AsyncService;
using ::courtpiece::common::CallRecorder;
using ::courtpiece::common::GrpcServer;
using ::courtpiece::testing::v1::EchoRequest;
using ::courtpiece::testing::v1::EchoResponse;
using ::courtpiece::testing::v1::EchoService;

std::atomic<int> g_server_calls_live{0};
constexpr char kEchoPath[] = "/courtpiece.testing.v1.EchoService/Echo";

// Echo on the async API: one object per call, freed by its last completion. Replies
// "<message>@<queue index>".
class AsyncEcho final : public EchoService::WithAsyncMethod_Echo<EchoService::Service>,
                        public AsyncService {
 public:
  void ServeOn(AsyncQueues& queues, CallRecorder& recorder) override {
    recorder_ = &recorder;
    for (size_t i = 0; i < queues.size(); ++i) Call::Request(*this, queues, i);
  }

 private:
  class Call final : public AsyncOp {
   public:
    static void Request(AsyncEcho& service, AsyncQueues& queues, size_t index) {
      auto* call = new Call(service, queues, index);
      grpc::ServerCompletionQueue* cq = queues.server_queue(index);
      if (!queues.TryStart([&] {
            service.RequestEcho(&call->ctx_, &call->request_, &call->responder_, cq, cq, call);
          })) {
        delete call;
      }
    }

    void Done(bool ok) override {
      if (finishing_) {  // the reply is out
        service_.recorder_->Record(kEchoPath, grpc::StatusCode::OK, 0.001);
        delete this;
        return;
      }
      if (!ok) {  // the server stopped before a call came
        delete this;
        return;
      }
      Request(service_, queues_, index_);
      finishing_ = true;
      response_.set_message(absl::StrCat(request_.message(), "@", index_));
      if (!queues_.TryStart([&] { responder_.Finish(response_, grpc::Status::OK, this); })) {
        delete this;
      }
    }

   private:
    Call(AsyncEcho& service, AsyncQueues& queues, size_t index)
        : service_(service), queues_(queues), index_(index) {
      g_server_calls_live.fetch_add(1);
    }
    ~Call() { g_server_calls_live.fetch_sub(1); }

    AsyncEcho& service_;
    AsyncQueues& queues_;
    const size_t index_;
    grpc::ServerContext ctx_;
    EchoRequest request_;
    EchoResponse response_;
    grpc::ServerAsyncResponseWriter<EchoResponse> responder_{&ctx_};
    bool finishing_ = false;
  };

  CallRecorder* recorder_ = nullptr;
};

// A client call on the async API: records its status and reply, then counts itself done.
struct ClientCall final : AsyncOp {
  void Done(bool ok) override {
    std::lock_guard<std::mutex> lock(*mu);
    finished_ok = ok;
    ++*done;
    cv->notify_all();
  }
  grpc::ClientContext ctx;
  EchoResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<EchoResponse>> reader;
  bool finished_ok = false;
  std::mutex* mu = nullptr;
  std::condition_variable* cv = nullptr;
  int* done = nullptr;
};

TEST(AsyncQueuesTest, CallsOverSeveralServerAndClientQueuesEachGetTheirOwnReply) {
  AsyncEcho service;
  courtpiece::common::Metrics metrics("asynctest");
  auto server = GrpcServer::Start(
      {.listen_address = "127.0.0.1:0", .enable_reflection = false, .async_queues = 3}, {&service},
      metrics);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = EchoService::NewStub(
      courtpiece::common::CreateGrpcChannel((*server)->LoopbackAddress(), nullptr));
  std::unique_ptr<AsyncQueues> client = AsyncQueues::ForClients(2);
  ASSERT_EQ(client->size(), 2u);

  constexpr int kCalls = 300;
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  std::vector<std::unique_ptr<ClientCall>> calls;
  for (int i = 0; i < kCalls; ++i) {
    auto call = std::make_unique<ClientCall>();
    call->mu = &mu;
    call->cv = &cv;
    call->done = &done;
    EchoRequest request;
    request.set_message(absl::StrCat("m", i));
    grpc::CompletionQueue* cq = client->queue(static_cast<size_t>(i) % client->size());
    ClientCall* c = call.get();
    ASSERT_TRUE(client->TryStart([&] {
      c->reader = stub->PrepareAsyncEcho(&c->ctx, request, cq);
      c->reader->StartCall();
      c->reader->Finish(&c->response, &c->status, c);
    }));
    calls.push_back(std::move(call));
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return done == kCalls; }));
  }
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(calls[i]->finished_ok) << i;
    ASSERT_TRUE(calls[i]->status.ok()) << i << " " << calls[i]->status.error_message();
    const std::string& reply = calls[i]->response.message();
    const std::string prefix = absl::StrCat("m", i, "@");
    ASSERT_EQ(reply.substr(0, prefix.size()), prefix) << reply;
    const int queue = reply.back() - '0';
    ASSERT_TRUE(queue >= 0 && queue < 3) << reply;
  }

  client->Stop();
  bool ran = false;
  EXPECT_FALSE(client->TryStart([&] { ran = true; }));
  EXPECT_FALSE(ran);

  // The server stops with a request waiting on each queue: each is delivered (not ok) and
  // its object freed before Shutdown returns. (A reply's completion on the server may come
  // after the client has it: wait for the last one.)
  for (int i = 0; i < 2000 && g_server_calls_live.load() != 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(g_server_calls_live.load(), 3);
  // Every call recorded once by the service, none by the interceptor, which leaves async
  // methods alone.
  EXPECT_THAT(metrics.Serialize(),
              ::testing::HasSubstr(absl::StrCat(
                  "courtpiece_asynctest_grpc_server_handled_total{code=\"OK\",method=\"", kEchoPath,
                  "\"} ", kCalls, "\n")));
  (*server)->Shutdown(absl::Now() + absl::Seconds(1));
  EXPECT_EQ(g_server_calls_live.load(), 0);
}

TEST(AsyncQueuesTest, StopIsIdempotentAndRefusesEveryStartAfter) {
  std::unique_ptr<AsyncQueues> queues = AsyncQueues::ForClients(1);
  queues->Stop();
  queues->Stop();  // idempotent
  bool ran = false;
  EXPECT_FALSE(queues->TryStart([&] { ran = true; }));
  EXPECT_FALSE(ran);
}

}  // namespace
