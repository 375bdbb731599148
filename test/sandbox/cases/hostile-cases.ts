import type { QesErrorCode } from "@qes/core";

/**
 * Hostile consumer SQL for `logs.all` (DESIGN.md §5: one statement, SELECT only, only the stored
 * query's CTEs at any depth, only catalogue functions, every refusal a 422 with its code before
 * any backend runs; §7: codes and statuses). Each case names the rule it checks through its group.
 *
 * The stored query's CTEs: edge_logs, postgres_logs, function_edge_logs, function_logs, auth_logs,
 * realtime_logs, storage_logs, postgrest_logs, pgbouncer_logs. Its parameters: @project,
 * @iso_timestamp_start, @iso_timestamp_end. The physical tables behind them are `src_<source>`
 * (e.g. src_cloudflare_logs_prod) beside `qes_sources` and `qes_meta` (DuckDB) or in a schema of
 * their own (PostgreSQL).
 */
export interface HostileCase {
  name: string;
  sql: string;
  code: QesErrorCode;
  /** how the SQL travels; default GET with `sql` in the query string */
  via?: "get" | "post";
  /** a refusal of the whole text (its length), with no line and column to point at */
  noPosition?: true;
  /** another endpoint than logs.all, with its parameters */
  endpoint?: { name: string; params: Record<string, string> };
  /** the parameter a 400 names */
  param?: string;
}

const rep = (s: string, n: number) => s.repeat(n);
const nest = (n: number, open: string, inner: string, close: string) => rep(open, n) + inner + rep(close, n);

const SRC = "src_cloudflare_logs_prod";

/** several statements and statements other than SELECT (§5: one statement, SELECT only) */
const statements: HostileCase[] = [
  {
    name: "INSERT into a CTE",
    sql: "insert into edge_logs (id) values ('x')",
    code: "statement_not_allowed",
  },
  {
    name: "INSERT into a source",
    sql: "insert into `cloudflare.logs.prod` (id, event_message) values ('x', 'y')",
    code: "statement_not_allowed",
  },
  {
    name: "INSERT into the physical table",
    sql: `insert into ${SRC} (id) select id from edge_logs`,
    code: "statement_not_allowed",
  },
  { name: "UPDATE a CTE", sql: "update edge_logs set id = 'x' where true", code: "statement_not_allowed" },
  {
    name: "UPDATE the physical table",
    sql: `update ${SRC} set project = 'alpha' where true`,
    code: "statement_not_allowed",
  },
  { name: "DELETE from a CTE", sql: "delete from edge_logs where true", code: "statement_not_allowed" },
  {
    name: "DELETE from a source",
    sql: "delete from `cloudflare.logs.prod` where true",
    code: "statement_not_allowed",
  },
  { name: "DELETE without FROM or WHERE", sql: `delete ${SRC}`, code: "statement_not_allowed" },
  {
    name: "MERGE",
    sql: `merge ${SRC} t using edge_logs s on t.id = s.id when matched then delete`,
    code: "sql_syntax",
  },
  { name: "TRUNCATE", sql: `truncate table ${SRC}`, code: "statement_not_allowed" },
  { name: "REPLACE INTO", sql: `replace into ${SRC} (id) values ('x')`, code: "statement_not_allowed" },
  { name: "COPY to a file", sql: `copy ${SRC} to '/tmp/qes-leak.csv'`, code: "sql_syntax" },
  {
    name: "CREATE TABLE AS",
    sql: "create table leak as select * from edge_logs",
    code: "statement_not_allowed",
  },
  {
    name: "CREATE TEMP TABLE",
    sql: "create temp table t as select 1 as x",
    code: "statement_not_allowed",
  },
  { name: "CREATE VIEW", sql: `create view v as select * from ${SRC}`, code: "statement_not_allowed" },
  {
    name: "CREATE TEMP FUNCTION (BigQuery UDF)",
    sql: "create temp function f(x int64) as (x + 1); select f(1) as y",
    code: "sql_syntax",
  },
  { name: "CREATE MACRO (DuckDB)", sql: "create macro m(x) as x + 1", code: "sql_syntax" },
  { name: "CREATE EXTENSION", sql: "create extension dblink", code: "sql_syntax" },
  { name: "CREATE SCHEMA", sql: "create schema leak", code: "sql_syntax" },
  { name: "CREATE ROLE", sql: "create role attacker superuser login", code: "sql_syntax" },
  { name: "DROP TABLE", sql: `drop table ${SRC}`, code: "statement_not_allowed" },
  { name: "DROP SCHEMA CASCADE", sql: "drop schema qes cascade", code: "sql_syntax" },
  { name: "ALTER TABLE", sql: `alter table ${SRC} add column x int64`, code: "statement_not_allowed" },
  { name: "ALTER ROLE", sql: "alter role postgres password 'x'", code: "sql_syntax" },
  { name: "ALTER SYSTEM", sql: "alter system set fsync = off", code: "sql_syntax" },
  { name: "GRANT", sql: `grant all on ${SRC} to public`, code: "sql_syntax" },
  { name: "REVOKE", sql: `revoke select on ${SRC} from public`, code: "sql_syntax" },
  { name: "ATTACH a database file (DuckDB)", sql: "attach '/tmp/x.duckdb' as x", code: "sql_syntax" },
  { name: "INSTALL httpfs (DuckDB)", sql: "install httpfs", code: "sql_syntax" },
  { name: "LOAD httpfs (DuckDB)", sql: "load httpfs", code: "sql_syntax" },
  { name: "PRAGMA (DuckDB)", sql: "pragma enable_external_access", code: "sql_syntax" },
  { name: "EXPORT DATABASE (DuckDB)", sql: "export database '/tmp/qes-export'", code: "sql_syntax" },
  {
    name: "EXPORT DATA (BigQuery)",
    sql: "export data options(uri='gs://b/*.csv', format='CSV') as select * from edge_logs",
    code: "sql_syntax",
  },
  {
    name: "LOAD DATA (BigQuery)",
    sql: "load data into t from files (uris = ['gs://b/x'])",
    code: "sql_syntax",
  },
  { name: "CALL a procedure", sql: "call proc(1)", code: "statement_not_allowed" },
  { name: "EXECUTE IMMEDIATE", sql: "execute immediate 'drop table x'", code: "sql_syntax" },
  { name: "DECLARE", sql: "declare x int64 default 1", code: "sql_syntax" },
  { name: "SET a variable", sql: "set x = 1", code: "statement_not_allowed" },
  { name: "SET a setting", sql: "set statement_timeout = 0", code: "statement_not_allowed" },
  { name: "SET search_path", sql: "set search_path to public", code: "sql_syntax" },
  { name: "RESET ALL", sql: "reset all", code: "sql_syntax" },
  { name: "BEGIN … COMMIT", sql: "begin; select 1 as x; commit", code: "sql_syntax" },
  { name: "BEGIN TRANSACTION", sql: "begin transaction", code: "sql_syntax" },
  { name: "COMMIT", sql: "commit", code: "sql_syntax" },
  { name: "SHOW (settings)", sql: "show all", code: "sql_syntax" },
  { name: "EXPLAIN ANALYZE", sql: "explain analyze select * from edge_logs", code: "sql_syntax" },
  { name: "DESCRIBE", sql: `describe ${SRC}`, code: "statement_not_allowed" },
  { name: "LOCK TABLE", sql: `lock table ${SRC}`, code: "sql_syntax" },
  { name: "LISTEN / NOTIFY", sql: "notify qes_schema, 'x'", code: "sql_syntax" },
  { name: "DO block", sql: "do $$ begin perform pg_sleep(10); end $$", code: "sql_syntax" },
  { name: "TABLE shorthand", sql: `table ${SRC}`, code: "sql_syntax" },
  { name: "VALUES statement", sql: "values (1), (2)", code: "sql_syntax" },
  { name: "SELECT … INTO a new table", sql: "select * into leak from edge_logs", code: "sql_syntax" },
  // several statements
  {
    name: "SELECT; DROP",
    sql: `select id from edge_logs; drop table ${SRC}`,
    code: "statement_not_allowed",
  },
  { name: "two SELECTs", sql: "select id from edge_logs; select 1 as x", code: "statement_not_allowed" },
  {
    name: "SELECT; DELETE after blank lines",
    sql: "select id from edge_logs;\n\n\ndelete from edge_logs where true",
    code: "statement_not_allowed",
  },
  {
    name: "statement after a line comment",
    sql: "select id from edge_logs -- look away\n; delete from edge_logs where true",
    code: "statement_not_allowed",
  },
  {
    name: "statement after a block comment",
    sql: "select id from edge_logs /* harmless */; update edge_logs set id = 'x' where true",
    code: "statement_not_allowed",
  },
  {
    name: "statement after a # comment",
    sql: `select id from edge_logs # comment\n; drop table ${SRC}`,
    code: "statement_not_allowed",
  },
  {
    name: "statement after a string that contains a semicolon",
    sql: `select 'a;b' as x from edge_logs; drop table ${SRC}`,
    code: "statement_not_allowed",
  },
  {
    name: "statement between semicolons",
    sql: "select 1 as x from edge_logs;;select 2 as y",
    code: "statement_not_allowed",
  },
  {
    name: "a quote that closes nothing, then a statement",
    sql: `select '\\''; drop table ${SRC}; --' as x from edge_logs`,
    code: "statement_not_allowed",
  },
  {
    name: "PostgreSQL E-string escape, then a statement",
    sql: `select E'\\\\'; drop table ${SRC}; --' as x from edge_logs`,
    code: "statement_not_allowed",
  },
];

