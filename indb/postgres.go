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

// pgRaise moves the counter to at least {CSTART} (the tick after the lease's
// mark) under the same lock as the function's own moves. An install made before
// the counter had guard zones left its slots (tick << seqBits | seq) in the
// sequence {SEQ}: that sequence is first locked against its function's calls (the
// ALTER waits for every transaction that took a slot) and the counter starts
// after its last tick; install drops it once the new function is in place.
const pgRaise = `DO $flurry$
DECLARE
	s bigint := {CSTART};
	x bigint;
BEGIN
	IF pg_catalog.to_regclass('{S}.{SEQ}') IS NOT NULL THEN
		EXECUTE 'ALTER SEQUENCE {S}.{SEQ} NO CYCLE';
		s := greatest(s, ((coalesce(pg_catalog.pg_sequence_last_value('{S}.{SEQ}'::regclass), 0) >> {SEQBITS}) + 1) << {CTICK});
	END IF;
	PERFORM pg_catalog.pg_advisory_lock({KEY});
	x := pg_catalog.nextval('{S}.{CTR}'::regclass);
	IF x < s THEN
		PERFORM pg_catalog.setval('{S}.{CTR}'::regclass, s, false);
	END IF;
	PERFORM pg_catalog.pg_advisory_unlock({KEY});
END
$flurry$`

// pgZoneCheck refuses a server whose backends could cross a guard zone: each
// takes at most two slots of a zone before it waits for the move's lock
// (MaxBackends as PostgreSQL counts it). Emitted only for layouts whose zone is
// smaller than minZone.
const pgZoneCheck = `IF {ZONE} <= 2 * (current_setting('max_connections')::bigint + current_setting('autovacuum_max_workers')::bigint
		+ current_setting('max_worker_processes')::bigint + current_setting('max_wal_senders')::bigint + 1) + 1 THEN
		RAISE EXCEPTION USING ERRCODE = 'FL005',
			MESSAGE = '{F}: the layout leaves {ZONE} spare counter values per tick, too few for this server''s max_connections and workers (two per backend)',
			HINT = 'Lower max_connections, or use a layout with fewer time or sequence bits (flurry sql emit shows the function).';
	END IF;`

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

// pgFunc is the function: one SQL expression, which PostgreSQL inlines into the
// statement that calls it (a LANGUAGE sql function whose body is a single SELECT
// of an expression), so that the common call costs about what nextval() and the
// clock cost. It takes the next slot of the counter; when the slot is in the
// clock's tick (not in the tick's guard zone) and this session has checked the
// database's identity, it returns the ID made of the slot (currval: the slot this
// expression just took); otherwise the slow path does everything else. The slot the
// expression took is then skipped: the slow path takes its own.
const pgFunc = `CREATE OR REPLACE FUNCTION {S}.{F}() RETURNS bigint
LANGUAGE sql VOLATILE PARALLEL UNSAFE AS $flurry$
-- Made by flurry sql: layout {LAYOUTTEXT}; node {NODETEXT}. Replace it with
-- flurry sql install, remove it with flurry sql uninstall (docs/in-database.md).
SELECT CASE
	WHEN pg_catalog.nextval('{S}.{CTR}'::regclass) >> {CCHECK} = ((pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000)::bigint{OFFSET} - {EPOCH}) / {UNIT}) << {CGUARD}
		AND pg_catalog.current_setting('flurry.ok_{F}', true) = '{TOKEN}'
	THEN {FASTID}
	ELSE {S}.{SLOW}()
END
$flurry$`

