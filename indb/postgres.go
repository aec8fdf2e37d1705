package indb

import "strings"

// pgIdentity is the database's identity as PostgreSQL tells it: the cluster's
// system identifier and the database's oid. A template copy gets another oid, a
// restore into another cluster another system identifier; a promoted streaming
// replica keeps both, as it should (it is the same database).
const pgIdentity = `SELECT (SELECT system_identifier::text FROM pg_catalog.pg_control_system()) || '/' ||
	(SELECT oid::text FROM pg_catalog.pg_database WHERE datname = pg_catalog.current_database())`

const pgState = `CREATE TABLE IF NOT EXISTS {S}.{STATE} (
	function_name text PRIMARY KEY,
	layout        text   NOT NULL,
	node          text   NOT NULL,
	lease_store   text   NOT NULL DEFAULT '',
	lease_scope   text   NOT NULL DEFAULT '',
	lease_value   bigint NOT NULL DEFAULT -1,
	lease_owner   text   NOT NULL DEFAULT '',
	lease_token   text   NOT NULL DEFAULT '',
	targets       text   NOT NULL DEFAULT '',
	identity      text   NOT NULL,
	database_name text   NOT NULL,
	token         text   NOT NULL,
	installed_ms  bigint NOT NULL,
	until_ms      bigint NOT NULL DEFAULT 0
)`

// pgRaise moves the counter to at least {START} (the tick after the lease's
// mark) under the same protocol as the function's own moves.
const pgRaise = `DO $flurry$
DECLARE
	j bigint;
	d bigint;
BEGIN
	PERFORM pg_catalog.pg_advisory_lock({KEY});
	j := coalesce(pg_catalog.pg_sequence_last_value('{S}.{SEQJUMP}'::regclass), 0);
	IF j % 2 = 0 THEN
		j := j + 1;
		PERFORM pg_catalog.setval('{S}.{SEQJUMP}'::regclass, j, true);
	END IF;
	d := pg_catalog.nextval('{S}.{SEQ}'::regclass);
	IF d < {START} THEN
		PERFORM pg_catalog.setval('{S}.{SEQ}'::regclass, {START}, false);
	END IF;
	PERFORM pg_catalog.setval('{S}.{SEQJUMP}'::regclass, j + 1, true);
	PERFORM pg_catalog.pg_advisory_unlock({KEY});
END
$flurry$`

const pgIdentFunc = `CREATE OR REPLACE FUNCTION {S}.{IDENT}() RETURNS text
LANGUAGE sql STABLE SECURITY DEFINER SET search_path = pg_catalog, pg_temp AS $flurry$
` + pgIdentity + `
$flurry$`

const pgStateRow = `INSERT INTO {S}.{STATE} (function_name, layout, node, lease_store, lease_scope, lease_value, lease_owner, lease_token, targets, identity, database_name, token, installed_ms, until_ms)
VALUES ('{F}', {LAYOUT}, {NODELIT}, {LSTORE}, {LSCOPE}, {LVALUE}, {LOWNER}, {LTOKEN}, {TARGETS}, {S}.{IDENT}(), pg_catalog.current_database(), '{TOKEN}',
	floor(date_part('epoch', clock_timestamp()) * 1000)::bigint, {ENDMS})
ON CONFLICT (function_name) DO NOTHING`

// pgStateUpdate records a reinstall, only in the database the function was first
// installed in: in a copy the row keeps the original's identity, and the
// function refuses.
const pgStateUpdate = `UPDATE {S}.{STATE} SET layout = {LAYOUT}, node = {NODELIT},
	lease_store = CASE WHEN {LTOKEN} = '' THEN lease_store ELSE {LSTORE} END,
	lease_scope = CASE WHEN {LTOKEN} = '' THEN lease_scope ELSE {LSCOPE} END,
	lease_value = CASE WHEN {LTOKEN} = '' THEN lease_value ELSE {LVALUE} END,
	lease_owner = CASE WHEN {LTOKEN} = '' THEN lease_owner ELSE {LOWNER} END,
	lease_token = CASE WHEN {LTOKEN} = '' THEN lease_token ELSE {LTOKEN} END,
	targets = {TARGETS}, database_name = pg_catalog.current_database(), token = '{TOKEN}', until_ms = {ENDMS}
WHERE function_name = '{F}' AND identity = {S}.{IDENT}()`

