// PinGrpcCallbackQueue: a channel whose last reference goes inside its own call's callback
// (on a thread of gRPC's callback queue) does not tear that queue down under the thread.
// Without the pin, gRPC 1.51 joined and deleted the queue from one of its own threads, which
// then polled it again: a double free in grpc_cq_internal_unref (ASan; glibc aborts too).
#include "courtpiece/common/grpc_client.h"

#include <future>
#include <memory>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"

namespace courtpiece::common {
namespace {

constexpr char kNowhere[] = "unix:/nonexistent/courtpiece-grpc-client-test";

struct UnaryCall {
  explicit UnaryCall(std::shared_ptr<grpc::Channel> channel)
      : stub(std::move(channel)), empty(""), request(&empty, 1) {}
  grpc::GenericStub stub;  // holds the channel
  grpc::ClientContext context;
  grpc::Slice empty;
  grpc::ByteBuffer request;  // an empty message (a default ByteBuffer is none)
  grpc::ByteBuffer response;
};

TEST(PinGrpcCallbackQueueTest, ChannelsDroppedInsideTheirOwnCallbacksAreSafe) {
  PinGrpcCallbackQueue();
  PinGrpcCallbackQueue();  // idempotent
  for (int i = 0; i < 20; ++i) {
    auto call = std::make_shared<UnaryCall>(
        grpc::CreateChannel(kNowhere, grpc::InsecureChannelCredentials()));
    const std::weak_ptr<UnaryCall> watch = call;
    auto code = std::make_shared<std::promise<grpc::StatusCode>>();
    std::future<grpc::StatusCode> got = code->get_future();
    std::promise<void> released;
    std::shared_future<void> go = released.get_future().share();
    UnaryCall& c = *call;
    c.stub.UnaryCall(&c.context, "/courtpiece.Test/Nothing", grpc::StubOptions(), &c.request,
                     &c.response, [call, code, go](grpc::Status status) {
                       code->set_value(status.error_code());
                       go.wait();  // returns once the test holds no reference of its own
                     });
    call.reset();  // the callback now holds the only reference to the call and its channel
    released.set_value();
    ASSERT_EQ(got.get(), grpc::StatusCode::UNAVAILABLE) << "call " << i;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (!watch.expired() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(1));
    ASSERT_TRUE(watch.expired()) << "call " << i << ": the callback kept its call";
  }
}

}  // namespace
}  // namespace courtpiece::common
