#include "courtpiece/common/grpc_async.h"

#include <mutex>
#include <utility>

#include "courtpiece/common/check.h"

namespace courtpiece::common {
namespace {

void Drain(grpc::CompletionQueue& queue) {
  void* tag = nullptr;
  bool ok = false;
  while (queue.Next(&tag, &ok)) static_cast<AsyncOp*>(tag)->Done(ok);
}

}  // namespace

std::unique_ptr<AsyncQueues> AsyncQueues::ForClients(int count) {
  COURTPIECE_CHECK(count > 0 && count <= kQueuesMax, "queue count out of range");
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  for (int i = 0; i < count; ++i) queues.push_back(std::make_unique<grpc::CompletionQueue>());
  std::unique_ptr<AsyncQueues> made(new AsyncQueues(std::move(queues), /*server=*/false));
  made->StartThreads();
  return made;
}

std::unique_ptr<AsyncQueues> AsyncQueues::ForServer(grpc::ServerBuilder& builder, int count) {
  COURTPIECE_CHECK(count > 0 && count <= kQueuesMax, "queue count out of range");
  std::vector<std::unique_ptr<grpc::CompletionQueue>> queues;
  for (int i = 0; i < count; ++i) queues.push_back(builder.AddCompletionQueue());
  return std::unique_ptr<AsyncQueues>(new AsyncQueues(std::move(queues), /*server=*/true));
}

AsyncQueues::AsyncQueues(std::vector<std::unique_ptr<grpc::CompletionQueue>> queues, bool server)
    : queues_(std::move(queues)), server_(server) {}

AsyncQueues::~AsyncQueues() { Stop(); }

grpc::CompletionQueue* AsyncQueues::queue(size_t index) const {
  COURTPIECE_CHECK(index < queues_.size(), "queue index out of range");
  return queues_[index].get();
}

grpc::ServerCompletionQueue* AsyncQueues::server_queue(size_t index) const {
  COURTPIECE_CHECK(server_, "not a server's queues");
  return static_cast<grpc::ServerCompletionQueue*>(queue(index));
}

bool AsyncQueues::TryStart(absl::FunctionRef<void()> start) {
  std::shared_lock<std::shared_mutex> lock(mu_);
  if (stopping_) return false;
  start();
  return true;
}

void AsyncQueues::StartThreads() {
  COURTPIECE_CHECK(threads_.empty(), "StartThreads twice");
  for (const auto& queue : queues_) {
    threads_.emplace_back([cq = queue.get()] { Drain(*cq); });
  }
}

void AsyncQueues::Stop() {
  std::lock_guard<std::mutex> stopping(stop_mu_);  // a second caller waits for the first
  {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  for (const auto& queue : queues_) queue->Shutdown();
  for (std::thread& thread : threads_) thread.join();
  if (threads_.empty()) {
    for (const auto& queue : queues_) Drain(*queue);  // never started: deliver here
  }
  threads_.clear();
}

}  // namespace courtpiece::common
