// JSON renderings of table events, effects and commands (for courtpiece-tablesim, logs and
// tests). Formats: docs/tablesim.md. Thread-safety: pure functions.
#ifndef COURTPIECE_TABLE_JSON_H_
#define COURTPIECE_TABLE_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "courtpiece/table/table.h"

namespace courtpiece::table {

std::string EventToJson(const Event& event, int64_t at_ms);
std::string EffectToJson(const Effect& effect, int64_t at_ms);
// {"type":"join","player":"p1","balance":1000,...}; see docs/tablesim.md.
absl::StatusOr<Command> CommandFromJson(std::string_view json);

}  // namespace courtpiece::table

#endif  // COURTPIECE_TABLE_JSON_H_
