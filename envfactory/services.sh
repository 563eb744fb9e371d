#!/usr/bin/env bash
# Start the services that many-machine runs use, on loopback: Redis (the Celery broker) and
# PostgreSQL (the registry). Installs Debian's packages where they are missing and we are root.
# Idempotent; prints `export ...` lines for the caller to eval:
#
#     eval "$(bash envfactory/services.sh)"
#
# ENVFACTORY_SERVICES_DIR (default ~/.local/share/envfactory/services) holds their data.
set -euo pipefail

dir=${ENVFACTORY_SERVICES_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/envfactory/services}
redis_port=${ENVFACTORY_REDIS_PORT:-6379}
pg_port=${ENVFACTORY_PG_PORT:-55432}
mkdir -p "$dir"

need=()
command -v redis-server >/dev/null || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    echo "services: missing ${need[*]}; install them (Debian: apt-get install ${need[*]})" >&2
    exit 1
  fi
  echo "services: installing ${need[*]} ..." >&2
  export DEBIAN_FRONTEND=noninteractive
  # Wait for another apt (an image build installing debootstrap) rather than fail on its lock.
  apt=(apt-get -o DPkg::Lock::Timeout=600)
  "${apt[@]}" install -y -qq "${need[@]}" >/dev/null 2>&1 ||
    { "${apt[@]}" update -qq >/dev/null && "${apt[@]}" install -y -qq "${need[@]}" >/dev/null; }
fi

# Redis: no persistence, loopback only.
if ! redis-cli -p "$redis_port" ping >/dev/null 2>&1; then
  redis-server --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
    --daemonize yes --logfile "$dir/redis.log" --dir "$dir" >&2
  for _ in $(seq 50); do redis-cli -p "$redis_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
fi

# PostgreSQL: a cluster of our own (trust on loopback), run as the postgres user when root.
bindir=$(dirname "$(ls -d /usr/lib/postgresql/*/bin/initdb | sort -V | tail -1)")
data="$dir/pg"
as=()
if [ "$(id -u)" = 0 ]; then
  # postgres refuses to run as root, and its user cannot enter root's home.
  id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres
  as=(runuser -u postgres --)
  data=${ENVFACTORY_PG_DIR:-/var/lib/envfactory/pg}
fi
if [ ! -f "$data/PG_VERSION" ]; then
  mkdir -p "$data" && { [ ${#as[@]} -eq 0 ] || chown postgres "$data"; }
  "${as[@]}" "$bindir/initdb" -D "$data" -A trust -U envfactory >/dev/null
fi
if ! "${as[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1; then
  rm -f "$data/postmaster.pid"  # left by a machine that stopped without a shutdown
  "${as[@]}" "$bindir/pg_ctl" -D "$data" -l "$data/log" -w start \
    -o "-p $pg_port -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200" >/dev/null
fi

echo "export ENVFACTORY_BROKER_URL=redis://127.0.0.1:$redis_port/0"
echo "export ENVFACTORY_TEST_REDIS_URL=redis://127.0.0.1:$redis_port/15"
echo "export ENVFACTORY_TEST_PG_URL=postgresql+psycopg://envfactory@127.0.0.1:$pg_port/postgres"