/** engine functions that touch files, network, settings or catalogs (§5: not in the catalogue) */
const functionNames: Array<[string, string]> = [
  ["read_csv (DuckDB)", "read_csv('/etc/passwd')"],
  ["read_csv_auto (DuckDB)", "read_csv_auto('/etc/passwd')"],
  ["read_parquet over https (httpfs)", "read_parquet('https://example.com/x.parquet')"],
  ["read_json_auto (DuckDB)", "read_json_auto('/etc/hosts')"],
  ["read_text (DuckDB)", "read_text('/etc/passwd')"],
  ["read_blob (DuckDB)", "read_blob('/etc/passwd')"],
  ["glob (DuckDB)", "glob('/*')"],
  ["parquet_scan (DuckDB)", "parquet_scan('/tmp/x.parquet')"],
  ["sniff_csv (DuckDB)", "sniff_csv('/etc/passwd')"],
  ["duckdb_settings (DuckDB)", "duckdb_settings()"],
  ["current_setting", "current_setting('data_directory')"],
  ["set_config (PostgreSQL)", "set_config('statement_timeout', '0', false)"],
  ["pg_read_file (PostgreSQL)", "pg_read_file('/etc/passwd')"],
  ["pg_read_binary_file (PostgreSQL)", "pg_read_binary_file('/etc/passwd')"],
  ["pg_ls_dir (PostgreSQL)", "pg_ls_dir('.')"],
  ["pg_stat_file (PostgreSQL)", "pg_stat_file('postgresql.conf')"],
  ["lo_import (PostgreSQL)", "lo_import('/etc/passwd')"],
  ["lo_export (PostgreSQL)", "lo_export(1, '/tmp/x')"],
  ["dblink (PostgreSQL)", "dblink('host=127.0.0.1', 'select 1')"],
  ["pg_sleep (PostgreSQL)", "pg_sleep(30)"],
  ["pg_terminate_backend (PostgreSQL)", "pg_terminate_backend(1)"],
  ["pg_cancel_backend (PostgreSQL)", "pg_cancel_backend(1)"],
  ["pg_reload_conf (PostgreSQL)", "pg_reload_conf()"],
  ["pg_advisory_lock (PostgreSQL)", "pg_advisory_lock(1)"],
  ["pg_notify (PostgreSQL)", "pg_notify('qes', 'x')"],
  ["query_to_xml (PostgreSQL)", `query_to_xml('select * from ${SRC}', true, true, '')`],
  ["nextval (PostgreSQL)", "nextval('qes_schema_version_seq')"],
  ["version()", "version()"],
  ["current_database()", "current_database()"],
  ["getenv (DuckDB)", "getenv('HOME')"],
  ["query (DuckDB)", `query('select * from ${SRC}')`],
  ["query_table (DuckDB)", `query_table('${SRC}')`],
  ["EXTERNAL_QUERY (BigQuery)", "EXTERNAL_QUERY('conn', 'select 1')"],
  ["SESSION_USER (BigQuery)", "SESSION_USER()"],
  ["sleep (MySQL style)", "sleep(10)"],
  ["constructor (a key every object inherits)", "constructor(id)"],
  ["__proto__ as a function", "__proto__(id)"],
  ["hasOwnProperty as a function", "hasOwnProperty(id)"],
  ["upper-case READ_CSV", "READ_CSV('/etc/passwd')"],
  ["mixed-case Pg_Read_File", "Pg_Read_File('/etc/passwd')"],
  ["backtick-quoted pg_sleep", "`pg_sleep`(30)"],
  ["schema-qualified pg_catalog.pg_read_file", "pg_catalog.pg_read_file('/etc/passwd')"],
  ["SAFE. prefix on an engine function", "SAFE.pg_read_file('/etc/passwd')"],
  ["NET.HOST (BigQuery, not in the catalogue)", "NET.HOST('https://example.com')"],
  // ClickHouse: functions that read files, settings, the server or other tables
  ["file (ClickHouse reads a file as text)", "file('/etc/passwd')"],
  ["getSetting (ClickHouse)", "getSetting('readonly')"],
  ["getMacro (ClickHouse)", "getMacro('replica')"],
  ["currentUser (ClickHouse)", "currentUser()"],
  ["hostName (ClickHouse)", "hostName()"],
  ["getServerPort (ClickHouse)", "getServerPort('http_port')"],
  ["filesystemAvailable (ClickHouse)", "filesystemAvailable()"],
  ["dictGet (ClickHouse)", "dictGet('d', 'x', toUInt64(1))"],
  ["joinGet (ClickHouse)", "joinGet('qes_schema', 'schema', 1)"],
  ["sleepEachRow (ClickHouse)", "sleepEachRow(3)"],
  ["throwIf (ClickHouse)", "throwIf(1)"],
  ["currentDatabase (ClickHouse)", "currentDatabase()"],
  ["formatQuery (ClickHouse)", "formatQuery('select 1')"],
  ["AEAD.DECRYPT_STRING (BigQuery)", "AEAD.DECRYPT_STRING(b'', b'', '')"],
];

