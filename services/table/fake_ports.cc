#include "services/table/fake_ports.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace courtpiece::table_service {
namespace {

constexpr std::string_view kPlayerPrefix = "player:";
constexpr size_t kLegsMax = 16;

std::string Fingerprint(const table::Transfer& transfer, std::string_view table_id,
                        uint64_t round) {
  std::vector<std::string> legs;
  for (const table::TransferLeg& leg : transfer.legs) {
    legs.push_back(absl::StrCat(leg.account, "=", leg.amount_coins));
  }
  std::sort(legs.begin(), legs.end());
  return absl::StrCat(std::string(table_id), "|", round, "|",
                      std::string(table::TransferStepName(transfer.step)), "|",
                      absl::StrJoin(legs, ","));
}

}  // namespace

WalletReply FakeWalletPort::Decide(const table::Transfer& transfer, std::string_view table_id,
                                   uint64_t round, absl::Time deadline) {
  if (down_) return {absl::UnavailableError("fake wallet is down"), {}};
  if (clock_.Now() >= deadline) return {absl::DeadlineExceededError("deadline passed"), {}};
  if (transfer.key.empty()) return {absl::InvalidArgumentError("no idempotency key"), {}};
  if (transfer.legs.size() < 2 || transfer.legs.size() > kLegsMax) {
    return {absl::InvalidArgumentError(absl::StrCat("2..16 legs, not ", transfer.legs.size())), {}};
  }
  int64_t sum = 0;
  std::set<std::string> accounts;
  for (const table::TransferLeg& leg : transfer.legs) {
    if (leg.amount_coins == 0) return {absl::InvalidArgumentError("a leg of 0 coins"), {}};
    if (!accounts.insert(leg.account).second) {
      return {absl::InvalidArgumentError(absl::StrCat(leg.account, " twice")), {}};
    }
    sum += leg.amount_coins;
  }
  if (sum != 0) return {absl::InvalidArgumentError("debits != credits"), {}};
  const std::string fingerprint = Fingerprint(transfer, table_id, round);
  if (auto it = applied_.find(transfer.key); it != applied_.end()) {
    if (it->second != fingerprint) {
      return {absl::AlreadyExistsError(
                  absl::StrCat("key ", transfer.key, " was used for a different request")),
              {}};
    }
    return {absl::OkStatus(), {}};  // a replay: nothing moves
  }
  std::vector<std::string> short_players;
  bool refused = false;  // a non-player account cannot pay or is missing
  for (const table::TransferLeg& leg : transfer.legs) {
    auto it = balances_.find(leg.account);
    const bool player = leg.account.starts_with(kPlayerPrefix);
    if (leg.amount_coins < 0 && player) {
      const int64_t need = std::max(transfer.min_balance_coins, -leg.amount_coins);
      if (it == balances_.end() || it->second < need) {
        short_players.push_back(leg.account.substr(kPlayerPrefix.size()));
      }
    } else if (leg.amount_coins < 0 && leg.account != "house") {
      refused = refused || it == balances_.end() || it->second < -leg.amount_coins;
    } else if (leg.amount_coins > 0 && player) {
      refused = refused || it == balances_.end();
    }
  }
  if (!short_players.empty() || refused) {
    return {absl::FailedPreconditionError(absl::StrCat("transfer ", transfer.key,
                                                       " refused; cannot pay: [",
                                                       absl::StrJoin(short_players, ", "), "]")),
            short_players};
  }
  for (const table::TransferLeg& leg : transfer.legs) balances_[leg.account] += leg.amount_coins;
  applied_[transfer.key] = fingerprint;
  return {absl::OkStatus(), {}};
}

void FakeWalletPort::Reply(std::function<void()> reply) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (manual_) {
      queued_.push_back(std::move(reply));
      return;
    }
  }
  reply();
}

