#include "courtpiece/table/testing.h"

#include <cstdio>
#include <cstdlib>
#include <set>

#include "absl/strings/str_cat.h"

namespace courtpiece::table {
namespace {
// Checks that stay on in release builds: the harness is what tests stand on.
void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "TableHarness check failed: %s\n", what);
    std::abort();
  }
}
}  // namespace

TableHarness::TableHarness(TableOptions options, std::string master_seed, EngineFactory* engines,
                           int64_t host_balance, int64_t start_ms)
    : now_(start_ms) {
  if (engines == nullptr) {
    own_engines_ = std::make_unique<FakeEngineFactory>();
    engines = own_engines_.get();
  }
  engines_ = engines;
  seeds_ = std::make_unique<DeterministicSeedSource>(master_seed, options.table_id);
  balances[absl::StrCat("player:", options.host_player)] = host_balance;
  granted_ += host_balance;
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Create(options, engines_, seeds_.get(), now_);
  Check(t.ok(), "t.ok()");
  table_ = std::move(*t);
  Pump();
}

void TableHarness::Absorb() {
  for (Event& e : table_->TakeEvents()) {
    order.push_back({false, events.size()});
    events.push_back(std::move(e));
    event_times.push_back(now_);
  }
}

void TableHarness::Settle(const Transfer& t) {
  for (const TransferLeg& l : t.legs) balances[l.account] += l.amount_coins;
}

void TableHarness::Pump() {
  for (int guard = 0; guard < 1000; ++guard) {
    Absorb();
    if (answer_bots) {
      if (std::optional<BotTurn> b = table_->PendingBotTurn()) {
        std::unique_ptr<BotJob> job = table_->NewBotJob();
        Check(job != nullptr, "a pending bot turn has a job");
        absl::Status st = table_->OnBotMove(b->id, job->Run(), now_);
        Check(st.ok(), "OnBotMove(pending id)");
        ++bot_moves_answered;
        continue;
      }
    }
    std::vector<Effect> fx = table_->TakeEffects();
    if (fx.empty()) return;
    for (Effect& f : fx) {
      order.push_back({true, effects.size()});
      effects.push_back(f);
      effect_times.push_back(now_);
      if (f.type != EffectType::kTransfer) continue;
      {  // as the wallet: an account at most once per transfer (ledger.cc refuses it)
        std::set<std::string> accounts;
        for (const TransferLeg& l : f.transfer.legs) {
          Check(accounts.insert(l.account).second, "an account twice in one transfer");
        }
      }
      if (!f.transfer.awaited) {
        Settle(f.transfer);
        continue;
      }
      if (!auto_reply) continue;
      Reply r;
      if (!scripted_replies.empty()) {
        r = scripted_replies.front();
        scripted_replies.pop_front();
      } else {
        for (const TransferLeg& l : f.transfer.legs) {
          if (l.amount_coins >= 0 || !l.account.starts_with("player:")) continue;
          int64_t need = std::max(f.transfer.min_balance_coins, -l.amount_coins);
          if (balances[l.account] < need) {
            r.ok = false;
            r.short_players.push_back(l.account.substr(7));
          }
        }
      }
      if (r.ok) Settle(f.transfer);
      absl::Status st = table_->OnWalletReply(f.transfer.key, r.ok, r.short_players, now_);
      Check(st.ok(), "st.ok()");
      (void)st;
    }
  }
  Check(false && "Pump does not settle", "false && 'Pump does not settle'");
}

absl::Status TableHarness::AnswerBot(const std::optional<Move>& move) {
  std::optional<BotTurn> b = table_->PendingBotTurn();
  if (!b) return absl::NotFoundError("no bot turn awaited");
  absl::Status st = table_->OnBotMove(b->id, move, now_);
  if (st.ok()) ++bot_moves_answered;
  Pump();
  return st;
}

