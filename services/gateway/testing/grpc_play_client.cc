#include "services/gateway/testing/grpc_play_client.h"

#include <utility>

#include "courtpiece/common/grpc_status.h"

namespace courtpiece::gateway::testing {

namespace cv1 = ::courtpiece::client::v1;

namespace {
constexpr size_t kInboxMax = 100'000;
}

std::unique_ptr<GrpcPlayClient> GrpcPlayClient::Start(std::shared_ptr<grpc::Channel> channel,
                                                      const std::string& authorization) {
  std::unique_ptr<GrpcPlayClient> c(new GrpcPlayClient());
  c->stub_ = cv1::CourtPiece::NewStub(std::move(channel));
  if (!authorization.empty()) c->context_.AddMetadata("authorization", authorization);
  c->stream_ = c->stub_->Play(&c->context_);
  c->reader_ = std::thread([p = c.get()] { p->ReadLoop(); });
  return c;
}

GrpcPlayClient::~GrpcPlayClient() {
  Cancel();
  if (reader_.joinable()) reader_.join();
}

void GrpcPlayClient::ReadLoop() {
  cv1::PlayResponse message;
  while (stream_->Read(&message)) {
    std::unique_lock<std::mutex> lock(mu_);
    // A full queue: stop reading until the owner takes some (bounded; a slow reader).
    cv_.wait(lock, [&] { return inbox_.size() < kInboxMax || cancelled_; });
    inbox_.push_back(std::move(message));
    message.Clear();
    cv_.notify_all();
  }
  StreamEnd end;
  {
    std::lock_guard<std::mutex> lock(write_mu_);
    writes_closed_ = true;
    end.status = common::FromGrpcStatus(stream_->Finish());
  }
  std::lock_guard<std::mutex> lock(mu_);
  end_ = std::move(end);
  cv_.notify_all();
}

absl::Status GrpcPlayClient::Send(const cv1::PlayRequest& request) {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (writes_closed_ || !stream_->Write(request)) {
    return absl::UnavailableError("the stream has ended");
  }
  return absl::OkStatus();
}

void GrpcPlayClient::CloseWrites() {
  std::lock_guard<std::mutex> lock(write_mu_);
  if (writes_closed_) return;
  writes_closed_ = true;
  stream_->WritesDone();
}

absl::StatusOr<cv1::PlayResponse> GrpcPlayClient::Read(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, absl::ToChronoTime(absl::Now() + timeout),
                 [&] { return !inbox_.empty() || end_.has_value(); });
  if (!inbox_.empty()) {
    cv1::PlayResponse m = std::move(inbox_.front());
    inbox_.pop_front();
    cv_.notify_all();
    return m;
  }
  if (end_.has_value()) return absl::OutOfRangeError("stream ended");
  return absl::DeadlineExceededError("no message in time");
}

std::optional<StreamEnd> GrpcPlayClient::end() const {
  std::lock_guard<std::mutex> lock(mu_);
  return end_;
}

std::optional<StreamEnd> GrpcPlayClient::WaitEnd(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_until(lock, absl::ToChronoTime(absl::Now() + timeout), [&] {
    inbox_.clear();
    cv_.notify_all();
    return end_.has_value();
  });
  return end_;
}

void GrpcPlayClient::Cancel() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    cv_.notify_all();
  }
  context_.TryCancel();
}

// --- GrpcApiClient ------------------------------------------------------------------------

GrpcApiClient::GrpcApiClient(std::shared_ptr<grpc::Channel> channel, absl::Duration timeout)
    : stub_(cv1::CourtPiece::NewStub(std::move(channel))), timeout_(timeout) {}

std::unique_ptr<grpc::ClientContext> GrpcApiClient::Context(
    const std::string& authorization) const {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  if (!authorization.empty()) c->AddMetadata("authorization", authorization);
  return c;
}

namespace {

template <typename Response, typename Call>
absl::StatusOr<Response> Unary(Call call) {
  Response response;
  absl::Status s = common::FromGrpcStatus(call(&response));
  if (!s.ok()) return s;
  return response;
}

}  // namespace

absl::StatusOr<cv1::Session> GrpcApiClient::GuestLogin(const std::string& device_secret,
                                                       const std::string& display_name) {
  cv1::GuestLoginRequest request;
  request.set_device_secret(device_secret);
  request.set_display_name(display_name);
  auto context = Context("");
  return Unary<cv1::Session>(
      [&](cv1::Session* r) { return stub_->GuestLogin(context.get(), request, r); });
}

absl::StatusOr<cv1::Session> GrpcApiClient::Refresh(const std::string& refresh_token) {
  cv1::RefreshRequest request;
  request.set_refresh_token(refresh_token);
  auto context = Context("");
  return Unary<cv1::Session>(
      [&](cv1::Session* r) { return stub_->Refresh(context.get(), request, r); });
}

absl::StatusOr<cv1::Profile> GrpcApiClient::GetProfile(const std::string& authorization) {
  auto context = Context(authorization);
  return Unary<cv1::Profile>([&](cv1::Profile* r) {
    return stub_->GetProfile(context.get(), cv1::GetProfileRequest(), r);
  });
}

absl::StatusOr<cv1::TableRef> GrpcApiClient::CreateTable(const std::string& authorization,
                                                         const cv1::CreateTableRequest& request) {
  auto context = Context(authorization);
  return Unary<cv1::TableRef>(
      [&](cv1::TableRef* r) { return stub_->CreateTable(context.get(), request, r); });
}

absl::StatusOr<cv1::TableRef> GrpcApiClient::ResolveCode(const std::string& authorization,
                                                         const std::string& code) {
  cv1::ResolveCodeRequest request;
  request.set_code(code);
  auto context = Context(authorization);
  return Unary<cv1::TableRef>(
      [&](cv1::TableRef* r) { return stub_->ResolveCode(context.get(), request, r); });
}

absl::StatusOr<cv1::TableRef> GrpcApiClient::QuickJoin(const std::string& authorization,
                                                       const cv1::QuickJoinRequest& request) {
  auto context = Context(authorization);
  return Unary<cv1::TableRef>(
      [&](cv1::TableRef* r) { return stub_->QuickJoin(context.get(), request, r); });
}

absl::StatusOr<cv1::MyTablesResponse> GrpcApiClient::MyTables(const std::string& authorization) {
  auto context = Context(authorization);
  return Unary<cv1::MyTablesResponse>([&](cv1::MyTablesResponse* r) {
    return stub_->MyTables(context.get(), cv1::MyTablesRequest(), r);
  });
}

}  // namespace courtpiece::gateway::testing
