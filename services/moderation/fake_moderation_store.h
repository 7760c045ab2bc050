// FakeModerationStore: an in-memory ModerationStore with the same contract as
// PgModerationStore (moderation_store_contract_test.cc runs one suite against both), for
// unit tests. One mutex makes every call atomic. Times are kept to the microsecond, as in
// Postgres. Failure injection (every call of the interface counts):
//   FailNext(n, status)  the next n calls fail with `status` before doing anything;
//   LoseNextReplies(n)   the next n calls do their work (commit) and then return
//                        Unavailable, like a connection that breaks after COMMIT.
// The one clock read: Gauges().active_mutes counts the mutes active at the clock's time
// (Postgres: the server's now()); every other call takes `now` from the caller.
// Thread-safety: safe for concurrent use (one std::mutex).
#ifndef COURTPIECE_SERVICES_MODERATION_FAKE_MODERATION_STORE_H_
#define COURTPIECE_SERVICES_MODERATION_FAKE_MODERATION_STORE_H_

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "courtpiece/common/clock.h"
#include "services/moderation/moderation_store.h"

namespace courtpiece::moderation {

class FakeModerationStore final : public ModerationStore {
 public:
  FakeModerationStore() : FakeModerationStore(RealClock::Instance()) {}
  // `clock` (for Gauges only) must outlive the store.
  explicit FakeModerationStore(const Clock& clock) : clock_(clock) {}

  absl::StatusOr<NoteRow> InsertNote(const NoteRow& note, const std::string& audio, bool* inserted,
                                     absl::Time deadline) override;
  absl::StatusOr<NoteRow> GetNote(const std::string& note_id, absl::Time deadline) override;
  absl::StatusOr<std::string> GetAudio(const std::string& note_id, absl::Time deadline) override;
  absl::StatusOr<std::optional<NoteRow>> FindNote(const std::string& table_id, uint64_t round,
                                                  const std::string& author,
                                                  absl::Time deadline) override;
  absl::Status DeleteUnannouncedNote(const std::string& note_id, absl::Time deadline) override;

  absl::StatusOr<ReportRow> FileReport(const std::string& key, const std::string& note_id,
                                       const std::string& reporter, absl::Time now, bool* replayed,
                                       absl::Time deadline) override;
  absl::StatusOr<ReportPage> ListReports(const ReportFilter& filter, absl::Time deadline) override;
  absl::StatusOr<ReportRow> GetReport(int64_t report_id, absl::Time deadline) override;
  absl::StatusOr<std::vector<ReportRow>> ReportsOfNote(const std::string& note_id,
                                                       absl::Time deadline) override;
  absl::StatusOr<std::vector<ReportRow>> ReportsOfAuthor(const std::string& author, int limit,
                                                         absl::Time deadline) override;
  absl::StatusOr<Resolved> ResolveReport(const Resolution& resolution,
                                         absl::Time deadline) override;

  absl::StatusOr<std::optional<MuteRow>> ActiveMute(const std::string& player_id, absl::Time now,
                                                    absl::Time deadline) override;
  absl::StatusOr<MuteRow> AddMute(const MuteRow& mute, const AuditRow& audit,
                                  absl::Time deadline) override;
  absl::StatusOr<MuteRow> LiftMute(const std::string& player_id, const std::string& admin_id,
                                   absl::Time now, const AuditRow& audit,
                                   absl::Time deadline) override;
  absl::StatusOr<MutePage> ListMutes(const MuteFilter& filter, absl::Time now,
                                     absl::Time deadline) override;

  absl::Status AppendAudit(const AuditRow& audit, absl::Time deadline) override;
  absl::StatusOr<AuditPage> ListAudit(const AuditFilter& filter, absl::Time deadline) override;

  absl::StatusOr<PurgeResult> Purge(absl::Time now, int batch_max, absl::Time deadline) override;
  absl::StatusOr<StoreGauges> Gauges(absl::Time deadline) override;

  void FailNext(int count, absl::Status status);
  void LoseNextReplies(int count);

  // Test views.
  int Calls() const;  // calls of the interface so far
  std::optional<absl::Time> KeepUntil(const std::string& note_id) const;  // nullopt: held/unknown
  bool HasAudio(const std::string& note_id) const;

 private:
  struct Note {
    NoteRow row;
    std::optional<absl::Time> keep_until;
    std::optional<std::string> audio;  // nullopt once purged
  };
  // Counts the call; the injected failure to return before doing anything, if any.
  absl::Status Enter() /* requires mu_ */;
  // After the work: Unavailable when a lost reply is due.
  absl::Status Leave() /* requires mu_ */;
  bool Reported(const std::string& note_id) const /* requires mu_ */;
  std::optional<MuteRow*> ActiveMuteLocked(const std::string& player_id,
                                           absl::Time now) /* requires mu_ */;
  void AppendAuditLocked(const AuditRow& audit) /* requires mu_ */;
  MuteRow AddMuteLocked(const MuteRow& mute, const std::string& lifted_by) /* requires mu_ */;

  const Clock& clock_;
  // std::mutex, not absl::Mutex: Debian's Abseil is not TSan-instrumented.
  mutable std::mutex mu_;              // guards every member below
  std::map<std::string, Note> notes_;  // by note id
  std::map<int64_t, ReportRow> reports_;
  std::map<int64_t, MuteRow> mutes_;
  std::map<int64_t, AuditRow> audit_;
  int64_t next_report_id_ = 1;
  int64_t next_mute_id_ = 1;
  int64_t next_audit_id_ = 1;
  int fail_next_ = 0;
  absl::Status fail_status_;
  int lose_replies_ = 0;
  int calls_ = 0;
};

}  // namespace courtpiece::moderation

#endif  // COURTPIECE_SERVICES_MODERATION_FAKE_MODERATION_STORE_H_
