package indb

import (
	"fmt"
	"hash/fnv"
	"strings"
)

// myIdentity is the database's identity as MariaDB tells it. MariaDB has no
// server UUID (MySQL's @@server_uuid), so it is the host name, port, data
// directory and server id of the server and the name of the database: a dump
// restored into another database or onto another server differs in one of them.
const myIdentity = `CONCAT_WS('/', @@hostname, @@port, @@datadir, @@server_id, DATABASE())`

const myState = `CREATE TABLE IF NOT EXISTS {STATE} (
	function_name VARCHAR(64) CHARACTER SET ascii NOT NULL PRIMARY KEY,
	layout        TEXT NOT NULL,
	node          TEXT NOT NULL,
	lease_store   TEXT NOT NULL,
	lease_scope   VARCHAR(200) NOT NULL DEFAULT '',
	lease_value   BIGINT NOT NULL DEFAULT -1,
	lease_owner   VARCHAR(200) NOT NULL DEFAULT '',
	lease_token   VARCHAR(200) NOT NULL DEFAULT '',
	targets       TEXT NOT NULL,
	identity      VARCHAR(1024) NOT NULL,
	database_name VARCHAR(64) NOT NULL,
	token         VARCHAR(64) NOT NULL,
	installed_ms  BIGINT NOT NULL,
	until_ms      BIGINT NOT NULL DEFAULT 0
) ENGINE=InnoDB`

const myStateRow = `INSERT IGNORE INTO {STATE} (function_name, layout, node, lease_store, lease_scope, lease_value, lease_owner, lease_token, targets, identity, database_name, token, installed_ms, until_ms)
VALUES ('{F}', {LAYOUT}, {NODELIT}, {LSTORE}, {LSCOPE}, {LVALUE}, {LOWNER}, {LTOKEN}, {TARGETS}, ` + myIdentity + `, DATABASE(), '{TOKEN}',
	FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000), {ENDMS})`

const myStateUpdate = `UPDATE {STATE} SET layout = {LAYOUT}, node = {NODELIT},
	lease_store = IF({LTOKEN} = '', lease_store, {LSTORE}),
	lease_scope = IF({LTOKEN} = '', lease_scope, {LSCOPE}),
	lease_value = IF({LTOKEN} = '', lease_value, {LVALUE}),
	lease_owner = IF({LTOKEN} = '', lease_owner, {LOWNER}),
	lease_token = IF({LTOKEN} = '', lease_token, {LTOKEN}),
	targets = {TARGETS}, database_name = DATABASE(), token = '{TOKEN}', until_ms = {ENDMS}
WHERE function_name = '{F}' AND identity = ` + myIdentity

// myFunc is the function. MariaDB's SETVAL takes only literal numbers and a
// stored function may run no dynamic SQL, so a SEQUENCE cannot be moved to the
// current tick; instead the sequence {F}_seq counts calls, and the sequence value
// of an ID is the call's number less the tick's base: the number of the call that
// claimed the tick, recorded with the tick in the one row of the MEMORY table
// {F}_tick. A tick is claimed once (the row moves only to later ticks), so the
// IDs of a tick are the distinct numbers of its calls less one base, and a call
// whose number is too far above the base (more calls in the tick than the
// sequence field holds) waits for the next tick. Neither the sequence nor a
// MEMORY table is undone by a rollback.
//
// The common call is NEXTVAL, then one expression (myNext), inlined into each
// trigger: the clock compared with the tick and base this session used last (user
// variables named after the install's token, with the database: a copy in
// another database has another name), and the ID. A call in a new tick within
// the reservation claims it in {F}_claim(n) (myClaim). Everything else is the slow
// path, {F}_slow(n), given the call's number: the first call of a session checks
// the database's identity; a call in a new tick claims it, or reads the claim; a
// session whose time zone is not UTC takes it on every call.
//
// A MEMORY table is empty after a restart or a crash, so the claims are not
// durable; the reservation is. No tick is claimed beyond the Aria (crash-safe)
// row {COUNTER}, which a claim that reaches its end moves {RESERVE} ticks on (one
// Aria log sync per {RESERVE} ticks, not per statement). The first call after a
// restart finds the MEMORY row missing and starts after the reservation, so a
// crash skips at most the reservation's ticks and reuses none. The slow path reads
// the clock with SYSDATE(6) (NOW() is fixed for a statement) with the session's
// time zone set to UTC for the call when it is not already, so that a
// daylight-saving hour cannot repeat an hour of the clock.
const myFunc = `CREATE OR REPLACE FUNCTION {F}() RETURNS BIGINT
NOT DETERMINISTIC MODIFIES SQL DATA
COMMENT 'Made by flurry sql: layout {LAYOUTTEXT}; node {NODETEXT} (docs/in-database.md)'
BEGIN
	DECLARE n BIGINT DEFAULT NEXTVAL({F}_seq);
	RETURN ` + myNext + `;
END`

