// moderation_purge_bench: the purge and insert rates of PgModerationStore on a real
// Postgres (not a test). Makes a fresh database (storage::TestDatabase, dropped at the
// end), fills it with --notes due notes of --fill_audio_bytes each by generate_series, a
// --reported_fraction of them reported and resolved (their purge keeps the row and drops
// the audio), times Gauges over the full table, purges half the notes in batches of
// --batch_a and the other half in batches of --batch_b, then times InsertNote with
// --insert_audio_bytes of audio, single-threaded and with --threads threads.
//
//   COURTPIECE_TEST_PG_URL=postgresql://postgres@127.0.0.1:55511/postgres
//     build/bin/moderation_purge_bench --notes=1000000   (one command line)
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "courtpiece/common/process_testing.h"
#include "courtpiece/storage/testing.h"
#include "services/moderation/pg_moderation_store.h"

ABSL_FLAG(int64_t, notes, 1'000'000, "notes to fill and purge");
ABSL_FLAG(int, fill_audio_bytes, 200, "audio bytes of each filled note");
ABSL_FLAG(double, reported_fraction, 0.01, "fraction of filled notes reported and resolved");
ABSL_FLAG(int, batch_a, 1000, "purge batch for the first half");
ABSL_FLAG(int, batch_b, 10000, "purge batch for the second half");
ABSL_FLAG(int, insert_notes, 2000, "notes to insert per insert run");
ABSL_FLAG(int, insert_audio_bytes, 30000, "audio bytes of each inserted note (~7 s of Opus)");
ABSL_FLAG(int, threads, 8, "threads of the concurrent insert run");

namespace courtpiece::moderation {
namespace {

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

int Fail(const absl::Status& s, const char* what) {
  std::fprintf(stderr, "moderation_purge_bench: %s: %s\n", what, s.ToString().c_str());
  return 1;
}

absl::Status Exec(storage::PgPool& pool, const std::string& sql,
                  std::vector<storage::PgParam> params = {}) {
  return pool.Run([&](storage::PgTransaction& tx) { return tx.Exec(sql, params).status(); });
}

// Inserts `count` notes from `first` on `threads` threads; returns notes/s (or -1).
double InsertRun(PgModerationStore& store, int first, int count, int threads, int audio_bytes,
                 std::vector<double>* latencies_ms) {
  const std::string audio(static_cast<size_t>(audio_bytes), '\x5a');
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  std::vector<std::vector<double>> lat(threads);
  const absl::Time start = absl::Now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int i = next++; i < count; i = next++) {
        NoteRow n;
        const int id = first + i;
        n.note_id = absl::StrFormat("n-%032x", id);
        n.table_id = absl::StrFormat("bench-%d", id % 997);
        n.round = static_cast<uint64_t>(id);
        n.author = absl::StrFormat("p-%d", id % 4);
        n.duration_ms = 7000;
        n.format = "webm/opus";
        n.content_type = "audio/webm";
        n.size_bytes = audio_bytes;
        n.created_at = kT0;
        bool inserted = false;
        const absl::Time s = absl::Now();
        if (!store.InsertNote(n, audio, &inserted, absl::Now() + absl::Seconds(30)).ok() ||
            !inserted) {
          ++failed;
        }
        lat[t].push_back(absl::ToDoubleMilliseconds(absl::Now() - s));
      }
    });
  }
  for (std::thread& w : workers) w.join();
  const double secs = absl::ToDoubleSeconds(absl::Now() - start);
  if (failed > 0) return -1;
  for (const auto& l : lat) latencies_ms->insert(latencies_ms->end(), l.begin(), l.end());
  return count / secs;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())))];
}

