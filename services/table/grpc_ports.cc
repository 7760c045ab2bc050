#include "services/table/grpc_ports.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "courtpiece/common/grpc_client.h"
#include "courtpiece/common/grpc_status.h"
#include "courtpiece/lobby/v1/records.grpc.pb.h"
#include "courtpiece/moderation/v1/reports.grpc.pb.h"
#include "courtpiece/wallet/v1/wallet.grpc.pb.h"
#include "grpcpp/client_context.h"

namespace courtpiece::table_service {
namespace {

namespace wv1 = ::courtpiece::wallet::v1;

constexpr std::string_view kPlayerPrefix = "player:";

// Admits at most `max` calls at a time. An admitted call ends with Finish: its place is
// released before its `done` runs (so `done` may start the next call), and it counts as
// unfinished until `done` has returned (main waits for none before it exits).
class InFlight {
 public:
  explicit InFlight(int max) : max_(max) { assert(max > 0); }
  bool TryAcquire() {
    if (count_.fetch_add(1) >= max_) {
      count_.fetch_sub(1);
      return false;
    }
    unfinished_.fetch_add(1);
    return true;
  }
  // `answer` calls the caller's `done`.
  template <typename Answer>
  void Finish(Answer&& answer) {
    count_.fetch_sub(1);
    std::forward<Answer>(answer)();
    unfinished_.fetch_sub(1);
  }
  int count() const { return count_.load(); }
  int unfinished() const { return unfinished_.load(); }
  absl::Status Busy() const {
    return absl::ResourceExhaustedError(
        absl::StrCat("more than ", max_, " calls in flight; nothing was sent, retry later"));
  }

 private:
  const int max_;
  std::atomic<int> count_{0};
  std::atomic<int> unfinished_{0};  // admitted calls whose `done` has not returned
};

// A finished RPC's status as ports.h codes: CANCELLED (the call was cut: maybe applied)
// becomes Unavailable; every other code is kept.
absl::Status FromRpc(const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::CANCELLED) {
    return absl::UnavailableError(absl::StrCat("call cancelled: ", status.error_message()));
  }
  return common::FromGrpcStatus(status);
}

void SetDeadline(grpc::ClientContext& context, absl::Time deadline) {
  context.set_deadline(absl::ToChronoTime(deadline));
}

}  // namespace

struct GrpcWalletPort::Shared {
  Shared(const std::shared_ptr<grpc::Channel>& channel, int calls_in_flight_max)
      : stub(wv1::Wallet::NewStub(channel)), in_flight(calls_in_flight_max) {}
  std::unique_ptr<wv1::Wallet::Stub> stub;
  InFlight in_flight;
};

namespace {

using Shared = GrpcWalletPort::Shared;
using BalancesDone = std::function<void(std::vector<absl::StatusOr<int64_t>>)>;

// Reads the balances of `accounts` in parallel; `done` gets them in the same order, once,
// when the last read is back.
void ReadBalances(const std::shared_ptr<Shared>& shared, const std::vector<std::string>& accounts,
                  absl::Time deadline, BalancesDone done) {
  struct Read {
    std::mutex mu;
    std::vector<absl::StatusOr<int64_t>> results;  // guarded by mu
    size_t remaining = 0;                          // guarded by mu
    BalancesDone done;
  };
  struct Rpc {
    grpc::ClientContext context;
    wv1::GetBalanceRequest request;
    wv1::GetBalanceResponse response;
  };
  assert(!accounts.empty());
  auto read = std::make_shared<Read>();
  read->results.assign(accounts.size(), absl::UnknownError("not read"));
  read->remaining = accounts.size();
  read->done = std::move(done);
  for (size_t i = 0; i < accounts.size(); ++i) {
    auto rpc = std::make_shared<Rpc>();
    SetDeadline(rpc->context, deadline);
    rpc->request.set_account_id(accounts[i]);
    shared->stub->async()->GetBalance(
        &rpc->context, &rpc->request, &rpc->response, [shared, read, rpc, i](grpc::Status status) {
          absl::StatusOr<int64_t> result =
              status.ok() ? absl::StatusOr<int64_t>(rpc->response.balance()) : FromRpc(status);
          bool last = false;
          {
            std::lock_guard<std::mutex> lock(read->mu);
            read->results[i] = std::move(result);
            last = --read->remaining == 0;
          }
          if (last) read->done(std::move(read->results));
        });
  }
}

// One Transfer call: the optional min-balance read, the transfer, the re-read on a refusal.
struct TransferCall {
  std::shared_ptr<Shared> shared;
  wv1::TransferRequest request;
  std::vector<std::string> debited_accounts;  // "player:<id>", in leg order
  std::vector<int64_t> debits_coins;          // what each of them pays
  int64_t min_balance_coins = 0;
  absl::Time deadline;
  std::function<void(WalletReply)> done;
  grpc::ClientContext context;
  wv1::TransferResponse response;