// pgFunc is the function. See the package documentation for the protocol; the
// names: x is this call's slot, k its tick, t the clock's tick, ms the clock in
// Unix milliseconds, j1 and j2 the move sequence before and after the nextval.
//
// A call keeps its slot when no move overlapped its nextval (j1 = j2, even) and
// the slot is not behind the clock. Otherwise it either moves the counter itself
// (it is behind the clock, or a move was left unfinished by a session that
// died), under the exclusive advisory lock, and takes the first slot of the move,
// or waits for the move that overlapped its nextval to end (the shared lock) and
// tries again. Only one session moves the counter into a tick; the others find
// it moved and take their slots without the lock.
const pgFunc = `CREATE OR REPLACE FUNCTION {S}.{F}() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $flurry$
-- Made by flurry sql: layout {LAYOUTTEXT}; node {NODETEXT}. Replace it with
-- flurry sql install, remove it with flurry sql uninstall (docs/in-database.md).
DECLARE
	x bigint;
	k bigint;
	t bigint;
	ms bigint;
	j1 bigint;
	j2 bigint;
	gap bigint;
	waited bigint := 0;
	tries int := 0;
	moved boolean := false;
	live text;
	rec text;
BEGIN
	IF current_setting('flurry.ok_{F}', true) IS DISTINCT FROM '{TOKEN}' THEN
		live := {S}.{IDENT}();
		SELECT identity INTO rec FROM {S}.{STATE} WHERE function_name = '{F}';
		IF rec IS NULL THEN
			RAISE EXCEPTION USING ERRCODE = 'FL002', MESSAGE = '{F}: no row for it in {S}.{STATE}; install it with flurry sql install';
		END IF;
		IF rec <> live THEN
			RAISE EXCEPTION USING ERRCODE = 'FL002',
				MESSAGE = format('{F}: this database (system/oid %s) is a copy of the one the function was installed in (%s), whose node value ({NODETEXT}) it must not use', live, rec),
				HINT = 'Run flurry sql install --new-node on this database to lease it a node value of its own.';
		END IF;
		PERFORM set_config('flurry.ok_{F}', '{TOKEN}', false);
	END IF;
	LOOP
		j1 := pg_catalog.pg_sequence_last_value('{S}.{SEQJUMP}'::regclass);
		x := pg_catalog.nextval('{S}.{SEQ}'::regclass);
		j2 := pg_catalog.pg_sequence_last_value('{S}.{SEQJUMP}'::regclass);
		ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint{OFFSET};
		IF ms < {EPOCH} OR ms >= {ENDMS} THEN
			RAISE EXCEPTION USING ERRCODE = 'FL003', MESSAGE = format('{F}: the database clock (%s) is outside the layout''s time field or the node value''s lease (until {END})', to_timestamp(ms / 1000.0));
		END IF;
		t := (ms - {EPOCH}) / {UNIT};
		k := x >> {SEQBITS};
		EXIT WHEN k >= t AND j1 IS NOT DISTINCT FROM j2 AND coalesce(j1, 0) % 2 = 0;
		tries := tries + 1;
		IF tries > 1000 THEN
			RAISE EXCEPTION USING ERRCODE = 'FL004', MESSAGE = '{F}: moves of the counter overlapped this call 1000 times';
		END IF;
		IF k < t OR coalesce(pg_catalog.pg_sequence_last_value('{S}.{SEQJUMP}'::regclass), 0) % 2 = 1 THEN
			-- Move the counter to the clock's tick, unless another session did
			-- meanwhile; finish a move a session left unfinished.
			BEGIN
				-- Taken inside the block, so that a cancel right after it still
				-- reaches the handler; unlocking a lock not held only warns.
				PERFORM pg_catalog.pg_advisory_lock({KEY});
				j1 := coalesce(pg_catalog.pg_sequence_last_value('{S}.{SEQJUMP}'::regclass), 0);
				ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint{OFFSET};
				t := (greatest(ms, {EPOCH}) - {EPOCH}) / {UNIT};
				IF j1 % 2 = 1 OR (SELECT last_value FROM {S}.{SEQ}) >> {SEQBITS} < t THEN
					IF j1 % 2 = 0 THEN
						j1 := j1 + 1;
						PERFORM pg_catalog.setval('{S}.{SEQJUMP}'::regclass, j1, true);
					END IF;
					-- The mover's own slot: no session keeps one taken before j1
					-- went odd above it, or one taken during the move.
					x := pg_catalog.nextval('{S}.{SEQ}'::regclass);{MOVEDELAY}
					IF x >> {SEQBITS} < t THEN
						x := t << {SEQBITS};
						PERFORM pg_catalog.setval('{S}.{SEQ}'::regclass, x, true);
					END IF;
					PERFORM pg_catalog.setval('{S}.{SEQJUMP}'::regclass, j1 + 1, true);
					moved := true;
				END IF;
				PERFORM pg_catalog.pg_advisory_unlock({KEY});
			EXCEPTION
				WHEN query_canceled THEN
					PERFORM pg_catalog.pg_advisory_unlock({KEY});
					RAISE;
				WHEN OTHERS THEN
					PERFORM pg_catalog.pg_advisory_unlock({KEY});
					RAISE;
			END;
			IF moved THEN
				k := x >> {SEQBITS};
				EXIT;
			END IF;
		ELSE
			-- A move overlapped this call's nextval: wait for it to end.
			BEGIN
				PERFORM pg_catalog.pg_advisory_lock_shared({KEY});
				PERFORM pg_catalog.pg_advisory_unlock_shared({KEY});
			EXCEPTION
				WHEN query_canceled THEN
					PERFORM pg_catalog.pg_advisory_unlock_shared({KEY});
					RAISE;
			END;
		END IF;
	END LOOP;
	-- The slot is this call's. Ahead of the clock (its tick's sequence values ran
	-- out, or the clock is behind the last issued tick), it is returned once the
	-- clock has reached its tick.
	WHILE k > t LOOP
		gap := {EPOCH} + k * {UNIT} - ms;
		IF waited + gap > {MAXWAIT} THEN
			RAISE EXCEPTION USING ERRCODE = 'FL001',
				MESSAGE = format('{F}: the database clock is %s ms behind the last issued ID''s tick; a call waits at most {MAXWAIT} ms', gap),
				HINT = 'Fix the clock (NTP); calls succeed again once it has passed the last issued tick.';
		END IF;
		PERFORM pg_catalog.pg_sleep(gap / 1000.0);
		waited := waited + gap;
		ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint{OFFSET};
		t := (greatest(ms, {EPOCH}) - {EPOCH}) / {UNIT};
	END LOOP;
	IF k > {MAXTICK} THEN
		RAISE EXCEPTION USING ERRCODE = 'FL003', MESSAGE = '{F}: the layout''s time field has run out';
	END IF;
	RETURN (k << {TSHIFT}) | ((x & {SEQMASK}) << {SSHIFT}) | {NODE};
END
$flurry$`