// pgSlow is the function's slow path: the first call of a session (the identity
// check), a slot behind the clock or in its tick's guard zone (a move), a slot
// ahead of the clock (a wait). Names: x is the call's slot, k its tick, t the
// clock's tick, ms the clock in Unix milliseconds.
//
// A move happens under the advisory lock: the mover takes a slot again, and when
// that one is still behind the clock or in a guard zone (no other session moved
// meanwhile), sets the counter to the first slot of the clock's tick, or of the
// tick after the slot's when that is later (its tick's values ran out, or the clock
// is behind), and keeps that first slot. Every move thus goes to a later tick
// than the counter has ever been in, and counting by nextval stays inside the
// tick of the last move: no slot is handed out twice (see pgCounter).
//
// Only the session that gets the lock at once (pg_try_advisory_lock) moves; no
// session queues for it at a tick change. Sessions queued for the lock are
// handed it one by one, each only once the one before has run: on a busy server
// the lock was then held most of the time by a session not yet running, and 64
// sessions spent most of their time queued (Lock:advisory in pg_stat_activity).
// Instead, while a move is under way, a slot that is not in a guard zone and at
// most pgKeepBehindMs (or one tick) behind the clock is returned: it is unique
// like any other slot counting hands out, and its ID is at most that much older
// than the call. Other slots poll for the move every millisecond, without the
// lock, and queue for it only after pgMovePolls polls (a move held up for that
// long, or a move that was cancelled or killed). A session still takes at most
// two slots of a guard zone before it waits: one before the lock, one under it.
const pgSlow = `CREATE OR REPLACE FUNCTION {S}.{SLOW}() RETURNS bigint
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE AS $flurry$
-- Made by flurry sql: the calls of {S}.{F}() that its expression does not finish.
DECLARE
	x bigint;
	k bigint;
	t bigint;
	ms bigint;
	gap bigint;
	waited bigint := 0;
	tries int := 0;
	got boolean;
	keep boolean;
	held boolean := false;
	polls int;
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
		x := pg_catalog.nextval('{S}.{CTR}'::regclass);
		ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint{OFFSET};
		IF ms < {EPOCH} OR ms >= {ENDMS} THEN
			RAISE EXCEPTION USING ERRCODE = 'FL003', MESSAGE = format('{F}: the database clock (%s) is outside the layout''s time field or the node value''s lease (until {END})', to_timestamp(ms / 1000.0));
		END IF;
		t := (ms - {EPOCH}) / {UNIT};
		k := x >> {CTICK};
		-- A slot in the clock's tick, or ahead of it (waited for below), is this
		-- call's.
		EXIT WHEN x >> {CCHECK} = k << {CGUARD} AND k >= t;
		-- Another session moved the counter past this slot's tick: take a slot of
		-- that move without waiting for the lock (one per move, so that the bound
		-- on a guard zone holds).
		tries := tries + 1;
		IF tries > 1000 THEN
			RAISE EXCEPTION USING ERRCODE = 'FL004', MESSAGE = '{F}: other sessions moved the counter 1000 times during this call';
		END IF;
		CONTINUE WHEN pg_catalog.pg_sequence_last_value('{S}.{CTR}'::regclass) >> {CTICK} > k;
		-- The counter must move. The session that gets the advisory lock at once
		-- moves it; the others do not queue for the lock. While a move is under
		-- way, a slot of a tick at most {LAG} tick(s) behind the clock's is kept
		-- (it is unique all the same); any other, a guard zone's or an older
		-- tick's, polls for the move every millisecond and queues for the lock
		-- only after {POLLS} polls.
		keep := false;
		polls := 0;
		BEGIN
			-- Taken inside the block, so that a cancel right after it still
			-- reaches the handler; unlocking a lock not held only warns.
			held := true;
			got := pg_catalog.pg_try_advisory_lock({KEY});
			held := got;
			IF NOT got THEN
				keep := x >> {CCHECK} = k << {CGUARD} AND k >= t - {LAG};
			END IF;
			WHILE NOT got AND NOT keep LOOP
				polls := polls + 1;
				IF polls > {POLLS} THEN
					held := true;
					PERFORM pg_catalog.pg_advisory_lock({KEY});
					got := true;
				ELSE
					PERFORM pg_catalog.pg_sleep(0.001);
					-- A move was made: take a slot of it (the loop below).
					EXIT WHEN pg_catalog.pg_sequence_last_value('{S}.{CTR}'::regclass) >> {CTICK} > k;
					held := true;
					got := pg_catalog.pg_try_advisory_lock({KEY});
					held := got;
				END IF;
			END LOOP;
			IF got THEN
				x := pg_catalog.nextval('{S}.{CTR}'::regclass);
				ms := floor(date_part('epoch', clock_timestamp()) * 1000)::bigint{OFFSET};
				t := (greatest(ms, {EPOCH}) - {EPOCH}) / {UNIT};
				k := x >> {CTICK};
				IF x >> {CCHECK} <> k << {CGUARD} OR k < t THEN
					{ZONECHECK}
					k := greatest(t, k + 1);
					gap := {EPOCH} + k * {UNIT} - ms;
					IF k > t AND gap > {MAXWAIT} THEN
						RAISE EXCEPTION USING ERRCODE = 'FL001',
							MESSAGE = format('{F}: the database clock is %s ms behind the last issued ID''s tick; a call waits at most {MAXWAIT} ms', gap),
							HINT = 'Fix the clock (NTP); calls succeed again once it has passed the last issued tick.';
					END IF;
					IF k > {LASTTICK} THEN
						RAISE EXCEPTION USING ERRCODE = 'FL003', MESSAGE = '{F}: the layout''s time field or the node value''s lease (until {END}) has run out';
					END IF;
					x := k << {CTICK};{MOVEDELAY}
					PERFORM pg_catalog.setval('{S}.{CTR}'::regclass, x, true);
				END IF;
				PERFORM pg_catalog.pg_advisory_unlock({KEY});
				held := false;
			END IF;
		EXCEPTION
			WHEN query_canceled THEN
				IF held THEN
					PERFORM pg_catalog.pg_advisory_unlock({KEY});
				END IF;
				RAISE;
			WHEN OTHERS THEN
				IF held THEN
					PERFORM pg_catalog.pg_advisory_unlock({KEY});
				END IF;
				RAISE;
		END;
		EXIT WHEN got OR keep;
	END LOOP;
	-- The slot is this call's. Ahead of the clock (its tick's values ran out, or
	-- the clock is behind the last issued tick), it is returned once the clock has
	-- reached its tick.
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
	RETURN (k << {TSHIFT}) | (((x >> {CSEQ}) & {SEQMASK}) << {SSHIFT}) | {NODE};
END
$flurry$`

