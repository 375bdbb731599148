#!/usr/bin/env bash
# Makes sure the services the tests use run on loopback:
#   PostgreSQL at 127.0.0.1:5432, reachable as QES_POSTGRES_URL (default
#              postgres://postgres@127.0.0.1:5432/postgres: user postgres, no password)
#   Redis      at 127.0.0.1:6379
# Starts them when installed; installs them from Debian packages when missing and running as
# root; on a fresh Debian install lets loopback connections in without a password (trust), which
# Debian's own pg_hba.conf does not. Otherwise stops with the exact commands to run.
set -euo pipefail

PG_URL="${QES_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
DEFAULT_PG_URL="postgres://postgres@127.0.0.1:5432/postgres"
REDIS_HOST=127.0.0.1
REDIS_PORT=6379

say() { printf 'ensure-services: %s\n' "$*" >&2; }
die() {
  say "$1"
  shift
  if [ $# -gt 0 ]; then
    printf '\nRun:\n' >&2
    printf '  %s\n' "$@" >&2
  fi
  exit 1
}
is_root() { [ "$(id -u)" = 0 ]; }
have() { command -v "$1" >/dev/null 2>&1; }

# ---------------------------------------------------------------- helpers: PostgreSQL
pg_connects() { psql "$PG_URL" -X -q -t -c 'select 1' >/dev/null 2>&1; }
pg_listening() { (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; }
pg_versions() { ls /etc/postgresql 2>/dev/null | sort -V; }

wait_for() {
  local check=$1
  for _ in $(seq 1 60); do
    if $check; then return 0; fi
    sleep 0.5
  done
  return 1
}

apt_install() {
  say "installing $* from Debian packages"
  export DEBIAN_FRONTEND=noninteractive
  # another apt-get (ensure-chromium.sh, unattended upgrades) may hold the lock for a while
  apt-get -o DPkg::Lock::Timeout=300 update -qq
  apt-get -o DPkg::Lock::Timeout=300 install -y -qq "$@" >/dev/null
}

start_postgres() {
  local v
  for v in $(pg_versions); do
    if [ -d "/etc/postgresql/$v/main" ]; then
      say "starting PostgreSQL $v (cluster main)"
      pg_ctlcluster --skip-systemctl-redirect "$v" main start 2>/dev/null || true
    fi
  done
}

# Debian asks for a password on loopback TCP; the default URL has none. Put trust rules for
# loopback first in pg_hba.conf and reload (only used when the default URL is in effect).
trust_loopback() {
  local v hba
  for v in $(pg_versions); do
    hba="/etc/postgresql/$v/main/pg_hba.conf"
    [ -f "$hba" ] || continue
    if ! grep -q '^# qes: loopback trust' "$hba"; then
      say "allowing password-less loopback connections in $hba"
      {
        echo "# qes: loopback trust (scripts/ensure-services.sh), for local development and tests"
        echo "host    all    all    127.0.0.1/32    trust"
        echo "host    all    all    ::1/128         trust"
        cat "$hba"
      } >"$hba.qes-new"
      chown --reference="$hba" "$hba.qes-new"
      chmod --reference="$hba" "$hba.qes-new"
      mv "$hba.qes-new" "$hba"
    fi
    pg_ctlcluster --skip-systemctl-redirect "$v" main reload 2>/dev/null || true
  done
}

ensure_postgres() {
  if ! have psql && pg_listening && ! is_root; then
    say "PostgreSQL answers on 127.0.0.1:5432 (no psql here to verify the login)"
    return 0
  fi
  if have psql && pg_connects; then
    say "PostgreSQL is up ($PG_URL)"
    return 0
  fi
  if ! have pg_ctlcluster || [ -z "$(pg_versions)" ]; then
    if is_root && have apt-get; then
      apt_install postgresql
    else
      die "PostgreSQL is not installed." \
        "sudo apt-get update && sudo apt-get install -y postgresql" \
        "sudo pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start" \
        "bash scripts/ensure-services.sh"
    fi
  fi
  if [ -z "$(ls /etc/postgresql/*/main 2>/dev/null)" ] && is_root; then
    v=$(ls /usr/lib/postgresql | sort -V | tail -1)
    say "creating cluster $v/main"
    pg_createcluster "$v" main >/dev/null
  fi
  if ! pg_listening; then
    if is_root || [ "$(id -un)" = postgres ]; then
      start_postgres
    else
      die "PostgreSQL is installed but not running." \
        "sudo pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main start" \
        "bash scripts/ensure-services.sh"
    fi
  fi
  wait_for pg_listening || die "PostgreSQL did not start; see /var/log/postgresql/."
  if pg_connects; then
    say "PostgreSQL is up ($PG_URL)"
    return 0
  fi
  if [ "$PG_URL" = "$DEFAULT_PG_URL" ] && is_root; then
    trust_loopback
    wait_for pg_connects || true
  fi
  if pg_connects; then
    say "PostgreSQL is up ($PG_URL)"
    return 0
  fi
  die "PostgreSQL runs but refuses $PG_URL (password authentication?)." \
    "either set QES_POSTGRES_URL to a URL with the password, e.g. postgres://postgres:<password>@127.0.0.1:5432/postgres" \
    "or allow loopback without a password, as root:" \
    "  sudo sed -i '1i host all all 127.0.0.1/32 trust\\nhost all all ::1/128 trust' /etc/postgresql/*/main/pg_hba.conf" \
    "  sudo pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql) main reload"
}

# ---------------------------------------------------------------- helpers: Redis
redis_up() {
  if have redis-cli; then
    [ "$(redis-cli -h "$REDIS_HOST" -p "$REDIS_PORT" ping 2>/dev/null)" = PONG ]
  else
    (exec 3<>"/dev/tcp/$REDIS_HOST/$REDIS_PORT" && printf 'PING\r\n' >&3 && head -c 5 <&3 | grep -q PONG) 2>/dev/null
  fi
}

start_redis() {
  say "starting redis-server on $REDIS_HOST:$REDIS_PORT"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port "$REDIS_PORT" --save "" --appendonly no >/dev/null
}

ensure_redis() {
  if redis_up; then
    say "Redis is up ($REDIS_HOST:$REDIS_PORT)"
    return 0
  fi
  if ! have redis-server; then
    if is_root && have apt-get; then
      apt_install redis-server
      # the package may have started it already
      if redis_up; then
        say "Redis is up ($REDIS_HOST:$REDIS_PORT)"
        return 0
      fi
    else
      die "Redis is not installed." \
        "sudo apt-get update && sudo apt-get install -y redis-server" \
        "redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save \"\" --appendonly no"
    fi
  fi
  start_redis
  wait_for redis_up || die "redis-server did not answer on $REDIS_HOST:$REDIS_PORT."
  say "Redis is up ($REDIS_HOST:$REDIS_PORT)"
}

# The tests isolate themselves by schema inside one database (QES_TEST_POSTGRES_URL, default
# `test`), which a fresh Debian cluster does not have: create it when it is missing.
ensure_test_database() {
  local url="${QES_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test}"
  local db="${url##*/}"
  db="${db%%\?*}"
  have psql || return 0
  if psql "$url" -X -q -t -c 'select 1' >/dev/null 2>&1; then return 0; fi
  say "creating the test database \"$db\""
  psql "$PG_URL" -X -q -v ON_ERROR_STOP=1 -c "create database \"$db\"" >/dev/null ||
    die "could not create the test database \"$db\" through $PG_URL." \
      "psql \"$PG_URL\" -c 'create database \"$db\"'"
}

ensure_postgres
ensure_test_database
ensure_redis