const functions: HostileCase[] = [
  ...functionNames.map(
    ([name, call]): HostileCase => ({
      name: `${name} in SELECT`,
      sql: `select ${call} as x from edge_logs`,
      code: call.includes("b''") ? "sql_syntax" : "function_not_allowed",
    }),
  ),
  {
    name: "read_csv in FROM",
    sql: "select * from read_csv('/etc/passwd')",
    code: "relation_not_allowed",
  },
  {
    name: "pg_ls_dir in FROM",
    sql: "select * from pg_ls_dir('.')",
    code: "relation_not_allowed",
  },
  { name: "glob in FROM", sql: "select * from glob('/*')", code: "relation_not_allowed" },
  {
    name: "duckdb_settings() in FROM",
    sql: "select * from duckdb_settings()",
    code: "relation_not_allowed",
  },
  // ClickHouse table functions: files, network, other servers and the engine's own tables
  ...[
    "file('/etc/passwd', 'LineAsString')",
    "url('http://127.0.0.1:8123/?query=select+1', 'CSV')",
    "s3('https://bucket.s3.amazonaws.com/x.csv', 'CSV')",
    "remote('127.0.0.1:9000', system.one)",
    "remoteSecure('127.0.0.1:9440', 'system', 'users')",
    "cluster('default', system.one)",
    "clusterAllReplicas('default', system.processes)",
    "hdfs('hdfs://127.0.0.1:9000/x', 'CSV')",
    "mysql('127.0.0.1:3306', 'db', 't', 'u', 'p')",
    "postgresql('127.0.0.1:5432', 'test', 'pg_authid', 'postgres', '')",
    "executable('cat /etc/passwd', 'TSV', 'x String')",
    "merge('qes', '.*')",
    "input('x String')",
    "numbers(1000000000000)",
    "generateRandom('x String')",
    "azureBlobStorage('DefaultEndpointsProtocol=https', 'c', 'x.csv')",
  ].map(
    (call): HostileCase => ({
      name: `ClickHouse table function ${call.slice(0, call.indexOf("("))} in FROM`,
      sql: `select * from ${call}`,
      code: "relation_not_allowed",
    }),
  ),
  {
    name: "ClickHouse file() in a join of an allowed CTE",
    sql: "select e.id from edge_logs e join file('/etc/passwd', 'LineAsString') f on true",
    code: "relation_not_allowed",
  },
  {
    name: "generate_series in FROM",
    sql: "select * from generate_series(1, 1000000000)",
    code: "relation_not_allowed",
  },
  {
    name: "pg_sleep in WHERE",
    sql: "select id from edge_logs where pg_sleep(30) is null",
    code: "function_not_allowed",
  },
  {
    name: "pg_sleep in ORDER BY",
    sql: "select id from edge_logs order by pg_sleep(30)",
    code: "function_not_allowed",
  },
  {
    name: "read_csv inside an allowed function",
    sql: "select coalesce(read_csv('/etc/passwd'), 'x') as x from edge_logs",
    code: "function_not_allowed",
  },
  {
    name: "current_setting in a CTE of the consumer",
    sql: "with c as (select current_setting('is_superuser') as s) select s from c",
    code: "function_not_allowed",
  },
  {
    name: "ML.PREDICT (BigQuery)",
    sql: "select * from ML.PREDICT(MODEL `m`, (select * from edge_logs))",
    code: "sql_syntax",
  },
  {
    name: "pg_terminate_backend in HAVING",
    sql: "select id from edge_logs group by id having pg_terminate_backend(1)",
    code: "function_not_allowed",
  },
  {
    name: "set_config in a window",
    sql: "select id, count(*) over (partition by set_config('a', 'b', false)) as n from edge_logs",
    code: "function_not_allowed",
  },
];

