// The real ports (ports.h) over gRPC's callback client API: the wallet (GrpcWalletPort), the
// lobby's LobbyRecords and moderation's ReportIntake (GrpcRecordsPort).
//
//   auto wallet = std::make_unique<GrpcWalletPort>(
//       common::CreateGrpcChannel("wallet:7003", metrics.get()));
//   wallet->Transfer(effect.transfer, table_id, round, now + absl::Seconds(2),
//                    [](WalletReply reply) { /* post into the table's worker */ });
//
// Nothing blocks: every method starts its RPC(s) and returns; `done` runs once, on a gRPC
// thread (or at once on the caller's thread when the call is refused before any RPC).
//
// Calls in flight: each port admits at most `calls_in_flight_max` calls at a time (a call
// is one ports.h method call, however many RPCs it needs). Past the bound, `done` gets
// ResourceExhausted at once and nothing is sent: the host retries later.
//
// Wallet translation: table::TransferLeg{account, amount_coins < 0} -> wallet Leg{account,
// SIDE_DEBIT, -amount_coins} (> 0: SIDE_CREDIT); idempotency_key = transfer.key; metadata
// table_id, round, reason = TransferStepName(step) ("stake", "court_stake", "payout",
// "refund"). A leg of 0 coins is InvalidArgument at once (nothing sent).
//
// Who cannot pay. The wallet has no min-balance field, so:
//  1. min_balance_coins > 0: the port first reads the balance of every debited player account
//     (GetBalance, all in parallel). A player whose balance is below max(min_balance_coins,
//     their debit), or whose account is missing (NOT_FOUND), is short: FailedPrecondition
//     with short_players = those player ids ("player:" stripped), and the transfer is NOT
//     sent. A read failing otherwise (e.g. Unavailable) answers that status (retry).
//  2. The transfer is sent. If the wallet refuses it with FAILED_PRECONDITION or NOT_FOUND
//     (for a stake: a race, someone spent coins elsewhere between the read and the transfer;
//     for a court stake, which has no minimum: a loser cannot pay), the port reads the
//     debited players' balances again and answers FailedPrecondition naming those whose
//     balance is below their debit or whose account is missing. (If a re-read fails with
//     anything but NOT_FOUND, that status is answered instead: a refused transfer leaves no
//     trace in the wallet, so re-sending the same key is safe.)
//  The race is safe: the wallet never lets a non-house account go below zero and a refused
//  transfer moves nothing, so the worst a stale read does is let a stake reach the wallet
//  and be refused there (the table then unseats whoever the re-read names), or name nobody
//  (the table counts in again). It can never move coins a player does not have.
// Other wallet codes: UNAVAILABLE, DEADLINE_EXCEEDED and CANCELLED (maybe applied) ->
// Unavailable / DeadlineExceeded / Unavailable: re-send with the same key; every other code
// is passed through (permanent: a bug or a tampered state).
//
// Records: each RPC's status is passed through (codes 1:1); UNAVAILABLE / DEADLINE_EXCEEDED
// mean "re-send with the same key", CANCELLED is answered as Unavailable.
//
// Lifetime: a port may be destroyed while calls are in flight; they finish (each still
// calls its `done` once) on state they share, which outlives the port. But their channels
// record to the metrics and their `done`s post to the host: main waits until
// calls_unfinished() is 0 before it destroys those.
// Thread-safety: every method is safe from any thread.
#ifndef COURTPIECE_SERVICES_TABLE_GRPC_PORTS_H_
#define COURTPIECE_SERVICES_TABLE_GRPC_PORTS_H_

#include <memory>

#include "grpcpp/channel.h"
#include "services/table/ports.h"
#include "services/table/pot_sweeper.h"

namespace courtpiece::table_service {

struct GrpcPortOptions {
  int calls_in_flight_max = 1024;  // > 0
};

class GrpcWalletPort final : public WalletPort {
 public:
  explicit GrpcWalletPort(std::shared_ptr<grpc::Channel> wallet_channel,
                          GrpcPortOptions options = {});
  ~GrpcWalletPort() override;

  void Transfer(const table::Transfer& transfer, std::string_view table_id, uint64_t round,
                absl::Time deadline, std::function<void(WalletReply)> done) override;
  void GetBalance(std::string_view player, absl::Time deadline,
                  std::function<void(absl::StatusOr<int64_t>)> done) override;

  int calls_in_flight() const;
  // Calls whose `done` has not returned yet (in flight, or answered and still in `done`).
  int calls_unfinished() const;

  struct Shared;  // grpc_ports.cc: the stub and the in-flight count, shared with the calls

 private:
  std::shared_ptr<Shared> shared_;
};

class GrpcRecordsPort final : public RecordsPort {
 public:
  GrpcRecordsPort(std::shared_ptr<grpc::Channel> lobby_channel,
                  std::shared_ptr<grpc::Channel> moderation_channel, GrpcPortOptions options = {});
  ~GrpcRecordsPort() override;

  void RecordGame(const lobby::v1::RecordGameRequest& request, absl::Time deadline,
                  std::function<void(absl::Status)> done) override;
  void RecordQuit(const lobby::v1::RecordQuitRequest& request, absl::Time deadline,
                  std::function<void(absl::Status)> done) override;
  void RecordRound(const lobby::v1::RecordRoundRequest& request, absl::Time deadline,
                   std::function<void(absl::Status)> done) override;
  void RecordTableClosed(const lobby::v1::RecordTableClosedRequest& request, absl::Time deadline,
                         std::function<void(absl::Status)> done) override;
  void FileReport(const moderation::v1::FileReportRequest& request, absl::Time deadline,
                  std::function<void(absl::Status)> done) override;
  void CheckVoice(std::string_view player, absl::Time deadline,
                  std::function<void(absl::Status)> done) override;

  int calls_in_flight() const;
  // Calls whose `done` has not returned yet (in flight, or answered and still in `done`).
  int calls_unfinished() const;

  struct Shared;  // grpc_ports.cc

 private:
  std::shared_ptr<Shared> shared_;
};

// The sweeper's wallet (pot_sweeper.h) over the wallet's ListPots, PotPayers and Transfer:
// synchronous (blocking) calls, for the sweeper's own thread only, never a table worker.
// Each call sets its deadline; codes as FromRpc (CANCELLED -> Unavailable). The refund's
// legs become wallet legs (< 0 SIDE_DEBIT, > 0 SIDE_CREDIT) with metadata table_id, round
// and reason "sweep_refund".
class GrpcPotLedgerPort final : public PotLedgerPort {
 public:
  explicit GrpcPotLedgerPort(std::shared_ptr<grpc::Channel> wallet_channel);
  ~GrpcPotLedgerPort() override;

  absl::StatusOr<LedgerPotPage> ListPots(std::string_view cursor, int page_size,
                                         absl::Time deadline) override;
  absl::StatusOr<PotPayers> GetPotPayers(std::string_view pot_id, absl::Time deadline) override;
  absl::Status Transfer(const PotRefund& refund, absl::Time deadline) override;

 private:
  struct Stub;
  std::unique_ptr<Stub> stub_;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_GRPC_PORTS_H_
