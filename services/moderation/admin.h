// ModerationAdmin: the decisions of the admin moderation API (docs/moderation.md "Admin
// API"): the report queue, one report with its context, resolving, mutes and the audit log.
// The caller is already known to be an admin (the server's CallerAuth::RequireAdmin); its id
// and its `authorization` header value (forwarded to the lobby) come in with each call.
//
// Contract: INVALID_ARGUMENT "bad_request: ..." for a malformed request (action unset, reason
// not 1..500 characters, mute_for_ms outside 60,000..31,536,000,000, a bad page token or
// player id); the store's NOT_FOUND / FAILED_PRECONDITION (no_report, already_resolved,
// not_muted) as they are. Page sizes: 0 -> 50, otherwise clamped to 1..200. Every change, and
// GetReport returning audio, writes an audit row; the audio is returned only once its audit
// row is committed. The lobby's part of GetReport is best effort (lobby_error says why it is
// missing); everything else failing fails the call.
// Thread-safety: thread-safe (no state of its own).
#ifndef COURTPIECE_SERVICES_MODERATION_ADMIN_H_
#define COURTPIECE_SERVICES_MODERATION_ADMIN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "courtpiece/common/clock.h"
#include "services/moderation/lobby_port.h"
#include "services/moderation/moderation_store.h"

namespace courtpiece::moderation {

inline constexpr int kPageSizeDefault = 50;
inline constexpr int kPageSizeMax = 200;
inline constexpr int kReasonCharsMax = 500;
inline constexpr int64_t kMuteForMsMin = 60'000;          // 1 minute
inline constexpr int64_t kMuteForMsMax = 31'536'000'000;  // 365 days
inline constexpr int kAuthorReportsMax = 50;
inline constexpr int kAuthorQuitsMax = 20;

enum class AdminAction { kUnspecified = 0, kDismiss = 1, kMuteFor = 2, kMuteUntilLifted = 3 };

// Who is calling: the admin's id and the `authorization` value to forward to the lobby.
struct AdminCaller {
  std::string admin_id;
  std::string authorization;
};

struct ReportContextResult {
  ReportRow report;
  NoteRow note;
  std::string audio;                      // empty when purged
  std::vector<ReportRow> note_reports;    // oldest first
  std::vector<ReportRow> author_reports;  // the author's reports on other notes, newest first
  std::string author_name;
  int64_t author_quits_total = 0;
  std::vector<LobbyQuit> author_quits;
  std::string lobby_error;
  std::optional<MuteRow> author_mute;
};

struct ResolveRequest {
  std::string report_id;
  AdminAction action = AdminAction::kUnspecified;
  int64_t mute_for_ms = 0;
  std::string reason;
};

struct MuteRequest {
  std::string player_id;
  int64_t mute_for_ms = 0;  // 0: until lifted
  std::string reason;
};

// The page size a request asks for, as the store takes it.
int ClampPageSize(int requested);
// The number of UTF-8 code points of `text` (a reason's "characters").
int Utf8Chars(const std::string& text);
// "dismiss", "mute_for <ms> ms", "mute_until_lifted".
std::string ActionDetail(AdminAction action, int64_t mute_for_ms);

class ModerationAdmin {
 public:
  // Every reference must outlive the ModerationAdmin.
  ModerationAdmin(ModerationStore& store, LobbyPort& lobby, const Clock& clock);

  absl::StatusOr<ReportPage> ListReports(ReportFilter filter, absl::Time deadline);
  absl::StatusOr<ReportContextResult> GetReport(const AdminCaller& caller,
                                                const std::string& report_id, absl::Time deadline);
  absl::StatusOr<Resolved> ResolveReport(const AdminCaller& caller, const ResolveRequest& request,
                                         absl::Time deadline);
  absl::StatusOr<MuteRow> MutePlayer(const AdminCaller& caller, const MuteRequest& request,
                                     absl::Time deadline);
  absl::StatusOr<MutePage> ListMutes(MuteFilter filter, absl::Time deadline);
  absl::StatusOr<MuteRow> LiftMute(const AdminCaller& caller, const std::string& player_id,
                                   const std::string& reason, absl::Time deadline);
  absl::StatusOr<AuditPage> ListAudit(AuditFilter filter, absl::Time deadline);

 private:
  absl::Status CheckDeadline(absl::Time deadline) const;
  // The lobby's part of a report's context; failures end up in lobby_error.
  void AddLobbyContext(const AdminCaller& caller, ReportContextResult& out, absl::Time deadline);

  ModerationStore& store_;
  LobbyPort& lobby_;
  const Clock& clock_;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_ADMIN_H_
