// Transfer requests shared by the ledger's unit tests (fake store) and its Postgres tests,
// so that both run the same round-shaped movements. Test code only.
#ifndef COURTPIECE_SERVICES_WALLET_LEDGER_REQUESTS_FOR_TEST_H_
#define COURTPIECE_SERVICES_WALLET_LEDGER_REQUESTS_FOR_TEST_H_

#include <string>
#include <utility>

#include "services/wallet/ledger.h"

namespace courtpiece::wallet::testing {

// Round 1 of table t1 staked: alice and bob 25 each, the house 50 for two bots, into the pot.
inline TransferRequest Stakes(std::string key) {
  return {std::move(key),
          {{"player:alice", Side::kDebit, 25},
           {"player:bob", Side::kDebit, 25},
           {"house", Side::kDebit, 50},
           {"pot:t1:1", Side::kCredit, 100}},
          {"t1", 1, "stakes"}};
}

// Round 1 of table t2 staked by four seats: alice, bob, carol 20 each and the house 20 for a
// bot; then a court stake of 10 each from bob and the house (another key: maybe another
// house shard); then the payout of all 110 to alice.
inline TransferRequest FourStakes() {
  return {"t2:1:stake",
          {{"player:alice", Side::kDebit, 20},
           {"player:bob", Side::kDebit, 20},
           {"player:carol", Side::kDebit, 20},
           {"house", Side::kDebit, 20},
           {"pot:t2:1", Side::kCredit, 80}},
          {"t2", 1, "stake"}};
}
inline TransferRequest CourtStake() {
  return {"t2:1:court_stake",
          {{"player:bob", Side::kDebit, 10},
           {"house", Side::kDebit, 10},
           {"pot:t2:1", Side::kCredit, 20}},
          {"t2", 1, "court_stake"}};
}
inline TransferRequest PayoutToAlice() {
  return {"t2:1:payout",
          {{"pot:t2:1", Side::kDebit, 100}, {"player:alice", Side::kCredit, 100}},
          {"t2", 1, "payout"}};
}

}  // namespace courtpiece::wallet::testing

#endif  // COURTPIECE_SERVICES_WALLET_LEDGER_REQUESTS_FOR_TEST_H_