const pgOffset = ` + coalesce(nullif(current_setting('flurry.test_clock_offset_ms', true), '')::bigint, 0)`

// pgMoveDelay makes a move last longer in tests (Options.TestClock), so that
// other sessions take slots while it is under way.
const pgMoveDelay = `
					PERFORM pg_catalog.pg_sleep(coalesce(nullif(current_setting('flurry.test_move_delay_ms', true), '')::numeric, 0) / 1000);`

// pgQuote quotes an identifier.
func pgQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (p *plan) postgres() Script {
	offset, delay := "", ""
	if p.o.TestClock {
		offset, delay = pgOffset, pgMoveDelay
	}
	r := p.replacer("{S}", pgQuote(p.schema), "{SEQ}", p.seq, "{SEQJUMP}", p.jump, "{IDENT}", p.ident, "{OFFSET}", offset, "{MOVEDELAY}", delay)
	s := Script{Engine: Postgres}
	add := func(t string) { s.Install = append(s.Install, r.Replace(t)) }
	add(pgState)
	add(`CREATE SEQUENCE IF NOT EXISTS {S}.{SEQ} AS bigint MINVALUE 0 START WITH {START} CACHE 1 NO CYCLE`)
	add(`CREATE SEQUENCE IF NOT EXISTS {S}.{SEQJUMP} AS bigint MINVALUE 0 START WITH 0 CACHE 1 NO CYCLE`)
	if p.start > 0 {
		add(pgRaise)
	}
	add(pgIdentFunc)
	add(pgStateRow)
	add(pgStateUpdate)
	add(pgFunc)
	for _, t := range p.o.Targets {
		add(`ALTER TABLE ` + pgQuote(t.Table) + ` ALTER COLUMN ` + pgQuote(t.Column) + ` SET DEFAULT {S}.{F}()`)
	}
	for _, g := range p.o.Grants {
		add(`GRANT SELECT ON {S}.{STATE} TO ` + pgQuote(g))
		add(`GRANT USAGE, SELECT, UPDATE ON SEQUENCE {S}.{SEQ}, {S}.{SEQJUMP} TO ` + pgQuote(g))
	}
	del := func(t string) { s.Uninstall = append(s.Uninstall, r.Replace(t)) }
	for _, t := range p.o.Targets {
		del(`ALTER TABLE IF EXISTS ` + pgQuote(t.Table) + ` ALTER COLUMN ` + pgQuote(t.Column) + ` DROP DEFAULT`)
	}
	del(`DROP FUNCTION IF EXISTS {S}.{F}()`)
	del(`DROP FUNCTION IF EXISTS {S}.{IDENT}()`)
	del(`DROP SEQUENCE IF EXISTS {S}.{SEQ}, {S}.{SEQJUMP}`)
	del(`DELETE FROM {S}.{STATE} WHERE function_name = '{F}'`)
	return s
}
