#!/usr/bin/env bash
# Builds the Dockerfile for real and runs the image (issue: the image must build, not just parse).
#
# Docker Hub's node:24-slim cannot be pulled on CI machines, so this builds an equivalent base from
# Debian's packages (debootstrap: Debian 12 minbase) plus the Node 24 binary of the npm registry's
# `node` package and npm from the registry, then builds the Dockerfile on it with buildah (Debian's
# package; vfs storage, chroot isolation: no daemon, no overlay, no user namespaces) and runs:
#   plumb --version, plumb validate examples, and the controller against a local control plane
#   (/livez, /healthz, /readyz answering; the image's HEALTHCHECK script passing).
# Every build-time file lives in a temporary directory removed at the end: nothing is cached.
# Needs root (debootstrap, buildah). Fails loudly, never skips: exit 0 only when all of it passed.
# Run from the repository root after `npm run build` (the control plane runs from dist/).
set -euo pipefail
cd "$(dirname "$0")/.."

say() { echo "=== image test: $*"; }
fail() {
  echo "=== image test FAILED: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and buildah build and run images as root here)"
[ -f dist/src/cli/main.js ] || fail "run npm run build first (the local control plane runs from dist/)"
missing=()
for tool in buildah debootstrap; do command -v "$tool" >/dev/null 2>&1 || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]} from Debian's packages"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
    fail "could not install ${missing[*]} (apt-get install -y ${missing[*]})"
fi