void FakeWalletPort::Transfer(const table::Transfer& transfer, std::string_view table_id,
                              uint64_t round, absl::Time deadline,
                              std::function<void(WalletReply)> done) {
  WalletReply reply;
  {
    std::lock_guard<std::mutex> lock(mu_);
    reply = Decide(transfer, table_id, round, deadline);
    if (!down_ && lose_replies_ > 0) {
      --lose_replies_;
      reply = {absl::UnavailableError("fake wallet: the reply was lost"), {}};
    }
    calls_.push_back({.transfer = transfer,
                      .table_id = std::string(table_id),
                      .round = round,
                      .code = reply.status.code()});
  }
  Reply([done = std::move(done), reply = std::move(reply)]() mutable { done(std::move(reply)); });
}

void FakeWalletPort::GetBalance(std::string_view player, absl::Time deadline,
                                std::function<void(absl::StatusOr<int64_t>)> done) {
  absl::StatusOr<int64_t> result;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const std::string account = std::string(kPlayerPrefix) + std::string(player);
    auto it = balances_.find(account);
    if (down_) {
      result = absl::UnavailableError("fake wallet is down");
    } else if (clock_.Now() >= deadline) {
      result = absl::DeadlineExceededError("deadline passed");
    } else if (it == balances_.end()) {
      result = absl::NotFoundError(absl::StrCat("no account ", account));
    } else {
      result = it->second;
    }
  }
  Reply(
      [done = std::move(done), result = std::move(result)]() mutable { done(std::move(result)); });
}

void FakeWalletPort::SetBalance(const std::string& account, int64_t balance_coins) {
  std::lock_guard<std::mutex> lock(mu_);
  balances_[account] = balance_coins;
}

std::optional<int64_t> FakeWalletPort::Balance(const std::string& account) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = balances_.find(account);
  if (it == balances_.end()) return std::nullopt;
  return it->second;
}

int64_t FakeWalletPort::TotalCoins() const {
  std::lock_guard<std::mutex> lock(mu_);
  int64_t total = 0;
  for (const auto& [account, balance] : balances_) total += balance;
  return total;
}

bool FakeWalletPort::Applied(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  return applied_.contains(key);
}

int FakeWalletPort::applied_count() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(applied_.size());
}

std::vector<FakeTransferCall> FakeWalletPort::calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return calls_;
}

void FakeWalletPort::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
}

void FakeWalletPort::LoseNextReplies(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = count;
}

void FakeWalletPort::SetManual(bool manual) {
  std::lock_guard<std::mutex> lock(mu_);
  manual_ = manual;
}

int FakeWalletPort::ReleaseReplies(int count) {
  int released = 0;
  while (released < count) {
    std::function<void()> reply;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (queued_.empty()) break;
      reply = std::move(queued_.front());
      queued_.pop_front();
    }
    reply();
    ++released;
  }
  return released;
}

int FakeWalletPort::queued_replies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<int>(queued_.size());
}

// --- records ---

template <typename Request>
void FakeRecordsPort::Record(std::map<std::string, Request>& records, const Request& request,
                             absl::Time deadline, std::function<void(absl::Status)> done) {
  absl::Status status;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (down_) {
      status = absl::UnavailableError("fake receiver is down");
    } else if (clock_.Now() >= deadline) {
      status = absl::DeadlineExceededError("deadline passed");
    } else if (request.key().empty()) {
      status = absl::InvalidArgumentError("record without a key");
    } else {
      records.try_emplace(request.key(), request);  // a replay keeps the first
      ++received_[request.key()];
      if (lose_replies_ > 0) {
        --lose_replies_;
        status = absl::UnavailableError("fake receiver: the reply was lost");
      }
    }
  }
  done(status);
}

