-- The moderation service's state (docs/moderation.md "Storage" and "Storage as built"):
-- voice notes and their audio, reports, mutes and the append-only audit log.
-- Times are timestamptz (microseconds); the store reads them back with moderation.us().
CREATE SCHEMA IF NOT EXISTS moderation;

-- Microseconds since the Unix epoch, exact (extract returns numeric). IMMUTABLE SQL:
-- inlined by the planner, so it costs nothing over writing the expression out.
CREATE FUNCTION moderation.us(t timestamptz) RETURNS bigint
  LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
  AS $$ SELECT (extract(epoch FROM t) * 1000000)::bigint $$;

-- One row per stored note, kept after its audio is purged when it was reported (the admin
-- history). keep_until: when the purge may take it; NULL while a report on it is open
-- (held). purged: the audio row is gone (then purged_at says when).
CREATE TABLE moderation.notes (
  note_id      text PRIMARY KEY COLLATE "C" CHECK (note_id ~ '^n-[0-9a-f]{32}$'),
  table_id     text NOT NULL COLLATE "C" CHECK (char_length(table_id) BETWEEN 1 AND 128),
  round        bigint NOT NULL CHECK (round >= 0),
  author       text NOT NULL COLLATE "C" CHECK (char_length(author) BETWEEN 1 AND 128),
  -- The domain enforces 7 s + 500 ms; the column only refuses nonsense.
  duration_ms  integer NOT NULL CHECK (duration_ms BETWEEN 0 AND 60000),
  format       text NOT NULL CHECK (char_length(format) BETWEEN 1 AND 32),
  content_type text NOT NULL CHECK (char_length(content_type) BETWEEN 1 AND 128),
  size_bytes   integer NOT NULL CHECK (size_bytes BETWEEN 1 AND 524288),  -- 512 KiB cap
  created_at   timestamptz NOT NULL,
  keep_until   timestamptz,
  purged       boolean NOT NULL DEFAULT false,
  purged_at    timestamptz,
  CHECK (purged = (purged_at IS NOT NULL)),
  -- One note per author per round (RULES.md §5.1); an upload retry finds the stored one.
  UNIQUE (table_id, round, author)
);
-- The purge's scan: keep_until <= now ORDER BY keep_until LIMIT n over the notes that still
-- have audio. Held notes (keep_until NULL) are never reached by the range condition.
CREATE INDEX notes_due ON moderation.notes (keep_until) WHERE NOT purged;

-- The gauges' count and byte sum of notes with audio, maintained by statement triggers on
-- notes: a scan of a week of notes costs ~0.5 s per million (measured), a gauge read should
-- not. 16 slots, each statement updates the slot of its backend (pg_backend_pid() % 16), so
-- concurrent inserts rarely wait for each other and a statement locks one slot only (no
-- deadlock between two purges). Reading: sum over the 16 rows.
CREATE TABLE moderation.note_counters (
  slot        smallint PRIMARY KEY CHECK (slot BETWEEN 0 AND 15),
  notes       bigint NOT NULL DEFAULT 0,
  audio_bytes bigint NOT NULL DEFAULT 0
);
INSERT INTO moderation.note_counters (slot) SELECT generate_series(0, 15);

CREATE FUNCTION moderation.count_notes(d_notes bigint, d_bytes bigint) RETURNS void
  LANGUAGE sql AS $$
  UPDATE moderation.note_counters SET notes = notes + d_notes, audio_bytes = audio_bytes + d_bytes
    WHERE slot = pg_backend_pid() % 16 AND (d_notes <> 0 OR d_bytes <> 0)
$$;
CREATE FUNCTION moderation.notes_counted_insert() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM moderation.count_notes(count(*), coalesce(sum(size_bytes), 0))
    FROM new_rows WHERE NOT purged;
  RETURN NULL;
END $$;
CREATE FUNCTION moderation.notes_counted_delete() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM moderation.count_notes(-count(*), -coalesce(sum(size_bytes), 0))
    FROM old_rows WHERE NOT purged;
  RETURN NULL;
END $$;
CREATE FUNCTION moderation.notes_counted_update() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM moderation.count_notes(
    (SELECT count(*) FROM new_rows WHERE NOT purged) - (SELECT count(*) FROM old_rows WHERE NOT purged),
    (SELECT coalesce(sum(size_bytes), 0) FROM new_rows WHERE NOT purged)
      - (SELECT coalesce(sum(size_bytes), 0) FROM old_rows WHERE NOT purged));
  RETURN NULL;
END $$;
CREATE TRIGGER notes_counted_insert AFTER INSERT ON moderation.notes
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION moderation.notes_counted_insert();
CREATE TRIGGER notes_counted_delete AFTER DELETE ON moderation.notes
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
  EXECUTE FUNCTION moderation.notes_counted_delete();
CREATE TRIGGER notes_counted_update AFTER UPDATE ON moderation.notes
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
  EXECUTE FUNCTION moderation.notes_counted_update();

