// Package compattest holds, for tests, the tables of the ID servers flurry stands
// in for, made with their own DDL and rows, and their DAOs' own SQL statements, so
// a test can run "the original" beside flurry on the same rows.
//
// Sources (facts carried over, code written here):
//   - Meituan-Dianping/Leaf README.md (leaf_alloc DDL and the sample row) and
//     leaf-core/.../segment/dao/IDAllocMapper.java with IDAllocDaoImpl.java
//     (UPDATE max_id = max_id + step, then SELECT, in one transaction).
//   - didi/tinyid tinyid-server/db.sql (tiny_id_info, tiny_id_token and their rows)
//     and tinyid-server/.../dao/impl/TinyIdInfoDAOImpl.java with
//     DbSegmentIdServiceImpl.java (read the row, then UPDATE ... WHERE max_id = old
//     AND version = v, retried on a conflict).
//
// The PostgreSQL forms are translations of the MySQL DDL: same columns, same
// defaults, same rows.
package compattest

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/flurryid/flurry/internal/sqlconn"
)

// Engine tells the DDL apart: "mysql" or "postgres".
type Engine string

// LeafDDL returns Leaf's leaf_alloc table and the README's sample row.
func LeafDDL(e Engine) []string {
	if e == "postgres" {
		return []string{`CREATE TABLE leaf_alloc (
  biz_tag varchar(128) NOT NULL DEFAULT '',
  max_id bigint NOT NULL DEFAULT 1,
  step int NOT NULL,
  description varchar(256) DEFAULT NULL,
  update_time timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP,
  PRIMARY KEY (biz_tag)
)`,
			`insert into leaf_alloc(biz_tag, max_id, step, description) values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')`}
	}
	return []string{"CREATE TABLE `leaf_alloc` (\n" +
		"  `biz_tag` varchar(128)  NOT NULL DEFAULT '',\n" +
		"  `max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
		"  `step` int(11) NOT NULL,\n" +
		"  `description` varchar(256)  DEFAULT NULL,\n" +
		"  `update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"  PRIMARY KEY (`biz_tag`)\n" +
		") ENGINE=InnoDB",
		`insert into leaf_alloc(biz_tag, max_id, step, description) values('leaf-segment-test', 1, 2000, 'Test leaf Segment Mode Get Id')`}
}

// TinyIDDDL returns tinyid's db.sql: both tables and their rows.
func TinyIDDDL(e Engine) []string {
	rows := []string{
		"INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) VALUES (1, 'test', 1, 1, 100000, 1, 0, '2018-07-21 23:52:58', '2018-07-22 23:19:27', 1)",
		"INSERT INTO tiny_id_info (id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version) VALUES (2, 'test_odd', 1, 1, 100000, 2, 1, '2018-07-21 23:52:58', '2018-07-23 00:39:24', 3)",
		"INSERT INTO tiny_id_token (id, token, biz_type, remark, create_time, update_time) VALUES (1, '0f673adf80504e2eaa552f5d791b644c', 'test', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48')",
		"INSERT INTO tiny_id_token (id, token, biz_type, remark, create_time, update_time) VALUES (2, '0f673adf80504e2eaa552f5d791b644c', 'test_odd', '1', '2017-12-14 16:36:46', '2017-12-14 16:36:48')",
	}
	if e == "postgres" {
		return append([]string{`CREATE TABLE tiny_id_info (
  id bigserial NOT NULL,
  biz_type varchar(63) NOT NULL DEFAULT '',
  begin_id bigint NOT NULL DEFAULT 0,
  max_id bigint NOT NULL DEFAULT 0,
  step int DEFAULT 0,
  delta int NOT NULL DEFAULT 1,
  remainder int NOT NULL DEFAULT 0,
  create_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',
  update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',
  version bigint NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  CONSTRAINT uniq_biz_type UNIQUE (biz_type)
)`, `CREATE TABLE tiny_id_token (
  id serial NOT NULL,
  token varchar(255) NOT NULL DEFAULT '',
  biz_type varchar(63) NOT NULL DEFAULT '',
  remark varchar(255) NOT NULL DEFAULT '',
  create_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',
  update_time timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',
  PRIMARY KEY (id)
)`}, append(rows,
			// MySQL's AUTO_INCREMENT moves past explicit ids; a sequence does not.
			"SELECT setval('tiny_id_info_id_seq', (SELECT MAX(id) FROM tiny_id_info))",
			"SELECT setval('tiny_id_token_id_seq', (SELECT MAX(id) FROM tiny_id_token))")...)
	}
	return append([]string{"CREATE TABLE `tiny_id_info` (\n" +
		"  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT COMMENT '自增主键',\n" +
		"  `biz_type` varchar(63) NOT NULL DEFAULT '' COMMENT '业务类型，唯一',\n" +
		"  `begin_id` bigint(20) NOT NULL DEFAULT '0',\n" +
		"  `max_id` bigint(20) NOT NULL DEFAULT '0',\n" +
		"  `step` int(11) DEFAULT '0',\n" +
		"  `delta` int(11) NOT NULL DEFAULT '1',\n" +
		"  `remainder` int(11) NOT NULL DEFAULT '0',\n" +
		"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
		"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
		"  `version` bigint(20) NOT NULL DEFAULT '0',\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `uniq_biz_type` (`biz_type`)\n" +
		") ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8",
		"CREATE TABLE `tiny_id_token` (\n" +
			"  `id` int(11) unsigned NOT NULL AUTO_INCREMENT,\n" +
			"  `token` varchar(255) NOT NULL DEFAULT '',\n" +
			"  `biz_type` varchar(63) NOT NULL DEFAULT '',\n" +
			"  `remark` varchar(255) NOT NULL DEFAULT '',\n" +
			"  `create_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
			"  `update_time` timestamp NOT NULL DEFAULT '2010-01-01 00:00:00',\n" +
			"  PRIMARY KEY (`id`)\n" +
			") ENGINE=InnoDB AUTO_INCREMENT=1 DEFAULT CHARSET=utf8"}, rows...)
}