  void Finish(WalletReply reply) {
    shared->in_flight.Finish([&] { done(std::move(reply)); });
  }
};

// The players short of `need(i)`, or the first read error other than NotFound.
template <typename Need>
absl::StatusOr<std::vector<std::string>> ShortPlayers(
    const TransferCall& call, const std::vector<absl::StatusOr<int64_t>>& balances, Need need) {
  std::vector<std::string> short_players;
  for (size_t i = 0; i < balances.size(); ++i) {
    const bool missing = !balances[i].ok() && absl::IsNotFound(balances[i].status());
    if (!balances[i].ok() && !missing) return balances[i].status();
    if (missing || *balances[i] < need(i)) {
      short_players.push_back(call.debited_accounts[i].substr(kPlayerPrefix.size()));
    }
  }
  return short_players;
}

void OnRefused(std::shared_ptr<TransferCall> call, const grpc::Status& refusal) {
  const std::string why =
      absl::StrCat("the wallet refused transfer ", call->request.idempotency_key(), " (",
                   common::GrpcCodeName(refusal.error_code()), ": ", refusal.error_message(), ")");
  if (call->debited_accounts.empty()) {
    call->Finish({absl::FailedPreconditionError(why), {}});
    return;
  }
  ReadBalances(
      call->shared, call->debited_accounts, call->deadline,
      [call, why](std::vector<absl::StatusOr<int64_t>> balances) {
        absl::StatusOr<std::vector<std::string>> short_players =
            ShortPlayers(*call, balances, [&](size_t i) { return call->debits_coins[i]; });
        if (!short_players.ok()) {
          call->Finish({short_players.status(), {}});
          return;
        }
        call->Finish({absl::FailedPreconditionError(absl::StrCat(
                          why, "; cannot pay: [", absl::StrJoin(*short_players, ", "), "]")),
                      *std::move(short_players)});
      });
}

void Send(std::shared_ptr<TransferCall> call) {
  SetDeadline(call->context, call->deadline);
  TransferCall* raw = call.get();
  call->shared->stub->async()->Transfer(
      &raw->context, &raw->request, &raw->response, [call](grpc::Status status) {
        if (status.ok()) {
          call->Finish({absl::OkStatus(), {}});
        } else if (status.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
                   status.error_code() == grpc::StatusCode::NOT_FOUND) {
          OnRefused(call, status);
        } else {
          call->Finish({FromRpc(status), {}});
        }
      });
}

}  // namespace

GrpcWalletPort::GrpcWalletPort(std::shared_ptr<grpc::Channel> wallet_channel,
                               GrpcPortOptions options)
    : shared_(std::make_shared<Shared>(wallet_channel, options.calls_in_flight_max)) {
  common::PinGrpcCallbackQueue();  // a callback may drop the channel's last reference
}

GrpcWalletPort::~GrpcWalletPort() = default;

int GrpcWalletPort::calls_in_flight() const { return shared_->in_flight.count(); }
int GrpcWalletPort::calls_unfinished() const { return shared_->in_flight.unfinished(); }

