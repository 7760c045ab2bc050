// In-process fake gRPC servers of the lobby's LobbyRecords and moderation's ReportIntake,
// for the table service's tests (and `courtpiece-fake-receivers` for scripts). Both services
// are served on one common::GrpcServer (health and reflection included).
//
//   ASSIGN_OR_RETURN(auto receivers, FakeReceivers::Start());   // 127.0.0.1:0
//   GrpcRecordsPort port(channel(receivers->address()), channel(receivers->address()));
//   ... receivers->received("t1:game:1") == 1
//
// Every request is recorded by key: the first request of a key is kept and answered
// {replayed: false}; a later one with the same key is answered {replayed: true} and only
// counted. An empty key is INVALID_ARGUMENT (recorded nowhere). Failure injection:
// SetRefusing(true) answers UNAVAILABLE to every call (recorded nowhere) until
// SetRefusing(false); RefuseNext(n) refuses the next n calls; SetHolding(true) makes calls
// wait inside the handler (recorded nowhere yet) until SetHolding(false).
// `on_request`, when set, gets one JSON line per answered call:
//   {"kind":"record_game","key":"t1:game:1","replayed":false,"code":"OK","request":{...}}
// Thread-safety: every method is safe from any thread.
#ifndef COURTPIECE_SERVICES_TABLE_TESTING_FAKE_RECEIVERS_H_
#define COURTPIECE_SERVICES_TABLE_TESTING_FAKE_RECEIVERS_H_

#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "courtpiece/common/grpc_server.h"
#include "courtpiece/common/metrics.h"
#include "courtpiece/lobby/v1/records.grpc.pb.h"
#include "courtpiece/moderation/v1/reports.grpc.pb.h"

namespace courtpiece::table_service::testing {

class FakeReceivers {
 public:
  static absl::StatusOr<std::unique_ptr<FakeReceivers>> Start(
      const std::string& listen_address = "127.0.0.1:0",
      std::function<void(const std::string&)> on_request = nullptr);
  ~FakeReceivers();  // releases held calls and shuts the server down

  std::string address() const;  // "127.0.0.1:<port>"
  common::GrpcServer& server() { return *server_; }

  // What was recorded: the first request of each key.
  std::map<std::string, lobby::v1::RecordGameRequest> games() const;
  std::map<std::string, lobby::v1::RecordQuitRequest> quits() const;
  std::map<std::string, lobby::v1::RecordRoundRequest> rounds() const;
  std::map<std::string, moderation::v1::FileReportRequest> reports() const;
  std::map<std::string, lobby::v1::RecordTableClosedRequest> closes() const;
  int received(const std::string& key) const;  // calls with this key answered OK
  int refused() const;                         // calls answered UNAVAILABLE

  // CheckVoice answers {muted, message} for `player` from now on.
  void Mute(const std::string& player, const std::string& message);
  void SetRefusing(bool refusing);
  void RefuseNext(int count);
  void SetHolding(bool holding);
  int held() const;  // calls waiting in a handler now

  class Impl;  // fake_receivers.cc: the two services and their state

 private:
  FakeReceivers() = default;
  std::unique_ptr<common::Metrics> metrics_;
  std::unique_ptr<Impl> impl_;
  std::unique_ptr<common::GrpcServer> server_;
};

}  // namespace courtpiece::table_service::testing

#endif  // COURTPIECE_SERVICES_TABLE_TESTING_FAKE_RECEIVERS_H_
