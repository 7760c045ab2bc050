// The services a hosted table sends its effects to, behind small asynchronous interfaces:
// the wallet (stakes, payouts, refunds, balances), the lobby (game, quit and round records)
// and moderation (voice-note reports). grpc_ports.h has the real ones over gRPC;
// fake_ports.h the in-memory ones for unit tests.
//
// Contract:
//  - Every call carries a deadline and the effect's idempotency key; a receiver applies a key
//    once, so the host may re-send after a lost reply, a restart or a failover.
//  - `done` is called exactly once, possibly on another thread and possibly before the call
//    returns; it must not block (the host posts the reply into the table's worker).
//  - Transfer: OK = applied (or applied before: a replay). For a stake with
//    min_balance_coins > 0: FailedPrecondition with `short_players` naming every debited
//    player whose balance was below min_balance_coins, or whose account is missing, or who
//    could not pay (nothing moved). Unavailable / DeadlineExceeded: maybe applied, re-send
//    with the same key. Any other code is permanent (a bug or a tampered state).
//  - Record*: OK = recorded (or recorded before); Unavailable / DeadlineExceeded: re-send.
// Thread-safety: implementations are thread-safe.
#ifndef COURTPIECE_SERVICES_TABLE_PORTS_H_
#define COURTPIECE_SERVICES_TABLE_PORTS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/lobby/v1/records.pb.h"
#include "courtpiece/moderation/v1/reports.pb.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table_service {

struct WalletReply {
  absl::Status status;
  std::vector<std::string> short_players;  // FailedPrecondition of a stake only
};

class WalletPort {
 public:
  virtual ~WalletPort() = default;
  virtual void Transfer(const table::Transfer& transfer, std::string_view table_id, uint64_t round,
                        absl::Time deadline, std::function<void(WalletReply)> done) = 0;
  // The player's balance (a join reads it); NotFound when the account was never opened.
  virtual void GetBalance(std::string_view player, absl::Time deadline,
                          std::function<void(absl::StatusOr<int64_t>)> done) = 0;
};

class RecordsPort {
 public:
  virtual ~RecordsPort() = default;
  virtual void RecordGame(const lobby::v1::RecordGameRequest& request, absl::Time deadline,
                          std::function<void(absl::Status)> done) = 0;
  virtual void RecordQuit(const lobby::v1::RecordQuitRequest& request, absl::Time deadline,
                          std::function<void(absl::Status)> done) = 0;
  virtual void RecordRound(const lobby::v1::RecordRoundRequest& request, absl::Time deadline,
                           std::function<void(absl::Status)> done) = 0;
  // The table closed: its last effect (the lobby frees its code on it).
  virtual void RecordTableClosed(const lobby::v1::RecordTableClosedRequest& request,
                                 absl::Time deadline, std::function<void(absl::Status)> done) = 0;
  virtual void FileReport(const moderation::v1::FileReportRequest& request, absl::Time deadline,
                          std::function<void(absl::Status)> done) = 0;
  // Whether `player` may record a voice note (moderation's CheckVoice): OK, or
  // PermissionDenied "muted: ..." while an admin's mute holds; any other error is moderation
  // not answering.
  virtual void CheckVoice(std::string_view player, absl::Time deadline,
                          std::function<void(absl::Status)> done) = 0;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_PORTS_H_