void FakeRecordsPort::RecordGame(const lobby::v1::RecordGameRequest& request, absl::Time deadline,
                                 std::function<void(absl::Status)> done) {
  Record(games_, request, deadline, std::move(done));
}
void FakeRecordsPort::RecordQuit(const lobby::v1::RecordQuitRequest& request, absl::Time deadline,
                                 std::function<void(absl::Status)> done) {
  Record(quits_, request, deadline, std::move(done));
}
void FakeRecordsPort::RecordRound(const lobby::v1::RecordRoundRequest& request, absl::Time deadline,
                                  std::function<void(absl::Status)> done) {
  Record(rounds_, request, deadline, std::move(done));
}
void FakeRecordsPort::RecordTableClosed(const lobby::v1::RecordTableClosedRequest& request,
                                        absl::Time deadline,
                                        std::function<void(absl::Status)> done) {
  Record(closes_, request, deadline, std::move(done));
}
void FakeRecordsPort::FileReport(const moderation::v1::FileReportRequest& request,
                                 absl::Time deadline, std::function<void(absl::Status)> done) {
  Record(reports_, request, deadline, std::move(done));
}

void FakeRecordsPort::CheckVoice(std::string_view player, absl::Time /*deadline*/,
                                 std::function<void(absl::Status)> done) {
  absl::Status status = absl::OkStatus();
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++voice_checks_;
    if (down_) {
      status = absl::UnavailableError("moderation is down");
    } else if (auto it = muted_.find(std::string(player)); it != muted_.end()) {
      status = absl::PermissionDeniedError(it->second);
    }
    if (hold_voice_checks_) {
      held_voice_checks_.push_back([done = std::move(done), status] { done(status); });
      return;
    }
  }
  done(status);
}

void FakeRecordsPort::Unmute(const std::string& player) {
  std::lock_guard<std::mutex> lock(mu_);
  muted_.erase(player);
}

void FakeRecordsPort::HoldVoiceChecks(bool hold) {
  std::lock_guard<std::mutex> lock(mu_);
  hold_voice_checks_ = hold;
}

void FakeRecordsPort::ReleaseVoiceChecks() {
  std::vector<std::function<void()>> held;
  {
    std::lock_guard<std::mutex> lock(mu_);
    held.swap(held_voice_checks_);
  }
  for (const std::function<void()>& answer : held) answer();
}

void FakeRecordsPort::Mute(const std::string& player, const std::string& message) {
  std::lock_guard<std::mutex> lock(mu_);
  muted_[player] = message;
}

int FakeRecordsPort::voice_checks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return voice_checks_;
}

std::map<std::string, lobby::v1::RecordGameRequest> FakeRecordsPort::games() const {
  std::lock_guard<std::mutex> lock(mu_);
  return games_;
}
std::map<std::string, lobby::v1::RecordQuitRequest> FakeRecordsPort::quits() const {
  std::lock_guard<std::mutex> lock(mu_);
  return quits_;
}
std::map<std::string, lobby::v1::RecordRoundRequest> FakeRecordsPort::rounds() const {
  std::lock_guard<std::mutex> lock(mu_);
  return rounds_;
}
std::map<std::string, moderation::v1::FileReportRequest> FakeRecordsPort::reports() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reports_;
}
std::map<std::string, lobby::v1::RecordTableClosedRequest> FakeRecordsPort::closes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closes_;
}
int FakeRecordsPort::received(const std::string& key) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = received_.find(key);
  return it == received_.end() ? 0 : it->second;
}

void FakeRecordsPort::SetDown(bool down) {
  std::lock_guard<std::mutex> lock(mu_);
  down_ = down;
}
void FakeRecordsPort::LoseNextReplies(int count) {
  std::lock_guard<std::mutex> lock(mu_);
  lose_replies_ = count;
}

absl::StatusOr<LedgerPotPage> FakePotLedgerPort::ListPots(std::string_view cursor, int page_size,
                                                          absl::Time deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (clock_.Now() > deadline) return absl::DeadlineExceededError("deadline passed");
  LedgerPotPage page;
  for (auto it = balances_.upper_bound(std::string(cursor)); it != balances_.end(); ++it) {
    if (!it->first.starts_with("pot:") || it->second == 0) continue;
    if (static_cast<int>(page.pots.size()) == page_size) {
      page.next_cursor = page.pots.back().pot_id;
      break;
    }
    page.pots.push_back({it->first, it->second, last_entry_[it->first]});
  }
  return page;
}

