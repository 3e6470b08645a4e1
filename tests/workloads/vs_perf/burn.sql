-- SPDX-License-Identifier: Apache-2.0
-- CPU-bound SQLite for tests/integration/test_vs_perf.c: a table of 40000
-- rows, then a correlated subquery (a scan per row: 1.6e9 row visits,
-- minutes of work) with string functions; the test kills it.
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 40000)
INSERT INTO t SELECT i, hex(randomblob(8)), (i * 7919 % 1000) / 7.0 FROM n;
CREATE INDEX t_b ON t(b);
SELECT count(*) FROM t AS x
WHERE x.c > (SELECT avg(y.c) FROM t AS y WHERE y.a % 97 = x.a % 97 AND substr(y.b, 1, 1) < 'C');