void GrpcWalletPort::Transfer(const table::Transfer& transfer, std::string_view table_id,
                              uint64_t round, absl::Time deadline,
                              std::function<void(WalletReply)> done) {
  if (!shared_->in_flight.TryAcquire()) {
    done({shared_->in_flight.Busy(), {}});
    return;
  }
  auto call = std::make_shared<TransferCall>();
  call->shared = shared_;
  call->min_balance_coins = transfer.min_balance_coins;
  call->deadline = deadline;
  call->done = std::move(done);
  if (transfer.key.empty()) {
    call->Finish({absl::InvalidArgumentError("transfer without an idempotency key"), {}});
    return;
  }
  call->request.set_idempotency_key(transfer.key);
  call->request.set_table_id(std::string(table_id));
  call->request.set_round(static_cast<int64_t>(round));
  call->request.set_reason(std::string(table::TransferStepName(transfer.step)));
  for (const table::TransferLeg& leg : transfer.legs) {
    if (leg.amount_coins == 0) {
      call->Finish({absl::InvalidArgumentError(absl::StrCat(
                        "transfer ", transfer.key, ": a leg of 0 coins for ", leg.account)),
                    {}});
      return;
    }
    wv1::Leg* out = call->request.add_legs();
    out->set_account_id(leg.account);
    out->set_side(leg.amount_coins < 0 ? wv1::SIDE_DEBIT : wv1::SIDE_CREDIT);
    out->set_amount(leg.amount_coins < 0 ? -leg.amount_coins : leg.amount_coins);
    if (leg.amount_coins < 0 && leg.account.starts_with(kPlayerPrefix)) {
      call->debited_accounts.push_back(leg.account);
      call->debits_coins.push_back(-leg.amount_coins);
    }
  }
  if (call->min_balance_coins <= 0 || call->debited_accounts.empty()) {
    Send(std::move(call));
    return;
  }
  ReadBalances(
      shared_, call->debited_accounts, deadline,
      [call](std::vector<absl::StatusOr<int64_t>> balances) {
        absl::StatusOr<std::vector<std::string>> short_players = ShortPlayers(
            *call, balances,
            [&](size_t i) { return std::max(call->min_balance_coins, call->debits_coins[i]); });
        if (!short_players.ok()) {
          call->Finish({short_players.status(), {}});
        } else if (!short_players->empty()) {
          call->Finish({absl::FailedPreconditionError(absl::StrCat(
                            "transfer ", call->request.idempotency_key(), " not sent: below ",
                            call->min_balance_coins, " coins or without an account: [",
                            absl::StrJoin(*short_players, ", "), "]")),
                        *std::move(short_players)});
        } else {
          Send(call);
        }
      });
}

void GrpcWalletPort::GetBalance(std::string_view player, absl::Time deadline,
                                std::function<void(absl::StatusOr<int64_t>)> done) {
  if (!shared_->in_flight.TryAcquire()) {
    done(shared_->in_flight.Busy());
    return;
  }
  ReadBalances(
      shared_, {std::string(kPlayerPrefix) + std::string(player)}, deadline,
      [shared = shared_, done = std::move(done)](std::vector<absl::StatusOr<int64_t>> balances) {
        shared->in_flight.Finish([&] { done(std::move(balances[0])); });
      });
}

// --- records ---

struct GrpcRecordsPort::Shared {
  Shared(const std::shared_ptr<grpc::Channel>& lobby_channel,
         const std::shared_ptr<grpc::Channel>& moderation_channel, int calls_in_flight_max)
      : lobby(lobby::v1::LobbyRecords::NewStub(lobby_channel)),
        moderation(moderation::v1::ReportIntake::NewStub(moderation_channel)),
        in_flight(calls_in_flight_max) {}
  std::unique_ptr<lobby::v1::LobbyRecords::Stub> lobby;
  std::unique_ptr<moderation::v1::ReportIntake::Stub> moderation;
  InFlight in_flight;
};