// myNext is the common call of the number n as one expression: the function's
// and, inlined, each trigger's (a trigger that calls the function runs two stored
// programs per row, and each costs microseconds before its first statement). It
// compares the clock with the tick and base this session used last. The number is
// taken by a statement of its own: the slow path takes more of the sequence,
// which MariaDB refuses inside a statement that uses it.
const myNext = `IF(n - @flurry_b_{TOKEN} BETWEEN 0 AND {SEQMASK}
		AND (FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000){OFFSET} - {EPOCH}) DIV {UNIT} = @flurry_l_{TOKEN}
		AND @flurry_ok_{TOKEN} = DATABASE(),
		(@flurry_t_{TOKEN} << {TSHIFT}) | ((n - @flurry_b_{TOKEN}) << {SSHIFT}) | {NODE},
		{F}_claim(n))`

// myClaim is the call in a new tick within the reservation, for a session in UTC
// whose identity is checked: it claims the tick for the call's number (the ID's
// sequence value is 0) in one UPDATE of the MEMORY row, which moves only to later
// ticks, so a tick is claimed once whatever the clock reads. Everything else, or a
// claim that another session made first, goes to the slow path. It runs in a
// single-row INSERT at a low rate as often as the common call: a millisecond tick
// is new at nearly every insert.
const myClaim = `CREATE OR REPLACE FUNCTION {F}_claim(n BIGINT) RETURNS BIGINT
NOT DETERMINISTIC MODIFIES SQL DATA
COMMENT 'Made by flurry sql: the calls of {F}() in a new tick'
BEGIN
	DECLARE t BIGINT DEFAULT (FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000){OFFSET} - {EPOCH}) DIV {UNIT};
	IF t > @flurry_l_{TOKEN} AND t <= @flurry_r_{TOKEN} AND t <= {LASTTICK} AND @flurry_ok_{TOKEN} = DATABASE()
		AND (@@session.time_zone = '+00:00' OR @@session.time_zone = 'SYSTEM' AND @@system_time_zone = 'UTC') THEN
		UPDATE {F}_tick SET tick = t, base = n WHERE id = 1 AND tick < t;
		IF ROW_COUNT() = 1 THEN
			SET @flurry_t_{TOKEN} = t, @flurry_b_{TOKEN} = n, @flurry_l_{TOKEN} = t;
			RETURN (t << {TSHIFT}) | {NODE};
		END IF;
	END IF;
	RETURN {F}_slow(n);
END`