// Exec runs statements in order.
func Exec(ctx context.Context, db *sql.DB, stmts []string) error {
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", strings.SplitN(s, "\n", 2)[0], err)
		}
	}
	return nil
}

// ph writes a statement's ? placeholders as the engine takes them.
func ph(e Engine, s string) string {
	if e != "postgres" {
		return s
	}
	return sqlconn.Dollars(s)
}

// LeafTake is Leaf's IDAllocDaoImpl.updateMaxIdAndGetLeafAlloc (step 0) or
// updateMaxIdByCustomStepAndGetLeafAlloc (step > 0): in one transaction, UPDATE
// leaf_alloc SET max_id = max_id + step, then SELECT the row. Leaf serves
// max_id-step .. max_id-1 (SegmentIDGenImpl.updateSegmentFromDb); LeafTake returns
// that range, both ends included.
func LeafTake(ctx context.Context, db *sql.DB, e Engine, tag string, step int64) (first, last int64, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return 0, 0, err
	}
	defer tx.Rollback()
	if step == 0 {
		_, err = tx.ExecContext(ctx, ph(e, "UPDATE leaf_alloc SET max_id = max_id + step WHERE biz_tag = ?"), tag)
	} else {
		_, err = tx.ExecContext(ctx, ph(e, "UPDATE leaf_alloc SET max_id = max_id + ? WHERE biz_tag = ?"), step, tag)
	}
	if err != nil {
		return 0, 0, err
	}
	var maxID, dbStep int64
	if err := tx.QueryRowContext(ctx, ph(e, "SELECT biz_tag, max_id, step FROM leaf_alloc WHERE biz_tag = ?"), tag).Scan(new(string), &maxID, &dbStep); err != nil {
		return 0, 0, err
	}
	if step == 0 {
		step = dbStep
	}
	return maxID - step, maxID - 1, tx.Commit()
}

// TinySegment is a range tinyid hands out: IDs in (Current, Max] with
// id % Delta == Remainder.
type TinySegment struct{ Current, Max, Delta, Remainder int64 }

// IDs lists the segment's IDs as tinyid's SegmentId.init and nextId issue them.
func (s TinySegment) IDs() []int64 {
	var out []int64
	for id := s.Current + 1; id <= s.Max; id++ {
		if id%s.Delta == s.Remainder {
			out = append(out, id)
		}
	}
	return out
}

// ErrConflict is returned by TinyTake when every attempt lost the optimistic update.
var ErrConflict = errors.New("get next segmentId conflict")

// TinyTake is tinyid's DbSegmentIdServiceImpl.getNextSegmentId with
// TinyIdInfoDAOImpl's SQL: read the row, UPDATE max_id = max_id + step WHERE
// max_id = old AND version = v, retried on a conflict.
func TinyTake(ctx context.Context, db *sql.DB, e Engine, bizType string) (TinySegment, error) {
	for i := 0; i < 50; i++ {
		var id, maxID, step, delta, rem, version int64
		err := db.QueryRowContext(ctx, ph(e, "select id, biz_type, begin_id, max_id, step, delta, remainder, create_time, update_time, version from tiny_id_info where biz_type = ?"), bizType).
			Scan(&id, new(string), new(int64), &maxID, &step, &delta, &rem, new(any), new(any), &version)
		if err != nil {
			return TinySegment{}, err
		}
		res, err := db.ExecContext(ctx, ph(e, "update tiny_id_info set max_id= ?, update_time=now(), version=version+1 where id=? and max_id=? and version=? and biz_type=?"),
			maxID+step, id, maxID, version, bizType)
		if err != nil {
			return TinySegment{}, err
		}
		if n, _ := res.RowsAffected(); n == 1 {
			return TinySegment{Current: maxID, Max: maxID + step, Delta: delta, Remainder: rem}, nil
		}
	}
	return TinySegment{}, ErrConflict
}