namespace {

// One call within the port's in-flight bound: `start(stub-call args...)` begins the RPC;
// `answer(status, reply)` turns its outcome into what `done` gets.
template <typename Request, typename Reply, typename Start, typename Answer>
void SendCall(const std::shared_ptr<GrpcRecordsPort::Shared>& shared, const Request& request,
              absl::Time deadline, std::function<void(absl::Status)> done, Start start,
              Answer answer) {
  if (!shared->in_flight.TryAcquire()) {
    done(shared->in_flight.Busy());
    return;
  }
  struct Rpc {
    grpc::ClientContext context;
    Request request;
    Reply reply;
  };
  auto rpc = std::make_shared<Rpc>();
  rpc->request = request;
  SetDeadline(rpc->context, deadline);
  start(&rpc->context, &rpc->request, &rpc->reply,
        [shared, rpc, done = std::move(done), answer](grpc::Status status) {
          shared->in_flight.Finish([&] { done(answer(status, rpc->reply)); });
        });
}

// Sends one record (keyed: a re-send is answered replayed).
template <typename Request, typename Reply, typename Start>
void SendRecord(const std::shared_ptr<GrpcRecordsPort::Shared>& shared, const Request& request,
                absl::Time deadline, std::function<void(absl::Status)> done, Start start) {
  if (request.key().empty()) {
    done(absl::InvalidArgumentError("record without a key"));
    return;
  }
  SendCall<Request, Reply>(shared, request, deadline, std::move(done), std::move(start),
                           [](const grpc::Status& status, const Reply&) {
                             return status.ok() ? absl::OkStatus() : FromRpc(status);
                           });
}

}  // namespace

GrpcRecordsPort::GrpcRecordsPort(std::shared_ptr<grpc::Channel> lobby_channel,
                                 std::shared_ptr<grpc::Channel> moderation_channel,
                                 GrpcPortOptions options)
    : shared_(std::make_shared<Shared>(lobby_channel, moderation_channel,
                                       options.calls_in_flight_max)) {
  common::PinGrpcCallbackQueue();
}

GrpcRecordsPort::~GrpcRecordsPort() = default;

int GrpcRecordsPort::calls_in_flight() const { return shared_->in_flight.count(); }
int GrpcRecordsPort::calls_unfinished() const { return shared_->in_flight.unfinished(); }

void GrpcRecordsPort::RecordGame(const lobby::v1::RecordGameRequest& request, absl::Time deadline,
                                 std::function<void(absl::Status)> done) {
  SendRecord<lobby::v1::RecordGameRequest, lobby::v1::RecordReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->lobby.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->RecordGame(context, req, reply, std::move(callback));
      });
}

void GrpcRecordsPort::RecordQuit(const lobby::v1::RecordQuitRequest& request, absl::Time deadline,
                                 std::function<void(absl::Status)> done) {
  SendRecord<lobby::v1::RecordQuitRequest, lobby::v1::RecordReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->lobby.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->RecordQuit(context, req, reply, std::move(callback));
      });
}

void GrpcRecordsPort::RecordRound(const lobby::v1::RecordRoundRequest& request, absl::Time deadline,
                                  std::function<void(absl::Status)> done) {
  SendRecord<lobby::v1::RecordRoundRequest, lobby::v1::RecordReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->lobby.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->RecordRound(context, req, reply, std::move(callback));
      });
}

void GrpcRecordsPort::RecordTableClosed(const lobby::v1::RecordTableClosedRequest& request,
                                        absl::Time deadline,
                                        std::function<void(absl::Status)> done) {
  SendRecord<lobby::v1::RecordTableClosedRequest, lobby::v1::RecordReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->lobby.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->RecordTableClosed(context, req, reply, std::move(callback));
      });
}

