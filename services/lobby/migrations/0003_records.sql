-- Records and stats (docs/lobby.md "Records and stats"): what table instances record with
-- LobbyRecords, and the per-player stats derived from it. Independent of the other lobby
-- parts' tables (no foreign keys to them). Every record is applied in ONE transaction
-- together with its row in record_keys, whose primary key makes it idempotent by key.
CREATE SCHEMA IF NOT EXISTS lobby;

-- One row per applied record key; content_hash is the SHA-256 of the record's canonical
-- content: the same key with another hash is refused (ALREADY_EXISTS).
CREATE TABLE lobby.record_keys (
  key            text PRIMARY KEY COLLATE "C",
  kind           text NOT NULL CHECK (kind IN ('game', 'quit', 'round', 'closed')),
  content_hash   text NOT NULL,
  recorded_at_ms bigint NOT NULL
);

-- Every recorded game, counting or not (RULES.md 4.12 decides only what reaches the stats).
CREATE TABLE lobby.record_games (
  table_id         text NOT NULL COLLATE "C",
  game_no          bigint NOT NULL,
  game             text NOT NULL,
  counts_for_stats boolean NOT NULL,
  ended_early      boolean NOT NULL,
  winning_team     int NOT NULL CHECK (winning_team BETWEEN -1 AND 1),
  scores           int[] NOT NULL CHECK (cardinality(scores) = 2),
  courts           int[] NOT NULL CHECK (cardinality(courts) = 2),
  goon_courts      int[] NOT NULL CHECK (cardinality(goon_courts) = 2),
  recorded_at_ms   bigint NOT NULL,
  PRIMARY KEY (table_id, game_no)
);

-- The people of each game (recent results per player, newest first by id).
CREATE TABLE lobby.record_game_players (
  id        bigserial PRIMARY KEY,
  player_id text NOT NULL COLLATE "C",
  table_id  text NOT NULL COLLATE "C",
  game_no   bigint NOT NULL,
  seat      int NOT NULL CHECK (seat BETWEEN 0 AND 3),
  won       boolean NOT NULL,
  FOREIGN KEY (table_id, game_no) REFERENCES lobby.record_games (table_id, game_no),
  UNIQUE (table_id, game_no, seat)
);
CREATE INDEX record_game_players_by_player ON lobby.record_game_players (player_id, id DESC);

CREATE TABLE lobby.record_quits (
  id             bigserial PRIMARY KEY,
  player_id      text NOT NULL COLLATE "C",
  table_id       text NOT NULL COLLATE "C",
  game_no        bigint NOT NULL,
  game           text NOT NULL,
  recorded_at_ms bigint NOT NULL,
  UNIQUE (table_id, game_no, player_id)
);
CREATE INDEX record_quits_by_player ON lobby.record_quits (player_id, id DESC);

-- Round seeds: the dispute audit trail.
CREATE TABLE lobby.record_rounds (
  table_id       text NOT NULL COLLATE "C",
  round          bigint NOT NULL CHECK (round >= 1),
  seed_hex       text NOT NULL,
  result         text NOT NULL,
  seed_only_to   int NOT NULL CHECK (seed_only_to BETWEEN -1 AND 3),
  recorded_at_ms bigint NOT NULL,
  PRIMARY KEY (table_id, round)
);

CREATE TABLE lobby.record_tables_closed (
  table_id     text PRIMARY KEY COLLATE "C",
  closed_at_ms bigint NOT NULL
);

-- Per player and game type; only games that count add to played/won/lost/courts.
CREATE TABLE lobby.player_stats (
  player_id   text NOT NULL COLLATE "C",
  game        text NOT NULL COLLATE "C",
  played      bigint NOT NULL DEFAULT 0 CHECK (played >= 0),
  won         bigint NOT NULL DEFAULT 0 CHECK (won >= 0),
  lost        bigint NOT NULL DEFAULT 0 CHECK (lost >= 0),
  quits       bigint NOT NULL DEFAULT 0 CHECK (quits >= 0),
  courts      bigint NOT NULL DEFAULT 0 CHECK (courts >= 0),
  goon_courts bigint NOT NULL DEFAULT 0 CHECK (goon_courts >= 0),
  PRIMARY KEY (player_id, game)
);