-- The audio, apart from the metadata: the purge of a reported note deletes this row and
-- keeps the note. STORAGE EXTERNAL: out of line (TOAST) without pglz, since Opus and AAC do
-- not compress and trying costs CPU on every insert.
CREATE TABLE moderation.note_audio (
  note_id text PRIMARY KEY COLLATE "C"
          REFERENCES moderation.notes (note_id) ON DELETE CASCADE,
  audio   bytea NOT NULL CHECK (length(audio) BETWEEN 1 AND 524288)
);
ALTER TABLE moderation.note_audio ALTER COLUMN audio SET STORAGE EXTERNAL;

-- Reports of a note. table_id, round and author are copied from the note, so the admin
-- queue's filters and the author's history need no join. The FK has no cascade: a
-- reported note is never deleted (the purge keeps its row), and this makes it so.
CREATE TABLE moderation.reports (
  report_id         bigserial PRIMARY KEY,
  key               text NOT NULL UNIQUE COLLATE "C" CHECK (char_length(key) BETWEEN 1 AND 200),
  note_id           text NOT NULL COLLATE "C" REFERENCES moderation.notes (note_id),
  table_id          text NOT NULL COLLATE "C",
  round             bigint NOT NULL CHECK (round >= 0),
  author            text NOT NULL COLLATE "C",
  reporter          text NOT NULL COLLATE "C" CHECK (char_length(reporter) BETWEEN 1 AND 128),
  status            smallint NOT NULL DEFAULT 1 CHECK (status IN (1, 2, 3)),  -- open, dismissed, actioned
  reported_at       timestamptz NOT NULL,
  resolved_at       timestamptz,
  resolved_by       text NOT NULL DEFAULT '',
  resolution_reason text NOT NULL DEFAULT '' CHECK (char_length(resolution_reason) <= 500),
  CHECK ((status = 1) = (resolved_at IS NULL)),
  -- A person reports a note once; the UNIQUE's index also serves "reports of a note".
  UNIQUE (note_id, reporter)
);
-- The admin queue: status filter, oldest first, keyset paging by report_id; also the open
-- count and the oldest open report for the gauges.
CREATE INDEX reports_queue ON moderation.reports (status, report_id);
-- The author filter of the queue and the author's history (newest first).
CREATE INDEX reports_author ON moderation.reports (author, report_id);

-- Mutes. Active at `now`: lifted_at IS NULL AND (until IS NULL OR until > now). The store
-- keeps at most one active mute per player (adding one lifts the active one, under a
-- per-player advisory lock); the time part cannot go into an index predicate, so the
-- partial index holds the not-lifted ones and the query checks `until`.
CREATE TABLE moderation.mutes (
  mute_id    bigserial PRIMARY KEY,
  player_id  text NOT NULL COLLATE "C" CHECK (char_length(player_id) BETWEEN 1 AND 128),
  created_at timestamptz NOT NULL,
  until      timestamptz,  -- NULL: until lifted
  muted_by   text NOT NULL CHECK (char_length(muted_by) BETWEEN 1 AND 128),
  reason     text NOT NULL CHECK (char_length(reason) BETWEEN 1 AND 500),
  report_id  bigint REFERENCES moderation.reports (report_id),
  lifted_at  timestamptz,
  lifted_by  text NOT NULL DEFAULT '',
  CHECK (until IS NULL OR until > created_at),
  CHECK ((lifted_at IS NULL) = (lifted_by = ''))
);
CREATE INDEX mutes_not_lifted ON moderation.mutes (player_id, mute_id) WHERE lifted_at IS NULL;
-- The admin list by player, newest first (lifted ones included).
CREATE INDEX mutes_player ON moderation.mutes (player_id, mute_id);

-- Every admin change and every listen. Append-only: the trigger refuses UPDATE and DELETE
-- even from our own SQL (TRUNCATE is not row-level: the role that runs the service should
-- not own the table in production; see docs/moderation.md).
CREATE TABLE moderation.audit (
  audit_id      bigserial PRIMARY KEY,
  admin_id      text NOT NULL COLLATE "C" CHECK (char_length(admin_id) BETWEEN 1 AND 128),
  action        text NOT NULL CHECK (action ~ '^[a-z_]{1,32}$'),
  target_player text NOT NULL DEFAULT '' COLLATE "C",
  report_id     bigint,  -- no FK: the log must outlive anything it names
  note_id       text NOT NULL DEFAULT '' COLLATE "C",
  reason        text NOT NULL DEFAULT '' CHECK (char_length(reason) <= 500),
  detail        text NOT NULL DEFAULT '' CHECK (char_length(detail) <= 2000),
  at            timestamptz NOT NULL
);
CREATE INDEX audit_admin ON moderation.audit (admin_id, audit_id);
CREATE INDEX audit_target ON moderation.audit (target_player, audit_id);

CREATE FUNCTION moderation.audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'moderation.audit is append-only';
END $$;
CREATE TRIGGER audit_append_only BEFORE UPDATE OR DELETE ON moderation.audit
  FOR EACH ROW EXECUTE FUNCTION moderation.audit_append_only();