// mySlow is the function's slow path (see myFunc).
const mySlow = `CREATE OR REPLACE FUNCTION {F}_slow(n0 BIGINT) RETURNS BIGINT
NOT DETERMINISTIC MODIFIES SQL DATA
COMMENT 'Made by flurry sql: the calls of {F}() that its common path does not finish'
BEGIN
	DECLARE n, t, ms, gap, rt, rb, u BIGINT;
	DECLARE waited BIGINT DEFAULT 0;
	DECLARE tz VARCHAR(64) DEFAULT NULL;
	DECLARE live, rec VARCHAR(1024);
	DECLARE msg VARCHAR(512);
	DECLARE EXIT HANDLER FOR SQLEXCEPTION
	BEGIN
		IF tz IS NOT NULL THEN
			SET @@session.time_zone = tz;
		END IF;
		RESIGNAL;
	END;
	SET n = n0;
	IF @flurry_ok_{TOKEN} IS NULL OR @flurry_ok_{TOKEN} <> DATABASE() THEN
		SET live = ` + myIdentity + `;
		SET rec = (SELECT identity FROM {STATE} WHERE function_name = '{F}');
		IF rec IS NULL THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{F}: no row for it in {STATE}; install it with flurry sql install';
		END IF;
		IF rec <> live THEN
			SET msg = CONCAT('{F}: this database (', live, ') is a copy of the one the function was installed in (', rec,
				'), whose node value it must not use; run flurry sql install --new-node on it to lease it one of its own');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		SET @flurry_ok_{TOKEN} = DATABASE(), @flurry_l_{TOKEN} = NULL, @flurry_r_{TOKEN} = NULL;
	END IF;
	IF @@session.time_zone <> '+00:00' AND NOT (@@session.time_zone = 'SYSTEM' AND @@system_time_zone = 'UTC') THEN
		SET tz = @@session.time_zone;
		SET @@session.time_zone = '+00:00';
	END IF;
	claim: LOOP
		SET ms = FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000){OFFSET};
		IF ms < {EPOCH} OR ms >= {ENDMS} THEN
			SET msg = CONCAT('{F}: the database clock (', ms, ' ms) is outside the layout''s time field or the node value''s lease (until {END})');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		SET t = (ms - {EPOCH}) DIV {UNIT};
		-- The usual case first: a new tick within the reservation, claimed at once.
		IF t <= @flurry_r_{TOKEN} AND t <= {LASTTICK} THEN
			UPDATE {F}_tick SET tick = t, base = n WHERE id = 1 AND tick < t;
			IF ROW_COUNT() = 1 THEN
				SET rb = n;
				LEAVE claim;
			END IF;
		END IF;
		SET rt = NULL, rb = NULL;
		SELECT tick, base INTO rt, rb FROM {F}_tick WHERE id = 1;
		IF rt IS NULL THEN
			-- The first call since the server started: no tick up to the reservation
			-- may be claimed again.
			INSERT IGNORE INTO {F}_tick (id, tick, base) SELECT 1, IF(slot < 0, -1, slot >> {SEQBITS}), NULL FROM {COUNTER} WHERE id = 1;
			IF ROW_COUNT() = 0 AND NOT EXISTS (SELECT 1 FROM {F}_tick WHERE id = 1) THEN
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{F}: its counter row is missing; install it again with flurry sql install';
			END IF;
			ITERATE claim;
		END IF;
		-- The first tick this call may use: the claimed one, unless it has no base
		-- (the reservation after a restart), then the one after it.
		SET u = rt + IF(rb IS NULL, 1, 0);
		IF t = rt AND rb IS NOT NULL AND n - rb > {SEQMASK} THEN
			SET u = rt + 1; -- its values ran out
		END IF;
		IF t < u THEN
			SET gap = {EPOCH} + u * {UNIT} - ms;
			IF waited + gap > {MAXWAIT} THEN
				SET msg = CONCAT('{F}: the database clock is ', gap, ' ms behind the last issued ID''s tick; a call waits at most {MAXWAIT} ms; fix the clock (NTP)');
				SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
			END IF;
			DO SLEEP(gap / 1000);
			SET waited = waited + gap;
			SET n = NEXTVAL({F}_seq);
			ITERATE claim;
		END IF;
		IF t = rt THEN
			IF n < rb THEN
				-- Taken before the tick was claimed: a number after the claim fits.
				SET n = NEXTVAL({F}_seq);
				ITERATE claim;
			END IF;
			LEAVE claim;
		END IF;
		-- A new tick: within the reservation, moving it on when it ends there.
		IF t > {LASTTICK} THEN
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{F}: the layout''s time field or the node value''s lease (until {END}) has run out';
		END IF;
		IF @flurry_r_{TOKEN} IS NULL OR t > @flurry_r_{TOKEN} THEN
			UPDATE {COUNTER} SET slot = ((t + {RESERVE} - 1) << {SEQBITS}) | {SEQMASK} WHERE id = 1 AND (slot < 0 OR slot >> {SEQBITS} < t);
			SET @flurry_r_{TOKEN} = (SELECT IF(slot < 0, -1, slot >> {SEQBITS}) FROM {COUNTER} WHERE id = 1);
		END IF;
		UPDATE {F}_tick SET tick = t, base = n WHERE id = 1 AND tick < t;
		IF ROW_COUNT() = 1 THEN
			SET rb = n;
			LEAVE claim;
		END IF;
		SET n = NEXTVAL({F}_seq);
	END LOOP;
	-- The common path compares the clock as the session reads it: only a session
	-- in UTC may take it.
	SET @flurry_t_{TOKEN} = t, @flurry_b_{TOKEN} = rb, @flurry_l_{TOKEN} = IF(tz IS NULL, t, NULL);
	IF tz IS NOT NULL THEN
		SET @@session.time_zone = tz;
	END IF;
	RETURN (t << {TSHIFT}) | ((n - rb) << {SSHIFT}) | {NODE};
END`