tmp=$(mktemp -d /tmp/plumb-image-test.XXXXXX)
cp_pid="" ctl_pid="" ctr="" ro_root=""
bh() { buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs "$@"; }
cleanup() {
  set +e # undo everything, whatever fails on the way
  trap - ERR
  # Only the processes this script started, by their ids: the control plane, and the buildah run
  # of the controller with everything in its session (started with setsid below), then whatever
  # still runs chrooted into this run's directory (the controller, if buildah left it behind).
  [ -n "$cp_pid" ] && kill -TERM "$cp_pid" 2>/dev/null
  [ -n "$ctl_pid" ] && kill -TERM $(pgrep -s "$ctl_pid") 2>/dev/null
  wait 2>/dev/null
  for _ in $(seq 50); do
    local left=()
    for proc in /proc/[0-9]*; do
      case "$(readlink "$proc/root" 2>/dev/null)" in "$tmp"/*) left+=("${proc#/proc/}") ;; esac
    done
    [ "${#left[@]}" -eq 0 ] && break
    kill -TERM "${left[@]}" 2>/dev/null
    sleep 0.2
  done
  [ -n "$ro_root" ] && umount "$ro_root" 2>/dev/null
  bh rm --all >/dev/null 2>&1
  bh rmi --all --force >/dev/null 2>&1
  rm -rf "$tmp" || { sleep 2 && rm -rf "$tmp"; } || echo "=== image test: could not remove $tmp" >&2
}
trap cleanup EXIT
trap 'echo "=== image test FAILED: line $LINENO: $BASH_COMMAND" >&2' ERR
export BUILDAH_ISOLATION=chroot
start=$SECONDS

say "buildah $(buildah --version | awk '{print $3}'): checking it can build and run here"
bh from scratch >/dev/null || fail "buildah cannot create a container (buildah --storage-driver vfs from scratch)"

say "base image: Debian 12 minbase (debootstrap) + Node 24 from the npm registry"
debootstrap --variant=minbase bookworm "$tmp/rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" \
  >"$tmp/debootstrap.log" 2>&1 || {
  tail -20 "$tmp/debootstrap.log"
  fail "debootstrap could not build the base (log above)"
}
node24=$(npx -y node@24 -p process.execPath 2>/dev/null | tail -1)
[ -x "$node24" ] || fail "could not install Node 24 from the registry (npx -y node@24)"
install -m 0755 "$node24" "$tmp/rootfs/usr/local/bin/node"
npm pack npm@11 --pack-destination "$tmp" --silent >/dev/null || fail "could not fetch npm from the registry"
mkdir -p "$tmp/rootfs/usr/local/lib/node_modules/npm"
tar -xzf "$tmp"/npm-*.tgz -C "$tmp/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$tmp/rootfs/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$tmp/rootfs/usr/local/bin/npx"
# This machine's trust store (it may reach the registry through a TLS-inspecting proxy): the build's
# npm ci trusts what the host trusts. Only the test's base carries it, never the Dockerfile.
trust=${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}
[ -f "$trust" ] && install -D -m 0644 "$trust" "$tmp/rootfs/etc/ssl/host-trust.pem"
mkdir -p "$tmp/base"
tar -C "$tmp/rootfs" -cf "$tmp/base/rootfs.tar" .
rm -rf "$tmp/rootfs"
{
  echo 'FROM scratch'
  echo 'ADD rootfs.tar /'
  [ -f "$trust" ] && echo 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/host-trust.pem'
  echo 'CMD ["node"]'
} >"$tmp/base/Containerfile"
bh bud --quiet -f "$tmp/base/Containerfile" -t localhost/plumb-base:node24 "$tmp/base" >/dev/null ||
  fail "could not build the base image"
rm -f "$tmp/base/rootfs.tar"
say "base built ($((SECONDS - start)) s): $(bh run "$(bh from localhost/plumb-base:node24)" -- node --version)"

say "building the Dockerfile (BASE=localhost/plumb-base:node24)"
bh bud --layers=false --build-arg BASE=localhost/plumb-base:node24 -f Dockerfile -t localhost/plumb:image-test . \
  >"$tmp/build.log" 2>&1 || {
  tail -40 "$tmp/build.log"
  fail "the Dockerfile does not build (log above)"
}
say "image built ($((SECONDS - start)) s)"
ctr=$(bh from localhost/plumb:image-test)

expected=$(node -p 'require("./package.json").version')
version=$(bh run "$ctr" -- plumb --version) || fail "plumb --version failed in the image"
[ "$version" = "$expected" ] || fail "plumb --version says \"$version\", package.json says $expected"
say "plumb --version: $version"
user=$(bh run "$ctr" -- id -u)
[ "$user" = 10001 ] || fail "the image runs as uid $user, not 10001"
bh run --workingdir /app "$ctr" -- plumb validate examples >"$tmp/validate.log" 2>&1 || {
  cat "$tmp/validate.log"
  fail "plumb validate examples failed in the image"
}
say "plumb validate examples: ok"

# The controller in the image against a local control plane on the host (chroot isolation shares
# the host's network, so both reach each other on loopback).
key="image-test-key-$RANDOM$RANDOM"
node dist/src/cli/main.js control-plane --port 0 --api-key "$key" --revision-seconds 0 >"$tmp/cp.log" 2>&1 &
cp_pid=$!
api=""
for _ in $(seq 100); do
  api=$(grep -o 'listening on http://[0-9.:]*' "$tmp/cp.log" | head -1 | sed 's/listening on //') || true
  [ -n "$api" ] && break
  sleep 0.1
done
[ -n "$api" ] || fail "the local control plane did not start: $(cat "$tmp/cp.log")"
port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')
# As examples/kubernetes runs it: on every interface, the API key and the status token read from
# files mounted read-only (this run's throwaway values: they only open the control plane above),
# the root filesystem read-only with /work and /tmp writable (readOnlyRootFilesystem, emptyDirs).
ro_ctr=$(bh from localhost/plumb:image-test)
ro_root=$(bh mount "$ro_ctr")
# What buildah mounts over must exist before the root turns read-only.
mkdir -p "$ro_root/etc/plumb/secrets" "$ro_root/run"
touch "$ro_root/run/.containerenv" "$ro_root/etc/hosts" "$ro_root/etc/resolv.conf" "$ro_root/etc/hostname"
mount --bind "$ro_root" "$ro_root" && mount -o remount,bind,ro "$ro_root" ||
  fail "cannot make the container's root filesystem read-only"
mkdir -p "$tmp/work" "$tmp/tmp"
chown 10001:10001 "$tmp/work" && chmod 1777 "$tmp/tmp"
# One control plane, so a repository without environments: examples/' prod as plumb render prints
# it (plain Deployments), with the secret file and the source directory its manifests name.
mkdir -p "$tmp/work/deployments"
node dist/src/cli/main.js render examples --env prod >"$tmp/work/deployments/prod.yaml" ||
  fail "plumb render examples --env prod failed"
cp -r examples/saas/secrets examples/saas/docs-agent "$tmp/work/deployments/"
mkdir -p "$tmp/secrets"
printf '%s' "$key" >"$tmp/secrets/api-key"
token="image-test-token-$RANDOM$RANDOM"
printf '%s' "$token" >"$tmp/secrets/status-token"
chmod 0755 "$tmp/secrets" && chmod 0444 "$tmp/secrets"/*
setsid buildah --root "$tmp/storage" --runroot "$tmp/run" --storage-driver vfs run \
  --volume "$tmp/secrets:/etc/plumb/secrets:ro" --volume "$tmp/work:/work" --volume "$tmp/tmp:/tmp" \
  --env "PLUMB_API_URL=$api" --env HOME=/tmp --env OPENAI_API_KEY=image-test "$ro_ctr" -- \
  plumb controller --dir /work/deployments --status-dir /work/status --listen "0.0.0.0:$port" \
  --api-key-file /etc/plumb/secrets/api-key --status-token-file /etc/plumb/secrets/status-token \
  >"$tmp/controller.log" 2>&1 &
ctl_pid=$!
probe() { node -e 'fetch(process.argv[1]).then(r=>process.exit(r.status===200?0:1),()=>process.exit(1))' "$1"; }
ready=""
for _ in $(seq 300); do
  if probe "http://127.0.0.1:$port/readyz"; then
    ready=yes
    break
  fi
  kill -0 "$ctl_pid" 2>/dev/null || break
  sleep 0.2
done
[ -n "$ready" ] || {
  tail -30 "$tmp/controller.log"
  fail "the controller in the image never answered /readyz 200 on 127.0.0.1:$port (log above)"
}
for path in /livez /healthz; do
  probe "http://127.0.0.1:$port$path" || fail "the controller in the image does not answer $path 200"
done
status_code() {
  node -e 'fetch(process.argv[1],{headers:process.argv[2]?{authorization:`Bearer ${process.argv[2]}`}:{}})
    .then(r=>console.log(r.status),()=>console.log(0))' "http://127.0.0.1:$port/status" "${1:-}"
}
[ "$(status_code)" = 401 ] || fail "/status answers without the status token"
[ "$(status_code "$token")" = 200 ] || fail "/status refuses the status token read from its file"
# The HEALTHCHECK script, in the image, reading the running controller's --listen from its command line.
plumb_pid=$(pgrep -f -s "$ctl_pid" -- "--listen 0.0.0.0:$port" | head -1) ||
  fail "cannot find the controller process"
bh run "$ctr" -- node /app/healthcheck.mjs "$plumb_pid" || fail "the image's HEALTHCHECK fails on a healthy controller"
# It wrote its status where Kubernetes gives it room, and reconciled against the control plane.
for _ in $(seq 150); do
  ls "$tmp/work/status"/*.json >/dev/null 2>&1 && break
  sleep 0.2
done
ls "$tmp/work/status"/*.json >/dev/null 2>&1 || fail "the controller in the image wrote no status under /work/status"
say "controller in the image (read-only root, secrets from files, 0.0.0.0): /livez /healthz /readyz 200, /status behind the token, status written, HEALTHCHECK passes"
say "passed in $((SECONDS - start)) s"