const pgOffset = ` + coalesce(nullif(current_setting('flurry.test_clock_offset_ms', true), '')::bigint, 0)`

// pgMoveDelay makes a move last longer in tests (Options.TestClock), so that
// other sessions take slots while it is under way.
const pgMoveDelay = `
				PERFORM pg_catalog.pg_sleep(coalesce(nullif(current_setting('flurry.test_move_delay_ms', true), '')::numeric, 0) / 1000);`

// pgKeepBehindMs is how far behind the clock (at least one tick) a slot may be
// and still be returned while another session moves the counter: such a slot is
// unique (counting never meets a move's tick), and waiting for the move instead
// makes every session queue for its lock at every tick change.
const pgKeepBehindMs = 10

// pgMovePolls is how many times (a millisecond apart) a call that must wait for
// another session's move polls for it before it queues for the move's lock.
const pgMovePolls = 20

// pgQuote quotes an identifier.
func pgQuote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (p *plan) postgres() Script {
	offset, delay := "", ""
	if p.o.TestClock {
		offset, delay = pgOffset, pgMoveDelay
	}
	k, c := p.ctr, p.c
	fast := "pg_catalog.currval('{S}.{CTR}'::regclass) | {NODE}"
	if !k.idSpace {
		fast = "((pg_catalog.currval('{S}.{CTR}'::regclass) >> {CTICK}) << {TSHIFT}) | ((pg_catalog.currval('{S}.{CTR}'::regclass) & {SEQMASK}) << {SSHIFT}) | {NODE}"
	}
	zone := ""
	if k.zone < minZone {
		zone = pgZoneCheck
	}
	last := min(c.MaxTick(), c.TickOfMs(p.endMs-1))
	lag := max(1, (pgKeepBehindMs+c.UnitMs-1)/c.UnitMs)
	r := p.replacer("{S}", pgQuote(p.schema), "{SEQ}", p.seq, "{SEQJUMP}", p.jump, "{CTR}", p.ctrName, "{SLOW}", p.slow, "{IDENT}", p.ident,
		"{OFFSET}", offset, "{MOVEDELAY}", delay,
		"{CTICK}", itoa(int64(k.tickShift)), "{CSEQ}", itoa(int64(k.seqShift)), "{CCHECK}", itoa(int64(k.seqShift+c.SeqBits)), "{CGUARD}", itoa(int64(k.guard)),
		"{CINC}", itoa(int64(1)<<k.seqShift), "{CSTART}", itoa(k.start(p.startTick)), "{ZONE}", itoa(k.zone), "{LASTTICK}", itoa(last), "{LAG}", itoa(lag), "{POLLS}", itoa(pgMovePolls))
	// {FASTID} and {ZONECHECK} hold names of their own: replaced first, then filled.
	r2 := strings.NewReplacer("{FASTID}", fast, "{ZONECHECK}", zone)
	s := Script{Engine: Postgres}
	add := func(t string) { s.Install = append(s.Install, r.Replace(r2.Replace(t))) }
	add(pgState)
	add(`CREATE SEQUENCE IF NOT EXISTS {S}.{CTR} AS bigint INCREMENT BY {CINC} MINVALUE 0 START WITH {CSTART} CACHE 1 NO CYCLE`)
	if zone != "" {
		add("DO $flurry$\nBEGIN\n\t" + pgZoneCheck + "\nEND\n$flurry$")
	}
	add(pgRaise)
	add(pgIdentFunc)
	add(pgStateRow)
	add(pgStateUpdate)
	add(pgSlow)
	add(pgFunc)
	// The sequences of an install made before the counter had guard zones.
	add(`DROP SEQUENCE IF EXISTS {S}.{SEQ}, {S}.{SEQJUMP}`)
	for _, t := range p.o.Targets {
		add(`ALTER TABLE ` + pgQuote(t.Table) + ` ALTER COLUMN ` + pgQuote(t.Column) + ` SET DEFAULT {S}.{F}()`)
	}
	for _, g := range p.o.Grants {
		add(`GRANT SELECT ON {S}.{STATE} TO ` + pgQuote(g))
		add(`GRANT USAGE, SELECT, UPDATE ON SEQUENCE {S}.{CTR} TO ` + pgQuote(g))
	}
	del := func(t string) { s.Uninstall = append(s.Uninstall, r.Replace(t)) }
	for _, t := range p.o.Targets {
		del(`ALTER TABLE IF EXISTS ` + pgQuote(t.Table) + ` ALTER COLUMN ` + pgQuote(t.Column) + ` DROP DEFAULT`)
	}
	del(`DROP FUNCTION IF EXISTS {S}.{F}()`)
	del(`DROP FUNCTION IF EXISTS {S}.{SLOW}()`)
	del(`DROP FUNCTION IF EXISTS {S}.{IDENT}()`)
	del(`DROP SEQUENCE IF EXISTS {S}.{CTR}, {S}.{SEQ}, {S}.{SEQJUMP}`)
	del(`DELETE FROM {S}.{STATE} WHERE function_name = '{F}'`)
	return s
}