absl::StatusOr<PotPayers> FakePotLedgerPort::GetPotPayers(std::string_view pot_id,
                                                          absl::Time deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  if (clock_.Now() > deadline) return absl::DeadlineExceededError("deadline passed");
  const std::string pot(pot_id);
  if (!balances_.contains(pot)) return absl::NotFoundError(absl::StrCat("unknown account ", pot));
  PotPayers out;
  out.balance_coins = balances_[pot];
  if (auto it = payers_override_.find(pot); it != payers_override_.end()) {
    out.payers = it->second;
    return out;
  }
  for (const auto& [account, net] : nets_[pot]) {
    if (net != 0) out.payers.push_back({account, net});
  }
  return out;
}

absl::Status FakePotLedgerPort::Transfer(const PotRefund& refund, absl::Time deadline) {
  std::lock_guard<std::mutex> lock(mu_);
  ++transfer_calls_;
  if (clock_.Now() > deadline) return absl::DeadlineExceededError("deadline passed");
  if (fail_next_ > 0) {
    --fail_next_;
    return fail_status_;
  }
  return ApplyLocked(refund.key, refund.legs);
}

absl::Status FakePotLedgerPort::Apply(const std::string& key,
                                      const std::vector<PotRefundLeg>& legs) {
  std::lock_guard<std::mutex> lock(mu_);
  return ApplyLocked(key, legs);
}

absl::Status FakePotLedgerPort::ApplyLocked(const std::string& key,
                                            const std::vector<PotRefundLeg>& legs) {
  if (auto it = keys_.find(key); it != keys_.end()) {
    if (it->second == legs) return absl::OkStatus();  // replay: nothing moves
    return absl::AlreadyExistsError(absl::StrCat("key ", key, " used for another request"));
  }
  int64_t sum = 0;
  for (const PotRefundLeg& leg : legs) {
    if (leg.amount_coins == 0) return absl::InvalidArgumentError("a leg of 0 coins");
    sum += leg.amount_coins;
    if (leg.account_id != "house" && balances_[leg.account_id] + leg.amount_coins < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("account ", leg.account_id, " would go below zero"));
    }
  }
  if (sum != 0) return absl::InvalidArgumentError("legs do not sum to zero");
  for (const PotRefundLeg& leg : legs) {
    balances_[leg.account_id] += leg.amount_coins;
    if (!leg.account_id.starts_with("pot:")) continue;
    last_entry_[leg.account_id] = clock_.Now();
    for (const PotRefundLeg& other : legs) {
      if (other.account_id != leg.account_id) {
        nets_[leg.account_id][other.account_id] -= other.amount_coins;
      }
    }
  }
  keys_[key] = legs;
  applied_keys_.push_back(key);
  return absl::OkStatus();
}

void FakePotLedgerPort::SetBalance(const std::string& account, int64_t coins) {
  std::lock_guard<std::mutex> lock(mu_);
  balances_[account] = coins;
}

void FakePotLedgerPort::SetPayers(const std::string& pot, std::vector<PotPayer> payers) {
  std::lock_guard<std::mutex> lock(mu_);
  payers_override_[pot] = std::move(payers);
}

void FakePotLedgerPort::FailNextTransfers(int count, absl::Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  fail_next_ = count;
  fail_status_ = std::move(status);
}

int64_t FakePotLedgerPort::Balance(const std::string& account) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = balances_.find(account);
  return it == balances_.end() ? 0 : it->second;
}

int FakePotLedgerPort::transfer_calls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return transfer_calls_;
}

std::vector<std::string> FakePotLedgerPort::applied_keys() const {
  std::lock_guard<std::mutex> lock(mu_);
  return applied_keys_;
}

}  // namespace courtpiece::table_service
