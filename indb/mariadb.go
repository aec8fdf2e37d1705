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
// current tick; the counter is instead one row of an Aria table, which a
// transaction's rollback does not undo, raised by one UPDATE to the greater of
// the next slot and the start of the clock's tick (the ticket-server statement,
// with LAST_INSERT_ID). MariaDB locks the Aria tables a stored function uses for
// the whole statement that calls it, so calls of concurrent statements take
// turns: docs/in-database.md has the cost. SYSDATE, not NOW: NOW is fixed for a
// statement, and an INSERT ... SELECT of a million rows would see one tick. The
// session's time zone is set to UTC for the call when it is not already, so that
// a daylight-saving hour cannot repeat an hour of the clock. The user variable
// named after the install's token records that this connection checked the
// identity of this database: a copy in another database has another name.
const myFunc = `CREATE OR REPLACE FUNCTION {F}() RETURNS BIGINT
NOT DETERMINISTIC MODIFIES SQL DATA
COMMENT 'Made by flurry sql: layout {LAYOUTTEXT}; node {NODETEXT} (docs/in-database.md)'
BEGIN
	DECLARE x, k, t, ms, gap BIGINT;
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
		SET @flurry_ok_{TOKEN} = DATABASE();
	END IF;
	IF @@session.time_zone <> '+00:00' AND NOT (@@session.time_zone = 'SYSTEM' AND @@system_time_zone = 'UTC') THEN
		SET tz = @@session.time_zone;
		SET @@session.time_zone = '+00:00';
	END IF;
	SET ms = FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000){OFFSET};
	IF ms < {EPOCH} OR ms >= {ENDMS} THEN
		SET msg = CONCAT('{F}: the database clock (', ms, ' ms) is outside the layout''s time field or the node value''s lease (until {END})');
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
	END IF;
	SET t = (ms - {EPOCH}) DIV {UNIT};
	UPDATE {COUNTER} SET slot = LAST_INSERT_ID(GREATEST(slot + 1, t << {SEQBITS})) WHERE id = 1;
	IF ROW_COUNT() <> 1 THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{F}: its counter row is missing; install it again with flurry sql install';
	END IF;
	SET x = LAST_INSERT_ID();
	SET k = x >> {SEQBITS};
	WHILE k > t DO
		SET gap = {EPOCH} + k * {UNIT} - ms;
		IF waited + gap > {MAXWAIT} THEN
			SET msg = CONCAT('{F}: the database clock is ', gap, ' ms behind the last issued ID''s tick; a call waits at most {MAXWAIT} ms; fix the clock (NTP)');
			SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = msg;
		END IF;
		DO SLEEP(gap / 1000);
		SET waited = waited + gap;
		SET ms = FLOOR(UNIX_TIMESTAMP(SYSDATE(6)) * 1000){OFFSET};
		SET t = (GREATEST(ms, {EPOCH}) - {EPOCH}) DIV {UNIT};
	END WHILE;
	IF tz IS NOT NULL THEN
		SET @@session.time_zone = tz;
	END IF;
	IF k > {MAXTICK} THEN
		SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = '{F}: the layout''s time field has run out';
	END IF;
	RETURN (k << {TSHIFT}) | ((x & {SEQMASK}) << {SSHIFT}) | {NODE};
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
	r := p.replacer("{COUNTER}", p.counter, "{OFFSET}", offset)
	s := Script{Engine: MariaDB}
	add := func(t string) { s.Install = append(s.Install, r.Replace(t)) }
	add(myState)
	// Aria: crash-safe, and outside the caller's transaction. slot is the last
	// slot taken; a new counter starts below {START}, the tick after the lease's
	// mark, and an existing one is raised to it.
	add("CREATE TABLE IF NOT EXISTS {COUNTER} (id INT NOT NULL PRIMARY KEY, slot BIGINT NOT NULL) ENGINE=Aria TRANSACTIONAL=1")
	add("INSERT INTO {COUNTER} (id, slot) VALUES (1, {START} - 1) ON DUPLICATE KEY UPDATE slot = GREATEST(slot, {START} - 1)")
	add(myStateRow)
	add(myStateUpdate)
	add(myFunc)
	for _, t := range p.o.Targets {
		col := myQuote(t.Column)
		// A row that leaves out a NOT NULL column without a default fails before any
		// trigger runs, so the column gets DEFAULT 0, which the trigger replaces.
		add(`ALTER TABLE ` + myQuote(t.Table) + ` ALTER COLUMN ` + col + ` SET DEFAULT 0`)
		add(`CREATE OR REPLACE TRIGGER ` + triggerName(p.fn, t) + ` BEFORE INSERT ON ` + myQuote(t.Table) + ` FOR EACH ROW
BEGIN
	IF NEW.` + col + ` IS NULL OR NEW.` + col + ` = 0 THEN
		SET NEW.` + col + ` = {F}();
	END IF;
END`)
	}
	del := func(t string) { s.Uninstall = append(s.Uninstall, r.Replace(t)) }
	for _, t := range p.o.Targets {
		del(`DROP TRIGGER IF EXISTS ` + triggerName(p.fn, t))
	}
	del(`DROP FUNCTION IF EXISTS {F}`)
	del(`DROP TABLE IF EXISTS {COUNTER}`)
	del(`DELETE FROM {STATE} WHERE function_name = '{F}'`)
	return s
}
