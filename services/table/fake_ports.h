// In-memory ports (ports.h) for unit tests of the host, with the real ports' semantics
// (grpc_ports.h) and failure injection.
//
// FakeWalletPort: balances by account ("player:<id>", "house", "pot:<table>:<round>") and
// the keys applied with their request's fingerprint (table, round, reason, legs). Transfer:
//  - the wallet's checks: a key, 2..16 legs, no 0-coin leg, legs summing to zero, no account
//    twice -> InvalidArgument; a key applied before -> OK with nothing moved (same request)
//    or AlreadyExists (a different one); a deadline already past -> DeadlineExceeded;
//  - min_balance_coins > 0: every debited player whose balance is below
//    max(min_balance_coins, their debit), or who has no account -> FailedPrecondition naming
//    them (short_players), nothing moved;
//  - then a debited player without an account or whose balance is below the debit, or a
//    debited pot that would go below zero / does not exist -> FailedPrecondition naming the
//    players (nothing moved); otherwise every leg is applied (a credited pot is created; the
//    house may go below zero; a credited player account must exist: else FailedPrecondition
//    naming only short debited players, as the real port, which re-reads only those).
// GetBalance reads "player:<player>": NotFound when there is none.
// Failure injection: SetDown(true) answers Unavailable to every call (nothing moved) until
// SetDown(false); LoseNextReplies(n): the next n transfers are decided as usual (applied or
// refused) but answer Unavailable (the reply was lost). Manual mode (SetManual(true)): each
// call is decided at once but its `done` is queued until ReleaseReplies; with manual mode
// off, `done` runs before the call returns.
//
// FakeRecordsPort: records by key per kind (the first request of a key is kept; a replay
// answers OK and counts as received); an empty key is InvalidArgument; the same SetDown,
// LoseNextReplies (recorded, answered Unavailable) and deadline checks.
//
// FakePotLedgerPort (pot_sweeper.h's PotLedgerPort): a tiny ledger of balances and, per pot,
// the net coins every other account put in and the time of its last entry (the injected
// clock's now). Apply(key, legs) moves coins like a wallet transfer (once per key; a key
// seen before is OK with nothing moved, AlreadyExists when its legs differ; the house may
// go below zero, nobody else). Transfer = Apply of the refund's legs. ListPots: pots whose
// balance is not 0, by id, after the cursor (the cursor is the last pot of the page).
// FailNextTransfers(n, status): the next n Transfer calls fail with `status`, nothing moved.
// SetPayers overrides what GetPotPayers answers for a pot (a ledger that does not add up).
// Thread-safety: the three are thread-safe; `done` never runs under their lock.
#ifndef COURTPIECE_SERVICES_TABLE_FAKE_PORTS_H_
#define COURTPIECE_SERVICES_TABLE_FAKE_PORTS_H_

#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/common/clock.h"
#include "services/table/ports.h"
#include "services/table/pot_sweeper.h"

namespace courtpiece::table_service {

// What one Transfer call asked for (every call, including refused and replayed ones).
struct FakeTransferCall {
  table::Transfer transfer;
  std::string table_id;
  uint64_t round = 0;
  absl::StatusCode code = absl::StatusCode::kOk;  // the answer given (or queued)
};

class FakeWalletPort final : public WalletPort {
 public:
  explicit FakeWalletPort(const Clock& clock) : clock_(clock) {}

  void Transfer(const table::Transfer& transfer, std::string_view table_id, uint64_t round,
                absl::Time deadline, std::function<void(WalletReply)> done) override;
  void GetBalance(std::string_view player, absl::Time deadline,
                  std::function<void(absl::StatusOr<int64_t>)> done) override;

  // Test setup and inspection.
  void SetBalance(const std::string& account, int64_t balance_coins);
  std::optional<int64_t> Balance(const std::string& account) const;
  int64_t TotalCoins() const;  // the sum of every balance (never changes)
  bool Applied(const std::string& key) const;
  int applied_count() const;  // distinct keys applied
  std::vector<FakeTransferCall> calls() const;

  // Failure injection.
  void SetDown(bool down);
  void LoseNextReplies(int count);
  void SetManual(bool manual);
  // Runs up to `count` queued replies, oldest first; returns how many ran.
  int ReleaseReplies(int count = 1 << 30);
  int queued_replies() const;

