/** The capgate schema, one entry per version; applied in order, each in its own transaction. Never edit a released entry: add one. */
export const MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: "runs, events, approvals, memory, workers",
    sql: `
CREATE TABLE capgate.runs (
  id text PRIMARY KEY,
  goal text NOT NULL,
  profile text,
  kind text NOT NULL DEFAULT 'goal',
  status text NOT NULL CHECK (status IN ('queued', 'running', 'ended')),
  outcome text,
  error text,
  summary text,
  steps integer,
  events integer NOT NULL DEFAULT 0,
  parent_run_id text,
  request jsonb,
  worker text,
  result jsonb,
  queued_at timestamptz,
  started_at timestamptz,
  ended_at timestamptz
);
CREATE INDEX runs_recent ON capgate.runs ((coalesce(started_at, queued_at)) DESC);
CREATE INDEX runs_running ON capgate.runs (worker) WHERE status = 'running';

CREATE TABLE capgate.run_events (
  run_id text NOT NULL,
  seq integer NOT NULL CHECK (seq > 0),
  type text NOT NULL,
  body jsonb NOT NULL,
  time timestamptz NOT NULL,
  PRIMARY KEY (run_id, seq)
);

CREATE TABLE capgate.approvals (
  approval_id text PRIMARY KEY,
  run_id text NOT NULL,
  request jsonb NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'cancelled')),
  reason text,
  requested_at timestamptz NOT NULL DEFAULT now(),
  answered_at timestamptz
);
CREATE INDEX approvals_pending ON capgate.approvals (run_id) WHERE status = 'pending';

CREATE TABLE capgate.memory (
  id text PRIMARY KEY,
  text text NOT NULL,
  tags text[] NOT NULL DEFAULT '{}',
  source text NOT NULL,
  run_id text,
  created_at timestamptz NOT NULL,
  tsv tsvector NOT NULL
);
CREATE INDEX memory_tsv ON capgate.memory USING gin (tsv);
CREATE INDEX memory_recent ON capgate.memory (created_at DESC);

CREATE TABLE capgate.workers (
  id text PRIMARY KEY,
  host text NOT NULL,
  pid integer NOT NULL,
  concurrency integer NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now()
);
`,
  },
  {
    version: 2,
    name: "run_ended is a run's last event; text escaped with the store codec",
    // Works on a database written by earlier versions, which did not enforce the rule: events
    // stored after a run's first run_ended move to run_events_after_end (kept, not deleted),
    // and the runs row is brought back in line with the run_ended that stays. Text columns are
    // read through the store codec from now on, so a U+E000 already in one is escaped first.
    sql: `
CREATE TABLE capgate.run_events_after_end (
  run_id text NOT NULL,
  seq integer NOT NULL,
  type text NOT NULL,
  body jsonb NOT NULL,
  time timestamptz NOT NULL,
  moved_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (run_id, seq)
);

WITH ends AS (
  SELECT run_id, min(seq) AS end_seq FROM capgate.run_events WHERE type = 'run_ended' GROUP BY run_id
), moved AS (
  DELETE FROM capgate.run_events e USING ends
  WHERE e.run_id = ends.run_id AND e.seq > ends.end_seq
  RETURNING e.run_id, e.seq, e.type, e.body, e.time
)
INSERT INTO capgate.run_events_after_end (run_id, seq, type, body, time)
SELECT run_id, seq, type, body, time FROM moved;

UPDATE capgate.runs r SET status = 'ended', outcome = e.body->>'outcome', error = e.body->>'error',
  summary = e.body->>'summary', steps = (e.body->>'steps')::integer, ended_at = e.time, events = e.seq
FROM capgate.run_events e
WHERE e.run_id = r.id AND e.type = 'run_ended'
  AND r.id IN (SELECT DISTINCT run_id FROM capgate.run_events_after_end);

UPDATE capgate.runs SET goal = replace(goal, U&'\\E000', U&'\\E000e000') WHERE strpos(goal, U&'\\E000') > 0;
UPDATE capgate.runs SET profile = replace(profile, U&'\\E000', U&'\\E000e000') WHERE strpos(profile, U&'\\E000') > 0;
UPDATE capgate.runs SET summary = replace(summary, U&'\\E000', U&'\\E000e000') WHERE strpos(summary, U&'\\E000') > 0;
UPDATE capgate.runs SET error = replace(error, U&'\\E000', U&'\\E000e000') WHERE strpos(error, U&'\\E000') > 0;
UPDATE capgate.memory SET text = replace(text, U&'\\E000', U&'\\E000e000') WHERE strpos(text, U&'\\E000') > 0;
UPDATE capgate.memory SET tags = ARRAY(SELECT replace(t, U&'\\E000', U&'\\E000e000') FROM unnest(tags) AS t)
  WHERE strpos(array_to_string(tags, ' '), U&'\\E000') > 0;

CREATE UNIQUE INDEX run_events_one_end ON capgate.run_events (run_id) WHERE type = 'run_ended';

-- Every insert into run_events: nothing after the run's run_ended, and a run_ended only as
-- the last event. Inserts of one run are serialised by a transaction-scoped advisory lock
-- ('cape', run), so two transactions cannot both pass the check (READ COMMITTED: each
-- statement below sees what committed before the lock was granted).
CREATE FUNCTION capgate.run_events_end_last() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  end_seq integer;
  last_seq integer;
BEGIN
  PERFORM pg_advisory_xact_lock(1667330149, hashtext(NEW.run_id));
  -- The same (run_id, seq) again: ON CONFLICT decides (an idempotent retry, or a conflict).
  IF EXISTS (SELECT 1 FROM capgate.run_events WHERE run_id = NEW.run_id AND seq = NEW.seq) THEN
    RETURN NEW;
  END IF;
  SELECT seq INTO end_seq FROM capgate.run_events WHERE run_id = NEW.run_id AND type = 'run_ended';
  IF end_seq IS NOT NULL THEN
    RAISE EXCEPTION USING ERRCODE = 'CG001',
      MESSAGE = format('Refused event ''%s'' (seq %s) of run %s: the run already ended with run_ended (seq %s), which must be its last event.', NEW.type, NEW.seq, NEW.run_id, end_seq);
  END IF;
  IF NEW.type = 'run_ended' THEN
    SELECT max(seq) INTO last_seq FROM capgate.run_events WHERE run_id = NEW.run_id;
    IF last_seq > NEW.seq THEN
      RAISE EXCEPTION USING ERRCODE = 'CG001',
        MESSAGE = format('Refused run_ended (seq %s) of run %s: event %s is already stored after it, and run_ended must be the last event.', NEW.seq, NEW.run_id, last_seq);
    END IF;
  END IF;
  RETURN NEW;
END
$fn$;

CREATE TRIGGER run_events_end_last BEFORE INSERT ON capgate.run_events
  FOR EACH ROW EXECUTE FUNCTION capgate.run_events_end_last();
`,
  },
  {
    version: 3,
    name: "approvals bind to their arguments, expire, and carry their scope and who decided",
    // Rows written before this version have no hash or deadline: they stay answerable as
    // before (a NULL hash matches no sent hash, so only answers without one settle them).
    sql: `
ALTER TABLE capgate.approvals
  ADD COLUMN arguments_hash text,
  ADD COLUMN expires_at timestamptz,
  ADD COLUMN scope text CHECK (scope IN ('once', 'run')),
  ADD COLUMN decided_by text;
ALTER TABLE capgate.approvals DROP CONSTRAINT approvals_status_check;
ALTER TABLE capgate.approvals ADD CONSTRAINT approvals_status_check
  CHECK (status IN ('pending', 'approved', 'denied', 'cancelled', 'expired'));
`,
  },
];

/** The advisory lock namespace of migration 2's trigger ('cape'): one writer of a run's events at a time per transaction. */
export const RUN_EVENTS_LOCK_NS = 0x63617065;

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