int Main() {
  const int64_t notes = absl::GetFlag(FLAGS_notes);
  absl::StatusOr<std::unique_ptr<storage::TestDatabase>> db = storage::TestDatabase::Create(
      {.migrations = {
           {"moderation", ::courtpiece::common::SourceDir() + "/services/moderation/migrations"}}});
  if (!db.ok()) return Fail(db.status(), "database");
  storage::PgPoolOptions options = (*db)->PoolOptions();
  options.size_max = std::max(absl::GetFlag(FLAGS_threads), 2);
  options.statement_timeout_ms = 0;  // the fill is one long statement
  options.acquire_timeout_ms = 30000;
  options.application_name = "moderation-purge-bench";
  storage::PgPool pool(options);
  PgModerationStore store(pool);

  // Fill: every note due at kT0 + 7 d (created at kT0 + i ms), every 1/fraction-th one
  // reported and resolved at kT0 (so due then too).
  const int every = std::max(1, static_cast<int>(1.0 / absl::GetFlag(FLAGS_reported_fraction)));
  absl::Time t = absl::Now();
  absl::Status s = Exec(pool,
                        "INSERT INTO moderation.notes (note_id, table_id, round, author, "
                        "duration_ms, format, content_type, size_bytes, created_at, keep_until) "
                        "SELECT 'n-' || lpad(to_hex(i), 32, '0'), 'fill-' || (i % 1000), i, "
                        "'p-' || (i % 4), 3000, 'webm/opus', 'audio/webm', $2, "
                        "$3::timestamptz + i * interval '1 millisecond', "
                        "$3::timestamptz + i * interval '1 millisecond' + interval '7 days' "
                        "FROM generate_series(1, $1::bigint) i",
                        {notes, absl::GetFlag(FLAGS_fill_audio_bytes),
                         absl::FormatTime("%Y-%m-%d %H:%M:%S+00", kT0, absl::UTCTimeZone())});
  if (!s.ok()) return Fail(s, "fill notes");
  s = Exec(pool,
           "INSERT INTO moderation.note_audio (note_id, audio) SELECT note_id, "
           "decode(repeat('5a', size_bytes), 'hex') FROM moderation.notes");
  if (!s.ok()) return Fail(s, "fill audio");
  s = Exec(pool,
           "INSERT INTO moderation.reports (key, note_id, table_id, round, author, reporter, "
           "status, reported_at, resolved_at, resolved_by, resolution_reason) "
           "SELECT 'k-' || round, note_id, table_id, round, author, 'reporter', 2, created_at, "
           "created_at, 'admin', 'fine' FROM moderation.notes WHERE round % $1 = 0",
           {every});
  if (!s.ok()) return Fail(s, "fill reports");
  s = pool.Run(
      [](storage::PgTransaction& tx) { return tx.Exec("ANALYZE moderation.notes").status(); });
  if (!s.ok()) return Fail(s, "analyze");
  std::printf("fill: %lld notes of %d bytes (1 in %d reported) in %.1f s\n",
              static_cast<long long>(notes), absl::GetFlag(FLAGS_fill_audio_bytes), every,
              absl::ToDoubleSeconds(absl::Now() - t));
  // VACUUM (not in a transaction) sets the visibility map for the index-only gauges scan,
  // as autovacuum would in production.
  absl::StatusOr<storage::PgResult> vac = pool.ExecAutocommit("VACUUM moderation.notes");
  if (!vac.ok()) return Fail(vac.status(), "vacuum");

  for (int i = 0; i < 3; ++i) {
    t = absl::Now();
    absl::StatusOr<StoreGauges> g = store.Gauges(absl::Now() + absl::Seconds(60));
    if (!g.ok()) return Fail(g.status(), "gauges");
    std::printf("gauges over %lld notes: %.1f ms\n", static_cast<long long>(g->notes),
                absl::ToDoubleMilliseconds(absl::Now() - t));
  }

  const absl::Time now = kT0 + absl::Hours(24 * 8) + absl::Hours(24);
  for (int half = 0; half < 2; ++half) {
    const int batch = half == 0 ? absl::GetFlag(FLAGS_batch_a) : absl::GetFlag(FLAGS_batch_b);
    const int64_t target = half == 0 ? notes / 2 : notes - notes / 2;
    int64_t done = 0, runs = 0, audio = 0, bytes = 0;
    double slowest_ms = 0;
    t = absl::Now();
    while (done < target) {
      const absl::Time r = absl::Now();
      absl::StatusOr<PurgeResult> p =
          store.Purge(now, static_cast<int>(std::min<int64_t>(batch, target - done)),
                      absl::Now() + absl::Seconds(60));
      if (!p.ok()) return Fail(p.status(), "purge");
      slowest_ms = std::max(slowest_ms, absl::ToDoubleMilliseconds(absl::Now() - r));
      const int64_t n = p->notes_deleted + p->audio_deleted;
      if (n == 0) break;
      done += n;
      audio += p->audio_deleted;
      bytes += p->bytes_freed;
      ++runs;
    }
    const double secs = absl::ToDoubleSeconds(absl::Now() - t);
    std::printf(
        "purge batch %d: %lld notes (%lld reported kept) in %lld runs, %.1f s: %.0f notes/s, "
        "%.1f ms per run (slowest %.1f ms), %.1f MB freed\n",
        batch, static_cast<long long>(done), static_cast<long long>(audio),
        static_cast<long long>(runs), secs, static_cast<double>(done) / secs,
        secs * 1000 / static_cast<double>(std::max<int64_t>(runs, 1)), slowest_ms,
        static_cast<double>(bytes) / 1e6);
  }

  const int count = absl::GetFlag(FLAGS_insert_notes);
  const int audio_bytes = absl::GetFlag(FLAGS_insert_audio_bytes);
  int first = static_cast<int>(notes) + 1;
  for (int threads : {1, absl::GetFlag(FLAGS_threads)}) {
    std::vector<double> lat;
    const double rate = InsertRun(store, first, count, threads, audio_bytes, &lat);
    if (rate < 0) return Fail(absl::InternalError("an insert failed"), "insert");
    std::printf(
        "insert %d notes of %d bytes, %d thread(s): %.0f notes/s, p50 %.2f ms, p99 %.2f ms\n",
        count, audio_bytes, threads, rate, Percentile(lat, 0.5), Percentile(lat, 0.99));
    first += count;
  }
  return 0;
}

}  // namespace
}  // namespace courtpiece::moderation

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return courtpiece::moderation::Main();
}