const myOffset = ` + IFNULL(@flurry_test_clock_offset_ms, 0)`

// myQuote quotes an identifier.
func myQuote(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// triggerName names the trigger of a target: the function's name and a hash of
// the target, within MariaDB's 64 characters.
func triggerName(fn string, t Target) string {
	h := fnv.New32a()
	h.Write([]byte(t.String()))
	return fmt.Sprintf("%s_t%08x", fn, h.Sum32())
}

func (p *plan) mariadb() Script {
	offset := ""
	if p.o.TestClock {
		offset = myOffset
	}
	reserve := max(1, int64(500/p.c.UnitMs))
	last := min(p.c.MaxTick(), p.c.TickOfMs(p.endMs-1))
	r := p.replacer("{COUNTER}", p.counter, "{OFFSET}", offset, "{RESERVE}", itoa(reserve), "{LASTTICK}", itoa(last))
	s := Script{Engine: MariaDB}
	add := func(t string) { s.Install = append(s.Install, r.Replace(t)) }
	add(myState)
	// Aria: crash-safe, and outside the caller's transaction. slot is the last
	// slot of the reservation: no tick after its tick has been claimed. A new
	// counter starts below {START}, the tick after the lease's mark, and an existing
	// one is raised to it.
	add("CREATE TABLE IF NOT EXISTS {COUNTER} (id INT NOT NULL PRIMARY KEY, slot BIGINT NOT NULL) ENGINE=Aria TRANSACTIONAL=1")
	add("INSERT INTO {COUNTER} (id, slot) VALUES (1, {START} - 1) ON DUPLICATE KEY UPDATE slot = GREATEST(slot, {START} - 1)")
	add("CREATE SEQUENCE IF NOT EXISTS {F}_seq START WITH 1 MINVALUE 1 INCREMENT BY 1 CACHE 1000 NOCYCLE")
	add("CREATE TABLE IF NOT EXISTS {F}_tick (id INT NOT NULL PRIMARY KEY, tick BIGINT NOT NULL, base BIGINT NULL) ENGINE=MEMORY")
	// The claims start again after the reservation, which the install may have
	// raised.
	add("DELETE FROM {F}_tick")
	add(myStateRow)
	add(myStateUpdate)
	add(mySlow)
	add(myClaim)
	add(myFunc)
	for _, t := range p.o.Targets {
		col := myQuote(t.Column)
		// A row that leaves out a NOT NULL column without a default fails before any
		// trigger runs, so the column gets DEFAULT 0, which the trigger replaces.
		add(`ALTER TABLE ` + myQuote(t.Table) + ` ALTER COLUMN ` + col + ` SET DEFAULT 0`)
		// The trigger has the common call inlined, in two statements.
		add(`CREATE OR REPLACE TRIGGER ` + triggerName(p.fn, t) + ` BEFORE INSERT ON ` + myQuote(t.Table) + ` FOR EACH ROW
BEGIN
	DECLARE n BIGINT DEFAULT IF(NEW.` + col + ` IS NULL OR NEW.` + col + ` = 0, NEXTVAL({F}_seq), NULL);
	SET NEW.` + col + ` = IF(n IS NULL, NEW.` + col + `, ` + myNext + `);
END`)
	}
	del := func(t string) { s.Uninstall = append(s.Uninstall, r.Replace(t)) }
	for _, t := range p.o.Targets {
		del(`DROP TRIGGER IF EXISTS ` + triggerName(p.fn, t))
	}
	del(`DROP FUNCTION IF EXISTS {F}`)
	del(`DROP FUNCTION IF EXISTS {F}_claim`)
	del(`DROP FUNCTION IF EXISTS {F}_slow`)
	del(`DROP TABLE IF EXISTS {COUNTER}, {F}_tick`)
	del(`DROP SEQUENCE IF EXISTS {F}_seq`)
	del(`DELETE FROM {STATE} WHERE function_name = '{F}'`)
	return s
}
