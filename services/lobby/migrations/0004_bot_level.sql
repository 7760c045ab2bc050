-- A table's bot level (docs/lobby.md "Directory"; docs/bots.md): "easy", "normal" or
-- "strong", as the lobby passes it to the table service. Tables made before it: easy.
ALTER TABLE directory_tables ADD COLUMN bot_level text NOT NULL DEFAULT 'easy'
  CHECK (bot_level IN ('easy', 'normal', 'strong'));
