// Pure translations between libs/table and the service's protos (no I/O, no state).
// Thread-safety: pure functions.
#ifndef COURTPIECE_SERVICES_TABLE_HOST_CONVERT_H_
#define COURTPIECE_SERVICES_TABLE_HOST_CONVERT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "courtpiece/table/table.h"
#include "courtpiece/table/v1/hosted_table.pb.h"
#include "courtpiece/table/v1/table_service.pb.h"

namespace courtpiece::table_service {

namespace pb = ::courtpiece::table::v1;

// Limits on what a client may send in a command (bytes).
inline constexpr size_t kCommandTypeBytesMax = 32;
inline constexpr size_t kNoteIdBytesMax = 64;
inline constexpr size_t kCardBytesMax = 3;

// 1..64 chars of [A-Za-z0-9_-] (table and player ids, as the wallet's account ids).
bool ValidId(std::string_view id);

// A client's command for `player`. InvalidArgument (naming the field) for an unknown type,
// a type a client may not send (join's balance is the host's; disconnect/reconnect are the
// stream's life), a bad move kind, an oversized field.
absl::StatusOr<table::Command> CommandFromProto(const pb::TableCommand& command,
                                                std::string_view player);

pb::TableEvent EventToProto(const table::Event& event);

// The effect as it is kept and sent, with its idempotency key (docs/table-service.md).
pb::StoredEffect EffectToStored(const table::Effect& effect, std::string_view table_id);
table::Transfer TransferFromStored(const pb::StoredEffect& effect);
// The round a transfer key "<table>:<round>:<step>..." names; 0 when it names none.
uint64_t RoundOfTransferKey(std::string_view key);

std::string_view PhaseName(table::Phase phase);
// Seats, phase, options and round of a live table; the caller adds owner and code.
pb::TableInfo InfoOf(const table::Table& table, const pb::CreateTableRequest& create);

// The table options of a create request (ranges are checked by Table::Create).
table::TableOptions OptionsOf(const pb::CreateTableRequest& create);
// InvalidArgument for ids, the code (6 digits) and sizes; the option ranges and the game
// options are left to Table::Create (which names them).
absl::Status ValidateCreate(const pb::CreateTableRequest& create);
// Same table id, host, options, code and listed.
bool SameCreate(const pb::CreateTableRequest& a, const pb::CreateTableRequest& b);

}  // namespace courtpiece::table_service

#endif  // COURTPIECE_SERVICES_TABLE_HOST_CONVERT_H_
