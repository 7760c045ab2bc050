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

}  // namespace courtpiece::wallet::testing

#endif  // COURTPIECE_SERVICES_WALLET_LEDGER_REQUESTS_FOR_TEST_H_