absl::Status TableHarness::ReplyNow(const Reply& r) {
  std::optional<std::string> key = table_->AwaitedTransferKey();
  if (!key) return absl::NotFoundError("nothing awaited");
  if (r.ok) {
    for (auto it = effects.rbegin(); it != effects.rend(); ++it) {
      if (it->type == EffectType::kTransfer && it->transfer.key == *key) {
        Settle(it->transfer);
        break;
      }
    }
  }
  absl::Status st = table_->OnWalletReply(*key, r.ok, r.short_players, now_);
  Pump();
  return st;
}

absl::Status TableHarness::Do(Command c) {
  absl::Status st = table_->Handle(c, now_);
  Pump();
  return st;
}

absl::Status TableHarness::Join(const std::string& player, int64_t balance) {
  std::string acct = absl::StrCat("player:", player);
  if (!balances.contains(acct)) {
    balances[acct] = balance;
    granted_ += balance;
  }
  return Do({.type = CommandType::kJoin, .player = player, .balance_coins = balances[acct]});
}

absl::Status TableHarness::Simple(CommandType type, const std::string& player, int seat) {
  return Do({.type = type, .player = player, .seat = seat});
}
absl::Status TableHarness::Vote(const std::string& player, bool yes) {
  return Do({.type = CommandType::kVote, .player = player, .yes = yes});
}
absl::Status TableHarness::Play(const std::string& player, const Move& move) {
  return Do({.type = CommandType::kMove, .player = player, .move = move});
}

void TableHarness::AdvanceTo(int64_t t) {
  for (int guard = 0; guard < 1'000'000; ++guard) {
    std::optional<int64_t> next = table_->NextDeadline();
    if (!next || *next > t) break;
    now_ = std::max(now_, *next);
    table_->Advance(now_);
    Pump();
  }
  now_ = std::max(now_, t);
  table_->Advance(now_);
  Pump();
}

void TableHarness::RunUntilIdle(int64_t max_ms) {
  int64_t end = now_ + max_ms;
  for (int guard = 0; guard < 1'000'000; ++guard) {
    std::optional<int64_t> next = table_->NextDeadline();
    if (!next || *next > end) break;
    if (table_->phase() == Phase::kPlaying && table_->engine() && table_->engine()->ToAct() >= 0) {
      break;  // a person's turn
    }
    AdvanceTo(*next);
  }
}

void TableHarness::PlayPeople() {
  for (int guard = 0; guard < 1000; ++guard) {
    if (table_->phase() != Phase::kPlaying) return;
    int s = table_->engine()->ToAct();
    if (s < 0 || table_->seat(s).kind != SeatKind::kPerson) return;
    absl::Status st = Play(table_->seat(s).player, table_->engine()->AutoMove(s));
    Check(st.ok(), "st.ok()");
    (void)st;
  }
}

void TableHarness::SnapshotRestore() {
  std::string snap = table_->Snapshot();
  absl::StatusOr<std::unique_ptr<Table>> t = Table::Restore(snap, engines_, seeds_.get());
  Check(t.ok(), "t.ok()");
  table_ = std::move(*t);
}

std::vector<Event> TableHarness::EventsOfType(std::string_view type) const {
  std::vector<Event> out;
  for (const Event& e : events) {
    if (e.type == type) out.push_back(e);
  }
  return out;
}
std::vector<Effect> TableHarness::EffectsOfType(EffectType type) const {
  std::vector<Effect> out;
  for (const Effect& f : effects) {
    if (f.type == type) out.push_back(f);
  }
  return out;
}
std::vector<std::string> TableHarness::Quits() const {
  std::vector<std::string> out;
  for (const Effect& f : effects) {
    if (f.type == EffectType::kRecordQuit) out.push_back(f.player);
  }
  return out;
}
int64_t TableHarness::Sum() const {
  int64_t s = 0;
  for (auto& [a, b] : balances) s += b;
  return s - granted_;
}

}  // namespace courtpiece::table