/** relations other than the stored query's CTEs, in every syntactic position (§5) */
const relations: HostileCase[] = [
  {
    name: "FROM a source by its BigQuery name",
    sql: "select * from `cloudflare.logs.prod`",
    code: "relation_not_allowed",
  },
  {
    name: "FROM a source unquoted",
    sql: "select id from cloudflare.logs.prod",
    code: "relation_not_allowed",
  },
  {
    name: "FROM a source quoted per part",
    sql: "select id from `cloudflare`.`logs`.`prod`",
    code: "relation_not_allowed",
  },
  { name: "FROM another source", sql: "select id from `postgres.logs`", code: "relation_not_allowed" },
  { name: "FROM the physical table", sql: `select * from ${SRC}`, code: "relation_not_allowed" },
  {
    name: "FROM the physical table, backticks",
    sql: `select * from \`${SRC}\``,
    code: "relation_not_allowed",
  },
  {
    name: "FROM the physical table, upper case",
    sql: `select * from ${SRC.toUpperCase()}`,
    code: "relation_not_allowed",
  },
  {
    name: "FROM main.<physical table> (DuckDB)",
    sql: `select * from main.${SRC}`,
    code: "relation_not_allowed",
  },
  {
    name: "FROM qes.<physical table> (PostgreSQL)",
    sql: `select * from qes.${SRC}`,
    code: "relation_not_allowed",
  },
  { name: "FROM qes_sources", sql: "select * from qes_sources", code: "relation_not_allowed" },
  { name: "FROM qes_meta", sql: "select * from qes_meta", code: "relation_not_allowed" },
  { name: "FROM qes_migration", sql: "select * from qes_migration", code: "relation_not_allowed" },
  {
    name: "FROM information_schema.tables",
    sql: "select table_name from information_schema.tables",
    code: "relation_not_allowed",
  },
  {
    name: "FROM INFORMATION_SCHEMA.COLUMNS (BigQuery style)",
    sql: "select * from `region-us`.INFORMATION_SCHEMA.COLUMNS",
    code: "relation_not_allowed",
  },
  {
    name: "FROM pg_catalog.pg_tables",
    sql: "select * from pg_catalog.pg_tables",
    code: "relation_not_allowed",
  },
  { name: "FROM pg_shadow", sql: "select usename, passwd from pg_shadow", code: "relation_not_allowed" },
  { name: "FROM pg_authid", sql: "select * from pg_authid", code: "relation_not_allowed" },
  { name: "FROM pg_stat_activity", sql: "select query from pg_stat_activity", code: "relation_not_allowed" },
  { name: "FROM pg_settings", sql: "select * from pg_settings", code: "relation_not_allowed" },
  { name: "FROM duckdb_tables()", sql: "select * from duckdb_tables()", code: "relation_not_allowed" },
  // ClickHouse's system database and qes's own tables, however they are spelt
  ...[
    "system.processes",
    "system.users",
    "system.settings",
    "system.tables",
    "system.parts",
    "`system.one`",
    "`system`.`numbers`",
    "SYSTEM.PROCESSES",
    "qes_schema",
    "qes.qes_schema",
    "default.qes_schema",
    "INFORMATION_SCHEMA.TABLES",
  ].map(
    (table): HostileCase => ({
      name: `FROM ${table} (ClickHouse)`,
      sql: `select * from ${table}`,
      code: "relation_not_allowed",
    }),
  ),
  { name: "FROM sqlite_master", sql: "select * from sqlite_master", code: "relation_not_allowed" },
  {
    name: "FROM a CTE name qualified by a dataset",
    sql: "select * from logs.edge_logs",
    code: "relation_not_allowed",
  },
  {
    name: "FROM an internal alias of the emitted SQL",
    sql: "select * from q0",
    code: "relation_not_allowed",
  },
  {
    name: "JOIN the physical table",
    sql: `select e.id from edge_logs e join ${SRC} s on s.id = e.id`,
    code: "relation_not_allowed",
  },
  {
    name: "LEFT JOIN a source",
    sql: "select e.id from edge_logs e left join `postgres.logs` p on true",
    code: "relation_not_allowed",
  },
  {
    name: "CROSS JOIN qes_sources",
    sql: "select e.id from edge_logs e cross join qes_sources",
    code: "relation_not_allowed",
  },
  {
    name: "comma join pg_user",
    sql: "select e.id from edge_logs e, pg_catalog.pg_user u",
    code: "relation_not_allowed",
  },
  {
    name: "scalar subquery in SELECT",
    sql: `select (select count(*) from ${SRC}) as n from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "scalar subquery in a function argument",
    sql: `select coalesce((select max(event_message) from ${SRC}), '') as n from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in CASE",
    sql: "select case when true then (select max(id) from `cloudflare.logs.prod`) end as x from edge_logs",
    code: "relation_not_allowed",
  },
  {
    name: "IN (subquery) in WHERE",
    sql: "select id from edge_logs where id in (select id from `cloudflare.logs.prod`)",
    code: "relation_not_allowed",
  },
  {
    name: "NOT IN (subquery) in WHERE",
    sql: `select id from edge_logs where id not in (select id from ${SRC} where project = 'beta')`,
    code: "relation_not_allowed",
  },
  {
    name: "EXISTS in WHERE",
    sql: "select id from edge_logs where exists (select 1 from pg_catalog.pg_tables)",
    code: "relation_not_allowed",
  },
  {
    name: "NOT EXISTS in WHERE",
    sql: "select id from edge_logs where not exists (select 1 from qes_meta)",
    code: "relation_not_allowed",
  },
  {
    name: "comparison with a subquery in WHERE",
    sql: `select id from edge_logs where id = (select max(id) from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in HAVING",
    sql: "select id from edge_logs group by id having count(*) < (select count(*) from information_schema.tables)",
    code: "relation_not_allowed",
  },
  {
    name: "subquery in ORDER BY",
    sql: `select id from edge_logs order by (select count(*) from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in GROUP BY",
    sql: `select count(*) as n from edge_logs group by (select max(id) from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in JOIN … ON",
    sql: `select e.id from edge_logs e join postgres_logs p on e.id in (select id from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in FROM",
    sql: `select * from (select * from ${SRC}) as t`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in FROM, two levels deep",
    sql: "select * from (select * from (select * from `cloudflare.logs.prod`))",
    code: "relation_not_allowed",
  },
  {
    name: "correlated subquery in FROM (lateral)",
    sql: `select e.id from edge_logs e, (select * from ${SRC} s where s.id = e.id)`,
    code: "relation_not_allowed",
  },
  {
    name: "LATERAL keyword",
    sql: `select e.id from edge_logs e, lateral (select * from ${SRC}) x`,
    code: "relation_not_allowed",
  },
  {
    name: "CTE body",
    sql: "with x as (select * from `cloudflare.logs.prod`) select * from x",
    code: "relation_not_allowed",
  },
  {
    name: "CTE that shadows a stored CTE's name",
    sql: `with edge_logs as (select * from ${SRC}) select * from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "second CTE reading a catalog",
    sql: "with a as (select id from edge_logs), b as (select * from information_schema.tables) select * from a",
    code: "relation_not_allowed",
  },
  {
    name: "CTE inside a subquery",
    sql: "select * from (with y as (select * from qes_meta) select * from y)",
    code: "relation_not_allowed",
  },
  {
    name: "UNION ALL branch",
    sql: "select id from edge_logs union all select id from `cloudflare.logs.prod`",
    code: "relation_not_allowed",
  },
  {
    name: "UNION DISTINCT first branch",
    sql: `select id from ${SRC} union distinct select id from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "EXCEPT DISTINCT branch",
    sql: `select id from edge_logs except distinct select id from ${SRC}`,
    code: "relation_not_allowed",
  },
  {
    name: "INTERSECT DISTINCT branch",
    sql: "select id from edge_logs intersect distinct select id from `postgres.logs`",
    code: "relation_not_allowed",
  },
  {
    name: "set operation inside a subquery",
    sql: `select * from (select id from edge_logs union all select id from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "UNNEST of a subquery's array",
    sql: `select x from edge_logs cross join unnest((select array_agg(id) from ${SRC})) as x`,
    code: "relation_not_allowed",
  },
  {
    name: "UNNEST of ARRAY(subquery)",
    sql: `select x from edge_logs, unnest(array(select event_message from ${SRC})) as x`,
    code: "relation_not_allowed",
  },
  {
    name: "IN UNNEST(ARRAY(subquery))",
    sql: `select id from edge_logs where id in unnest(array(select id from ${SRC}))`,
    code: "relation_not_allowed",
  },
  {
    name: "ARRAY(subquery) in SELECT",
    sql: "select array(select id from `cloudflare.logs.prod`) as ids from edge_logs",
    code: "relation_not_allowed",
  },
  {
    name: "subquery in a window's PARTITION BY",
    sql: `select id, row_number() over (partition by (select max(id) from ${SRC})) as n from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "subquery in QUALIFY",
    sql: `select id from edge_logs qualify row_number() over (order by id) < (select count(*) from ${SRC})`,
    code: "relation_not_allowed",
  },
  {
    name: "physical table under a stored CTE's alias",
    sql: `select * from ${SRC} as edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "dataset-qualified physical table in a deep subquery",
    sql: `select id from edge_logs where id in (select id from postgres_logs where id in (select id from main.${SRC}))`,
    code: "relation_not_allowed",
  },
];

/** comments, quoting and escapes: strings stay strings, comments never reach the engine */
const tricks: HostileCase[] = [
  {
    name: "block comment splitting a source name",
    sql: "select * from cloudflare/**/.logs.prod",
    code: "relation_not_allowed",
  },
  {
    name: "block comment inside backticks is part of the name",
    sql: "select * from `edge/**/_logs`",
    code: "relation_not_allowed",
  },
  {
    name: "block comment splitting a CTE name leaves a table and an alias",
    sql: "select * from edge/**/_logs",
    code: "relation_not_allowed",
  },
  {
    name: "nested block comment: BigQuery ends it at the first */",
    sql: `select 1 as x /* /* */ , (select count(*) from ${SRC}) as n from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "unterminated block comment",
    sql: `select id from edge_logs /* ; drop table ${SRC}`,
    code: "sql_syntax",
  },
  {
    name: "line comment hiding the rest, then a new line with a subquery",
    sql: `select id -- , 'x'\n, (select max(id) from ${SRC}) as y from edge_logs`,
    code: "relation_not_allowed",
  },
  {
    name: "backtick name with an escaped backtick",
    sql: "select `id\\` from edge_logs",
    code: "sql_syntax",
  },
  { name: "unterminated backtick name", sql: "select id from `edge_logs", code: "sql_syntax" },
  { name: "unterminated string", sql: "select 'abc from edge_logs", code: "sql_syntax" },
  {
    name: "PostgreSQL dollar quoting",
    sql: `select $$; drop table ${SRC}$$ as x from edge_logs`,
    code: "sql_syntax",
  },
  {
    name: "PostgreSQL :: cast to regclass",
    sql: `select '${SRC}'::regclass as x from edge_logs`,
    code: "sql_syntax",
  },
  {
    name: "double-quoted string used as a table name",
    sql: `select * from "${SRC}"`,
    code: "relation_not_allowed",
  },
  { name: "fullwidth letters", sql: "ｓｅｌｅｃｔ id from edge_logs", code: "sql_syntax" },
  { name: "zero-width space in a keyword", sql: "sel\u200bect id from edge_logs", code: "sql_syntax" },
  {
    // issue 12: a NUL byte anywhere in SQL is refused before parsing (400, the parameter named)
    name: "NUL character outside a string",
    sql: "select id from edge_logs\u0000; drop table x",
    code: "invalid_parameter",
  },
  { name: "malformed hex escape in a string", sql: "select '\\x4' as x from edge_logs", code: "sql_syntax" },
  { name: "invalid unicode escape", sql: "select '\\uD800' as x from edge_logs", code: "sql_syntax" },
  { name: "BYTES literal", sql: "select b'\\x00' as x from edge_logs", code: "sql_syntax" },
  {
    name: "engine function named through a unicode-escaped string",
    sql: "select `\\u0070g_sleep`(1) as x from edge_logs",
    code: "function_not_allowed",
  },
  {
    name: "FOR UPDATE locking clause",
    sql: "select id from edge_logs for update",
    code: "sql_syntax",
  },
  {
    name: "FOR SYSTEM_TIME AS OF on a source",
    sql: `select id from ${SRC} for system_time as of current_timestamp()`,
    code: "sql_invalid",
  },
  {
    name: "WITH RECURSIVE (unbounded recursion)",
    sql: "with recursive r as (select 1 as n union all select n + 1 from r) select n from r",
    code: "sql_invalid",
  },
];

/** names the compiler reserves for itself (`__qes_*`) and internal names of the emitted SQL */
const reserved: HostileCase[] = [
  {
    name: "__qes_float call",
    sql: "select __qes_float('1; drop table x') as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "__QES_ARRAY call, upper case",
    sql: "select __QES_ARRAY(1, 2) as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "__qes_subscript call, backtick-quoted",
    sql: "select `__qes_subscript`(metadata, 0, 0) as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "__qes_interval with a made-up unit",
    sql: "select timestamp_sub(timestamp, __qes_interval(1, 'x')) as t from edge_logs",
    code: "sql_invalid",
  },
  { name: "__qes_ column alias", sql: "select id as __qes_x from edge_logs", code: "sql_invalid" },
  { name: "__qes_ table alias", sql: "select __qes_t.id from edge_logs as __qes_t", code: "sql_invalid" },
  {
    name: "__qes_ CTE name",
    sql: "with __qes_c as (select id from edge_logs) select * from __qes_c",
    code: "sql_invalid",
  },
  { name: "__qes_s placeholder name", sql: "select __qes_s0 from edge_logs", code: "sql_invalid" },
  { name: "emitted alias t0 as a table", sql: "select t0.id from edge_logs", code: "sql_invalid" },
];

/** nesting and size (§5 limits; sql_too_complex, never a crash or a 500) */
const complexity: HostileCase[] = [
  {
    name: "300 nested parentheses",
    sql: `select ${nest(300, "(", "1", ")")} as x from edge_logs`,
    code: "sql_too_complex",
  },
  {
    name: "5,000 nested parentheses",
    sql: `select ${nest(5000, "(", "1", ")")} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "40,000 opening parentheses",
    sql: `select id from edge_logs where id in ${rep("(", 40_000)}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "100 nested subqueries in FROM",
    sql: `select * from ${nest(100, "(select * from ", "edge_logs", ")")}`,
    code: "sql_too_complex",
  },
  {
    name: "100 nested IN subqueries",
    sql: `select id from edge_logs where id in ${nest(100, "(select id from edge_logs where id in ", "('a')", ")")}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "200 nested function calls",
    sql: `select ${nest(200, "lower(", "id", ")")} as x from edge_logs`,
    code: "sql_too_complex",
  },
  {
    name: "200 nested CASE expressions",
    sql: `select ${rep("case when true then ", 200)}1${rep(" end", 200)} as x from edge_logs`,
    code: "sql_too_complex",
  },
  {
    name: "1,000 nested array literals",
    sql: `select ${nest(1000, "[", "1", "]")} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "20,000 additions in a row",
    sql: `select 1${rep(" + 1", 20_000)} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "2,000 NOTs",
    sql: `select id from edge_logs where ${rep("not ", 2000)}true`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "20,000 chained subscripts",
    sql: `select metadata${rep("[0]", 20_000)} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "8,000 chained subscripts with fields",
    sql: `select metadata${rep("[0].request", 8000)} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "4,000 chained IS DISTINCT FROM",
    sql: `select id from edge_logs where id${rep(" is distinct from id", 4000)}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "2,000 chained AT TIME ZONE",
    sql: `select timestamp${rep(" at time zone 'UTC'", 2000)} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "5,000 nested ARRAY_AGG",
    sql: `select ${nest(5000, "array_agg(", "id", ")")} as x from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "10,000 QUALIFY keywords",
    sql: `select id from edge_logs ${rep("qualify ", 10_000)}`,
    code: "sql_syntax",
    via: "post",
  },
  // wide and long: before, a 500 (the emitter's stack, DuckDB's memory); now explicit limits
  {
    name: "3,000 UNION ALL branches (about 66 KB, inside the length and token limits)",
    sql: Array.from({ length: 3000 }, (_, i) => `select ${i} as x`).join(" union all "),
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "a SELECT list of 3,000 columns of a CTE",
    sql: `select ${Array.from({ length: 3000 }, (_, i) => `event_message as c${i}`).join(", ")} from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "a SELECT list of 3,000 string literals",
    sql: `select ${Array.from({ length: 3000 }, (_, i) => `'s${i}' as c${i}`).join(", ")} from edge_logs`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "a 3,000-column SELECT list inside a subquery",
    sql: `select count(*) as n from (select ${Array.from({ length: 3000 }, (_, i) => `id as c${i}`).join(", ")} from edge_logs)`,
    code: "sql_too_complex",
    via: "post",
  },
  // many relations in one join graph: DuckDB searched join orders for minutes (300 joins), past
  // its query timeout and its client, deaf to interrupts, holding one of the engine's slots
  {
    name: "60 joins of one CTE",
    sql: `select e0.id from edge_logs e0 ${Array.from({ length: 59 }, (_, i) => `join edge_logs e${i + 1} on e${i + 1}.id = e${i}.id`).join(" ")}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "30 UNNESTs of arrays cross-joined with a CTE (DuckDB: past a 30 s timeout)",
    sql: `select x from (select 1 as x from edge_logs e ${Array.from({ length: 30 }, (_, i) => `cross join unnest([1, 2]) as a${i}`).join(" ")} limit 1)`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "20 UNNESTs of a column's array, cross-joined",
    sql: `select count(*) as n from edge_logs e ${Array.from({ length: 20 }, (_, i) => `cross join unnest(split(e.id, '-')) as a${i}`).join(" ")}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "a chain of 100 CTEs, each reading the one before (PostgreSQL: 500 ran past a 30 s timeout)",
    sql: `with ${Array.from({ length: 100 }, (_, i) => `c${i} as (select * from ${i === 0 ? "edge_logs" : `c${i - 1}`})`).join(", ")} select id from c99`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "40 comma-separated FROM items",
    sql: `select count(*) as n from ${Array.from({ length: 40 }, (_, i) => `edge_logs e${i}`).join(", ")} where ${Array.from({ length: 39 }, (_, i) => `e${i + 1}.id = e${i}.id`).join(" and ")}`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "two subqueries of 10 joins each, joined (the engines flatten them into one graph)",
    sql: `select a.id from (select e0.id from edge_logs e0 ${Array.from({ length: 9 }, (_, i) => `join edge_logs e${i + 1} on e${i + 1}.id = e${i}.id`).join(" ")}) a join (select e0.id from edge_logs e0 ${Array.from({ length: 9 }, (_, i) => `join edge_logs e${i + 1} on e${i + 1}.id = e${i}.id`).join(" ")}) b on a.id = b.id`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "a CTE of 10 joins, joined with itself (an engine may inline it)",
    sql: `with a as (select e0.id from edge_logs e0 ${Array.from({ length: 9 }, (_, i) => `join edge_logs e${i + 1} on e${i + 1}.id = e${i}.id`).join(" ")}) select x.id from a x join a y on x.id = y.id`,
    code: "sql_too_complex",
    via: "post",
  },
  {
    name: "SQL over 100,000 characters (a long string literal)",
    sql: `select id from edge_logs where id = '${"x".repeat(100_001)}'`,
    code: "sql_too_complex",
    via: "post",
    noPosition: true,
  },
  {
    name: "SQL of 900,000 characters of whitespace",
    sql: `select id from edge_logs${" ".repeat(900_000)}`,
    code: "sql_too_complex",
    via: "post",
    noPosition: true,
  },
];

/** parameters and variables that are not the endpoint's (§5: `@name` of declared parameters only) */
const parameters: HostileCase[] = [
  { name: "@@system variable", sql: "select @@version as v from edge_logs", code: "sql_syntax" },
  { name: "@@project_id (BigQuery)", sql: "select @@project_id as p from edge_logs", code: "sql_syntax" },
  { name: "positional $1", sql: "select id from edge_logs where id = $1", code: "sql_syntax" },
  { name: "positional ?", sql: "select id from edge_logs where id = ?", code: "sql_syntax" },
  { name: "named :param", sql: "select id from edge_logs where id = :id", code: "sql_syntax" },
  { name: "undeclared @parameter", sql: "select id from edge_logs where id = @id", code: "sql_invalid" },
  { name: "@sql is not a query parameter", sql: "select @sql as s from edge_logs", code: "sql_invalid" },
  {
    name: "@api_key is not a query parameter",
    sql: "select @api_key as k from edge_logs",
    code: "sql_invalid",
  },
  { name: "bare @", sql: "select @ as x from edge_logs", code: "sql_syntax" },
  { name: "@__qes parameter", sql: "select @__qes_now as x from edge_logs", code: "sql_invalid" },
  {
    name: "parameter called like a function",
    sql: "select @project(1) as x from edge_logs",
    code: "sql_syntax",
  },
  {
    name: "@constructor (a key every object inherits)",
    sql: "select @constructor as x from edge_logs",
    code: "sql_invalid",
  },
  { name: "@__proto__", sql: "select @__proto__ as x from edge_logs", code: "sql_invalid" },
  { name: "@toString", sql: "select @toString as x from edge_logs", code: "sql_invalid" },
  { name: "parameter as a table", sql: "select * from @project", code: "sql_syntax" },
];

/** queries that are valid BigQuery but outside what the sandbox accepts */
const invalid: HostileCase[] = [
  { name: "empty SQL of spaces", sql: "   ", code: "sql_syntax" },
  { name: "only a comment", sql: "-- nothing here", code: "sql_syntax" },
  { name: "only a semicolon", sql: ";", code: "statement_not_allowed" },
  { name: "unknown CTE column", sql: "select password from edge_logs", code: "sql_invalid" },
  {
    name: "UNION without ALL or DISTINCT",
    sql: "select id from edge_logs union select id from auth_logs",
    code: "sql_invalid",
  },
  {
    name: "refused regular expression",
    sql: "select id from edge_logs where regexp_contains(id, r'(a)\\1')",
    code: "sql_invalid",
  },
  {
    name: "regular expression nesting counts past RE2's limit",
    sql: "select count(*) as n from edge_logs where regexp_contains(event_message, r'(((a{100}){100}){100})')",
    code: "sql_invalid",
  },
  {
    name: "regular expression count past PostgreSQL's limit",
    sql: "select count(*) as n from edge_logs where regexp_contains(event_message, r'a{256}')",
    code: "sql_invalid",
  },
  // inside the portable subset's shape, refused by RE2's own parser: before, the engine refused
  // them with its own words (or, on PostgreSQL, read `[[:foo:]]` differently)
  {
    name: "regular expression with a reversed class range",
    sql: "select id from edge_logs where regexp_contains(id, '[b-a]')",
    code: "sql_invalid",
  },
  {
    name: "regular expression with an unknown POSIX class name",
    sql: "select regexp_extract(event_message, r'[[:foo:]]+') as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "regular expression with a reversed range in REGEXP_REPLACE",
    sql: "select regexp_replace(event_message, r'x[9-0]', '') as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "FORMAT with an unknown specifier",
    sql: "select format('%n', 1) as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "FORMAT with a width of a gigabyte",
    sql: "select format('%999999999d', 1) as x from edge_logs",
    code: "sql_invalid",
  },
  {
    name: "FORMAT with a precision of a gigabyte",
    sql: "select format('%.999999999f', 1.5) as x from edge_logs",
    code: "sql_invalid",
  },
];

const USAGE = { name: "usage.api-counts", params: { interval: "hourly", project: "alpha" } };
/** an operator's endpoint without query sandboxing (hostile-queries.test.ts writes it) */
export const LOCKED_ENDPOINT = {
  name: "edge.locked",
  sql: "select id, event_message from `cloudflare.logs.prod` where project = @project",
  settings: {
    id: "8d2e3f4a-5b6c-4d7e-9f8a-0b1c2d3e4f5a",
    sandboxable: false,
    params: { project: { required: true, kind: "string" } },
  },
};
const LOCKED = { name: LOCKED_ENDPOINT.name, params: { project: "alpha" } };

/** the other endpoints: their own CTEs only, and none at all where sandboxing is off */
const otherEndpoints: HostileCase[] = [
  {
    name: "usage.api-counts: its CTE is allowed, the source behind it is not",
    sql: "select count(*) as n from requests where path in (select id from `cloudflare.logs.prod`)",
    code: "relation_not_allowed",
    endpoint: USAGE,
  },
  {
    name: "usage.api-counts: logs.all's CTEs are not its own",
    sql: "select * from edge_logs",
    code: "relation_not_allowed",
    endpoint: USAGE,
  },
  {
    name: "usage.api-counts: a project pattern outside the RE2 subset",
    sql: "select count(*) as n from requests",
    code: "invalid_parameter",
    endpoint: { name: "usage.api-counts", params: { interval: "hourly", project: "(a)\\1" } },
    noPosition: true,
  },
  {
    name: "usage.api-counts: a project pattern RE2 refuses (reversed range)",
    sql: "select count(*) as n from requests",
    code: "invalid_parameter",
    endpoint: { name: "usage.api-counts", params: { interval: "hourly", project: "[b-a]" } },
    noPosition: true,
    param: "project",
  },
  {
    name: "usage.api-counts: a project pattern RE2 refuses (unknown class name)",
    sql: "select count(*) as n from requests",
    code: "invalid_parameter",
    endpoint: { name: "usage.api-counts", params: { interval: "hourly", project: "[[:foo:]]" } },
    noPosition: true,
    param: "project",
  },
  {
    name: "usage.api-counts: an interval outside its allowed values",
    sql: "select count(*) as n from requests",
    code: "invalid_parameter",
    endpoint: { name: "usage.api-counts", params: { interval: "yearly", project: "alpha" } },
    noPosition: true,
  },
  {
    name: "endpoint without sandboxing: a harmless query",
    sql: "select 1 as x",
    code: "sql_not_allowed",
    endpoint: LOCKED,
    noPosition: true,
  },
  {
    name: "endpoint without sandboxing: a query of its source",
    sql: "select * from `cloudflare.logs.prod`",
    code: "sql_not_allowed",
    endpoint: LOCKED,
    noPosition: true,
  },
  {
    name: "endpoint without sandboxing: through POST",
    sql: "select id from `cloudflare.logs.prod`",
    code: "sql_not_allowed",
    endpoint: LOCKED,
    via: "post",
    noPosition: true,
  },
];

export const HOSTILE_CASES: HostileCase[] = [
  ...statements,
  ...functions,
  ...relations,
  ...tricks,
  ...reserved,
  ...complexity,
  ...parameters,
  ...invalid,
  ...otherEndpoints,
];

/**
 * Valid consumer queries that must run (the counter moves by one each), among them the strings and
 * comments that look hostile but are data.
 */
export interface ControlCase {
  name: string;
  sql: string;
  /** expected rows */
  rows: Record<string, unknown>[];
  via?: "get" | "post";
}

export const CONTROL_CASES: ControlCase[] = [
  {
    name: "newest ids of the project",
    sql: "select id from edge_logs order by timestamp desc limit 2",
    rows: [{ id: "a-1" }, { id: "a-2" }],
  },
  {
    name: "a string holding a quote, a semicolon and a statement stays a string",
    sql: `select '\\'; drop table ${SRC}; --' as x from edge_logs limit 1`,
    rows: [{ x: `'; drop table ${SRC}; --` }],
  },
  {
    name: "-- and /* inside strings stay strings",
    sql: "select '-- not a comment' as a, \"/* nor this */\" as b from edge_logs limit 1",
    rows: [{ a: "-- not a comment", b: "/* nor this */" }],
  },
  {
    name: "a comment holding a statement is dropped",
    sql: `select id /* ; drop table ${SRC}; */ from edge_logs -- ; delete from edge_logs\norder by id limit 1`,
    rows: [{ id: "a-1" }],
  },
  {
    name: "a unicode-escaped quote in a string",
    sql: "select '\\u0027 or 1=1 --' as x from edge_logs limit 1",
    rows: [{ x: "' or 1=1 --" }],
  },
  {
    name: "a triple-quoted string with quotes and a newline",
    sql: "select '''it's\n'; select 1''' as x from edge_logs limit 1",
    rows: [{ x: "it's\n'; select 1" }],
  },
  {
    name: "backtick-quoted CTE and column names",
    sql: "select `id` from `edge_logs` order by id limit 1",
    rows: [{ id: "a-1" }],
  },
  {
    name: "a trailing semicolon and a # comment",
    sql: "select count(*) as n from edge_logs; # done",
    rows: [{ n: 3 }],
  },
  {
    name: "the declared @project parameter",
    sql: "select count(*) as n from edge_logs where @project = 'alpha'",
    rows: [{ n: 3 }],
  },
  {
    name: "another stored CTE, through POST",
    sql: "select event_message from postgres_logs",
    rows: [{ event_message: "connection received" }],
    via: "post",
  },
  {
    name: "a query that reads no CTE",
    sql: "select 1 as x",
    rows: [{ x: 1 }],
  },
  {
    name: "fields named like inherited object keys are unknown fields: NULL",
    sql: "select m.constructor as a, m.__proto__ as b, metadata[0].request[0].toString as c from edge_logs cross join unnest(metadata) as m order by id limit 1",
    rows: [{ a: null, b: null, c: null }],
  },
  {
    name: "a filter of 300 conditions",
    sql: `select count(*) as n from edge_logs where ${Array.from({ length: 300 }, (_, i) => `id != 'x${i}'`).join(" and ")}`,
    rows: [{ n: 3 }],
    via: "post",
  },
  {
    name: "the longest set operation allowed: 256 UNION ALL branches",
    sql: `select count(*) as n, sum(x) as total from (${Array.from({ length: 256 }, (_, i) => `select ${i} as x`).join(" union all ")})`,
    rows: [{ n: 256, total: 32640 }],
    via: "post",
  },
  {
    name: "the most relations one join graph may have: 16 joins of one CTE",
    sql: `select count(*) as n from edge_logs e0 ${Array.from({ length: 15 }, (_, i) => `join edge_logs e${i + 1} on e${i + 1}.id = e${i}.id`).join(" ")}`,
    rows: [{ n: 3 }],
    via: "post",
  },
  {
    name: "a chain of 63 CTEs over a stored one: 64 levels",
    sql: `with ${Array.from({ length: 63 }, (_, i) => `c${i} as (select * from ${i === 0 ? "edge_logs" : `c${i - 1}`})`).join(", ")} select count(*) as n from c62`,
    rows: [{ n: 3 }],
    via: "post",
  },
  {
    name: "15 UNNESTs of arrays with a CTE: 16 relations",
    sql: `select count(*) as n from (select 1 as x from edge_logs e ${Array.from({ length: 15 }, (_, i) => `cross join unnest([1, 2]) as a${i}`).join(" ")} limit 5)`,
    rows: [{ n: 5 }],
    via: "post",
  },
  {
    name: "UNNESTs of records (one element each) are no relations",
    sql: `select count(*) as n from edge_logs e ${Array.from({ length: 20 }, (_, i) => `cross join unnest(e.metadata) as m${i}`).join(" ")}`,
    rows: [{ n: 3 }],
    via: "post",
  },
  {
    name: "256 UNION ALL branches that each read a CTE: a join graph each",
    sql: `select count(*) as n from (${Array.from({ length: 256 }, () => "select id from edge_logs").join(" union all ")})`,
    rows: [{ n: 768 }],
    via: "post",
  },
  {
    name: "the widest SELECT list allowed: 1,000 columns of a CTE",
    sql: `select count(*) as n from (select ${Array.from({ length: 1000 }, (_, i) => `event_message as c${i}`).join(", ")} from edge_logs)`,
    rows: [{ n: 3 }],
    via: "post",
  },
  {
    name: "a name that only looks reserved",
    sql: "select id as qes_id from edge_logs order by id limit 1",
    rows: [{ qes_id: "a-1" }],
  },
];