void GrpcRecordsPort::FileReport(const moderation::v1::FileReportRequest& request,
                                 absl::Time deadline, std::function<void(absl::Status)> done) {
  SendRecord<moderation::v1::FileReportRequest, moderation::v1::FileReportReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->moderation.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->FileReport(context, req, reply, std::move(callback));
      });
}

void GrpcRecordsPort::CheckVoice(std::string_view player, absl::Time deadline,
                                 std::function<void(absl::Status)> done) {
  moderation::v1::CheckVoiceRequest request;
  request.set_player_id(std::string(player));
  SendCall<moderation::v1::CheckVoiceRequest, moderation::v1::CheckVoiceReply>(
      shared_, request, deadline, std::move(done),
      [stub = shared_->moderation.get()](auto* context, auto* req, auto* reply, auto callback) {
        stub->async()->CheckVoice(context, req, reply, std::move(callback));
      },
      // PermissionDenied means muted and nothing else: a failed call is Unavailable.
      [](const grpc::Status& status, const moderation::v1::CheckVoiceReply& reply) {
        if (!status.ok()) {
          return absl::UnavailableError(
              absl::StrCat("moderation did not answer the voice check: ", status.error_message()));
        }
        return reply.muted() ? absl::PermissionDeniedError(reply.message()) : absl::OkStatus();
      });
}

struct GrpcPotLedgerPort::Stub {
  std::unique_ptr<wv1::Wallet::Stub> wallet;
};

GrpcPotLedgerPort::GrpcPotLedgerPort(std::shared_ptr<grpc::Channel> wallet_channel)
    : stub_(std::make_unique<Stub>(Stub{wv1::Wallet::NewStub(wallet_channel)})) {}

GrpcPotLedgerPort::~GrpcPotLedgerPort() = default;

absl::StatusOr<LedgerPotPage> GrpcPotLedgerPort::ListPots(std::string_view cursor, int page_size,
                                                          absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  wv1::ListPotsRequest request;
  request.set_cursor(std::string(cursor));
  request.set_page_size(page_size);
  wv1::ListPotsResponse response;
  if (absl::Status s = FromRpc(stub_->wallet->ListPots(&context, request, &response)); !s.ok()) {
    return s;
  }
  LedgerPotPage page;
  for (const wv1::Pot& pot : response.pots()) {
    page.pots.push_back(
        {pot.account_id(), pot.balance(), absl::FromUnixMicros(pot.last_entry_unix_micros())});
  }
  page.next_cursor = response.next_cursor();
  return page;
}

absl::StatusOr<PotPayers> GrpcPotLedgerPort::GetPotPayers(std::string_view pot_id,
                                                          absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  wv1::PotPayersRequest request;
  request.set_pot_id(std::string(pot_id));
  wv1::PotPayersResponse response;
  if (absl::Status s = FromRpc(stub_->wallet->PotPayers(&context, request, &response)); !s.ok()) {
    return s;
  }
  PotPayers out;
  out.balance_coins = response.balance();
  for (const wv1::PotPayer& payer : response.payers()) {
    out.payers.push_back({payer.account_id(), payer.net_coins()});
  }
  return out;
}

absl::Status GrpcPotLedgerPort::Transfer(const PotRefund& refund, absl::Time deadline) {
  grpc::ClientContext context;
  SetDeadline(context, deadline);
  wv1::TransferRequest request;
  request.set_idempotency_key(refund.key);
  request.set_table_id(refund.table_id);
  request.set_round(refund.round);
  request.set_reason("sweep_refund");
  for (const PotRefundLeg& leg : refund.legs) {
    wv1::Leg* out = request.add_legs();
    out->set_account_id(leg.account_id);
    out->set_side(leg.amount_coins < 0 ? wv1::SIDE_DEBIT : wv1::SIDE_CREDIT);
    out->set_amount(leg.amount_coins < 0 ? -leg.amount_coins : leg.amount_coins);
  }
  wv1::TransferResponse response;
  return FromRpc(stub_->wallet->Transfer(&context, request, &response));
}

}  // namespace courtpiece::table_service
