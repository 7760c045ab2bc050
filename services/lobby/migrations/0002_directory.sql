-- The directory (docs/lobby.md, "Directory"): the tables the lobby created and their codes.
-- A code has one holder at a time (the primary key of directory_codes); after its table
-- closed it is free again once free_at_ms has passed (the cooling-off period).
CREATE TABLE directory_tables (
  table_id       text PRIMARY KEY,
  code           text NOT NULL CHECK (code ~ '^[0-9]{6}$'),
  host_player    text NOT NULL,
  request_id     text NOT NULL,
  game_options   text NOT NULL,
  bet_coins      bigint NOT NULL,
  turn_time_ms   bigint NOT NULL,
  listed         boolean NOT NULL,
  owner_instance text NOT NULL,
  created_at_ms  bigint NOT NULL,
  closed_at_ms   bigint,  -- NULL while open
  UNIQUE (host_player, request_id)
);
-- ResolveCode's fall-back when Redis does not know a code: the open table holding it.
CREATE INDEX directory_tables_open_code ON directory_tables (code) WHERE closed_at_ms IS NULL;

CREATE TABLE directory_codes (
  code        text PRIMARY KEY CHECK (code ~ '^[0-9]{6}$'),
  table_id    text NOT NULL,
  reserved_at_ms bigint NOT NULL,
  free_at_ms  bigint  -- NULL while its table is open (or being created)
);
CREATE INDEX directory_codes_table ON directory_codes (table_id);
