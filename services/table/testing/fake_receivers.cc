#include "services/table/testing/fake_receivers.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "courtpiece/common/grpc_status.h"
#include "google/protobuf/util/json_util.h"

namespace courtpiece::table_service::testing {

class FakeReceivers::Impl final : public lobby::v1::LobbyRecords::Service,
                                  public moderation::v1::ReportIntake::Service {
 public:
  explicit Impl(std::function<void(const std::string&)> on_request)
      : on_request_(std::move(on_request)) {}

  grpc::Status RecordGame(grpc::ServerContext*, const lobby::v1::RecordGameRequest* request,
                          lobby::v1::RecordReply* reply) override {
    return Record("record_game", games_, *request, reply);
  }
  grpc::Status RecordQuit(grpc::ServerContext*, const lobby::v1::RecordQuitRequest* request,
                          lobby::v1::RecordReply* reply) override {
    return Record("record_quit", quits_, *request, reply);
  }
  grpc::Status RecordRound(grpc::ServerContext*, const lobby::v1::RecordRoundRequest* request,
                           lobby::v1::RecordReply* reply) override {
    return Record("record_round", rounds_, *request, reply);
  }
  grpc::Status RecordTableClosed(grpc::ServerContext*,
                                 const lobby::v1::RecordTableClosedRequest* request,
                                 lobby::v1::RecordReply* reply) override {
    return Record("record_table_closed", closes_, *request, reply);
  }
  grpc::Status FileReport(grpc::ServerContext*, const moderation::v1::FileReportRequest* request,
                          moderation::v1::FileReportReply* reply) override {
    return Record("file_report", reports_, *request, reply);
  }
  // OK {muted, message} for a Mute'd player; UNAVAILABLE while refusing; OK otherwise.
  grpc::Status CheckVoice(grpc::ServerContext*, const moderation::v1::CheckVoiceRequest* request,
                          moderation::v1::CheckVoiceReply* reply) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (refusing_) {
      ++refused_;
      return grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake receiver refuses for now");
    }
    auto it = muted_.find(request->player_id());
    reply->set_muted(it != muted_.end());
    if (it != muted_.end()) reply->set_message(it->second);
    return grpc::Status::OK;
  }

  template <typename Request>
  std::map<std::string, Request> Copy(const std::map<std::string, Request>& records) const {
    std::lock_guard<std::mutex> lock(mu_);
    return records;
  }

  mutable std::mutex mu_;
  std::condition_variable unheld_;
  std::map<std::string, lobby::v1::RecordGameRequest> games_;          // guarded by mu_
  std::map<std::string, lobby::v1::RecordQuitRequest> quits_;          // guarded by mu_
  std::map<std::string, lobby::v1::RecordRoundRequest> rounds_;        // guarded by mu_
  std::map<std::string, moderation::v1::FileReportRequest> reports_;   // guarded by mu_
  std::map<std::string, lobby::v1::RecordTableClosedRequest> closes_;  // guarded by mu_
  std::map<std::string, int> received_;                                // guarded by mu_
  int refused_ = 0;                                                    // guarded by mu_
  bool refusing_ = false;                                              // guarded by mu_
  int refuse_next_ = 0;                                                // guarded by mu_
  bool holding_ = false;                                               // guarded by mu_
  std::map<std::string, std::string> muted_;                           // guarded by mu_
  int held_ = 0;                                                       // guarded by mu_

 private:
  template <typename Request, typename Reply>
  grpc::Status Record(const char* kind, std::map<std::string, Request>& records,
                      const Request& request, Reply* reply) {
    grpc::Status status;
    {
      std::unique_lock<std::mutex> lock(mu_);
      ++held_;
      unheld_.wait(lock, [this] { return !holding_; });
      --held_;
      if (refusing_ || refuse_next_ > 0) {
        if (refuse_next_ > 0) --refuse_next_;
        ++refused_;
        status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "fake receiver refuses for now");
      } else if (request.key().empty()) {
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "record without a key");
      } else {
        reply->set_replayed(!records.try_emplace(request.key(), request).second);
        ++received_[request.key()];
      }
    }
    if (on_request_) {
      std::string json;
      (void)google::protobuf::util::MessageToJsonString(request, &json);
      const std::string key = absl::StrReplaceAll(request.key(), {{"\\", "\\\\"}, {"\"", "\\\""}});
      on_request_(absl::StrCat("{\"kind\":\"", kind, "\",\"key\":\"", key,
                               "\",\"replayed\":", reply->replayed() ? "true" : "false",
                               ",\"code\":\"", common::GrpcCodeName(status.error_code()),
                               "\",\"request\":", json, "}"));
    }
    return status;
  }

  const std::function<void(const std::string&)> on_request_;
};

absl::StatusOr<std::unique_ptr<FakeReceivers>> FakeReceivers::Start(
    const std::string& listen_address, std::function<void(const std::string&)> on_request) {
  std::unique_ptr<FakeReceivers> receivers(new FakeReceivers());
  receivers->metrics_ = std::make_unique<common::Metrics>("fake_receivers");
  receivers->impl_ = std::make_unique<Impl>(std::move(on_request));
  absl::StatusOr<std::unique_ptr<common::GrpcServer>> server = common::GrpcServer::Start(
      {.listen_address = listen_address, .enable_reflection = false},
      {static_cast<lobby::v1::LobbyRecords::Service*>(receivers->impl_.get()),
       static_cast<moderation::v1::ReportIntake::Service*>(receivers->impl_.get())},
      *receivers->metrics_);
  if (!server.ok()) return server.status();
  receivers->server_ = *std::move(server);
  return receivers;
}

FakeReceivers::~FakeReceivers() {
  if (impl_ != nullptr) SetHolding(false);
  if (server_ != nullptr) server_->Shutdown(absl::Now() + absl::Seconds(1));
}

std::string FakeReceivers::address() const { return server_->LoopbackAddress(); }

std::map<std::string, lobby::v1::RecordGameRequest> FakeReceivers::games() const {
  return impl_->Copy(impl_->games_);
}
std::map<std::string, lobby::v1::RecordQuitRequest> FakeReceivers::quits() const {
  return impl_->Copy(impl_->quits_);
}
std::map<std::string, lobby::v1::RecordRoundRequest> FakeReceivers::rounds() const {
  return impl_->Copy(impl_->rounds_);
}
std::map<std::string, moderation::v1::FileReportRequest> FakeReceivers::reports() const {
  return impl_->Copy(impl_->reports_);
}

std::map<std::string, lobby::v1::RecordTableClosedRequest> FakeReceivers::closes() const {
  return impl_->Copy(impl_->closes_);
}

int FakeReceivers::received(const std::string& key) const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  auto it = impl_->received_.find(key);
  return it == impl_->received_.end() ? 0 : it->second;
}

int FakeReceivers::refused() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->refused_;
}

void FakeReceivers::Mute(const std::string& player, const std::string& message) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->muted_[player] = message;
}

void FakeReceivers::SetRefusing(bool refusing) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->refusing_ = refusing;
}

void FakeReceivers::RefuseNext(int count) {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  impl_->refuse_next_ = count;
}

void FakeReceivers::SetHolding(bool holding) {
  {
    std::lock_guard<std::mutex> lock(impl_->mu_);
    impl_->holding_ = holding;
  }
  impl_->unheld_.notify_all();
}

int FakeReceivers::held() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  return impl_->held_;
}

}  // namespace courtpiece::table_service::testing