 private:
  WalletReply Decide(const table::Transfer& transfer, std::string_view table_id, uint64_t round,
                     absl::Time deadline);  // requires mu_
  void Reply(std::function<void()> reply);  // runs it, or queues it in manual mode

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> balances_;     // guarded by mu_
  std::map<std::string, std::string> applied_;  // key -> fingerprint; guarded by mu_
  std::vector<FakeTransferCall> calls_;         // guarded by mu_
  bool down_ = false;                           // guarded by mu_
  int lose_replies_ = 0;                        // guarded by mu_
  bool manual_ = false;                         // guarded by mu_
  std::deque<std::function<void()>> queued_;    // guarded by mu_
};

class FakeRecordsPort final : public RecordsPort {
 public:
  explicit FakeRecordsPort(const Clock& clock) : clock_(clock) {}

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
  // PermissionDenied with the message set by Mute, Unavailable while down, else OK; while
  // HoldVoiceChecks(true) the answers wait for ReleaseVoiceChecks (a slow moderation).
  void CheckVoice(std::string_view player, absl::Time deadline,
                  std::function<void(absl::Status)> done) override;
  void Mute(const std::string& player, const std::string& message);
  void Unmute(const std::string& player);
  void HoldVoiceChecks(bool hold);
  void ReleaseVoiceChecks();  // answers every held check, in order
  int voice_checks() const;

  std::map<std::string, lobby::v1::RecordGameRequest> games() const;
  std::map<std::string, lobby::v1::RecordQuitRequest> quits() const;
  std::map<std::string, lobby::v1::RecordRoundRequest> rounds() const;
  std::map<std::string, moderation::v1::FileReportRequest> reports() const;
  std::map<std::string, lobby::v1::RecordTableClosedRequest> closes() const;
  // How many calls with this key reached the receiver (recorded or replayed).
  int received(const std::string& key) const;

  void SetDown(bool down);
  void LoseNextReplies(int count);

 private:
  template <typename Request>
  void Record(std::map<std::string, Request>& records, const Request& request, absl::Time deadline,
              std::function<void(absl::Status)> done);

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, lobby::v1::RecordGameRequest> games_;          // guarded by mu_
  std::map<std::string, lobby::v1::RecordQuitRequest> quits_;          // guarded by mu_
  std::map<std::string, lobby::v1::RecordRoundRequest> rounds_;        // guarded by mu_
  std::map<std::string, moderation::v1::FileReportRequest> reports_;   // guarded by mu_
  std::map<std::string, lobby::v1::RecordTableClosedRequest> closes_;  // guarded by mu_
  std::map<std::string, int> received_;                                // guarded by mu_
  bool down_ = false;                                                  // guarded by mu_
  int lose_replies_ = 0;                                               // guarded by mu_
  std::map<std::string, std::string> muted_;                           // guarded by mu_
  int voice_checks_ = 0;                                               // guarded by mu_
  bool hold_voice_checks_ = false;                                     // guarded by mu_
  std::vector<std::function<void()>> held_voice_checks_;               // guarded by mu_
};

class FakePotLedgerPort final : public PotLedgerPort {
 public:
  explicit FakePotLedgerPort(const Clock& clock) : clock_(clock) {}

  absl::StatusOr<LedgerPotPage> ListPots(std::string_view cursor, int page_size,
                                         absl::Time deadline) override;
  absl::StatusOr<PotPayers> GetPotPayers(std::string_view pot_id, absl::Time deadline) override;
  absl::Status Transfer(const PotRefund& refund, absl::Time deadline) override;

  // Test setup and inspection.
  absl::Status Apply(const std::string& key, const std::vector<PotRefundLeg>& legs);
  void SetBalance(const std::string& account, int64_t coins);
  void SetPayers(const std::string& pot, std::vector<PotPayer> payers);
  void FailNextTransfers(int count, absl::Status status);
  int64_t Balance(const std::string& account) const;  // 0 for an unknown account
  int transfer_calls() const;
  std::vector<std::string> applied_keys() const;  // in order

 private:
  absl::Status ApplyLocked(const std::string& key, const std::vector<PotRefundLeg>& legs);

  const Clock& clock_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> balances_;
  std::map<std::string, std::map<std::string, int64_t>> nets_;  // pot -> account -> net
  std::map<std::string, absl::Time> last_entry_;
  std::map<std::string, std::vector<PotPayer>> payers_override_;
  std::map<std::string, std::vector<PotRefundLeg>> keys_;
  std::vector<std::string> applied_keys_;
  int fail_next_ = 0;
  absl::Status fail_status_;
  int transfer_calls_ = 0;
};

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_FAKE_PORTS_H_
