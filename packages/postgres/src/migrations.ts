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
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
