#!/usr/bin/env bash
# Runs COMMAND under mpirun on two "hosts": two network namespaces joined
# by a virtual Ethernet pair (10.213.0.1 and 10.213.0.2), SLOTS ranks on
# each, with the TCP settings of docs/Runtime.md ("Ranks on several
# machines"): a hostfile, --mca btl tcp,self, the network given as a
# subnet for both the messages and mpirun's own wiring, and TCP keepalive
# on mpirun's own connections (1 s idle, 3 probes 1 s apart: a host that
# vanishes is noticed within 4 s). mpirun runs in the first namespace and
# starts a daemon in each through `ip netns exec` (the launcher that ssh
# would be between real machines). Prints the mpirun command, then
# COMMAND's output, then how many bytes crossed the link.
# Needs root and `ip netns` (lit's `netns` feature); removes the namespaces
# and whatever still runs in them on exit, whatever happens.
#
#   two-hosts.sh DIR SLOTS COMMAND...     (DIR: a scratch folder)
#
# The link taken down mid-run (test/e2e/mpi-link-down.test):
#   TWO_HOSTS_CUT=S       take host 2's end of the link down S seconds
#                         after mpirun starts; then print when mpirun
#                         returned and what is left running on each host
#                         (waiting up to 5 s for it to end), and exit with
#                         mpirun's status (124: still running after the
#                         limit).
#   TWO_HOSTS_LIMIT=S     end mpirun after S seconds (default 120).
#   TWO_HOSTS_TCP_RETRIES2=N   net.ipv4.tcp_retries2 on both hosts: how
#                         often TCP resends data that is not acknowledged
#                         before it gives the connection up (default 15).
set -euo pipefail
dir=$1 slots=$2
shift 2
mkdir -p "$dir"
a=tp$$a b=tp$$b
cleanup() {
  for ns in "$a" "$b"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      kill -9 "$pid" 2>/dev/null || true
    done
  done
  ip netns del "$a" 2>/dev/null || true
  ip netns del "$b" 2>/dev/null || true
}
trap cleanup EXIT
ip netns add "$a"
ip netns add "$b"
ip link add "tpv$$a" type veth peer name "tpv$$b"
ip link set "tpv$$a" netns "$a"
ip link set "tpv$$b" netns "$b"
ip -n "$a" addr add 10.213.0.1/24 dev "tpv$$a"
ip -n "$b" addr add 10.213.0.2/24 dev "tpv$$b"
for ns in "$a" "$b"; do
  ip -n "$ns" link set lo up
  if [ -n "${TWO_HOSTS_TCP_RETRIES2:-}" ]; then
    ip netns exec "$ns" sysctl -q net.ipv4.tcp_retries2="$TWO_HOSTS_TCP_RETRIES2"
  fi
done
ip -n "$a" link set "tpv$$a" up
ip -n "$b" link set "tpv$$b" up

# The hostfile names the namespaces; the launcher runs the daemon's
# command line (one string, as ssh passes it) in the namespace named.
printf '%s slots=%s\n%s slots=%s\n' "$a" "$slots" "$b" "$slots" > "$dir/hosts"
# Both "hosts" have this machine's host name and /tmp: mpirun and the
# remote daemon each get a TMPDIR (where OpenMPI puts its session
# directory) of their own, or the second one's mkdir of
# ompi.<host>.<uid>/jf.<n> finds the first one's ("File exists").
mkdir -p "$dir/session-$a" "$dir/session-$b"
cat > "$dir/netns-launch.sh" <<EOF
#!/bin/sh
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
host=\$1
shift
exec ip netns exec "\$host" env TMPDIR="$dir/session-\$host" sh -c "\$*"
EOF
chmod +x "$dir/netns-launch.sh"

rx() { ip netns exec "$b" cat "/sys/class/net/tpv$$b/statistics/rx_bytes"; }
before=$(rx)
mpirun=(mpirun --allow-run-as-root -np $((2 * slots)) --hostfile "$dir/hosts"
        --mca plm_rsh_agent "$dir/netns-launch.sh"
        --mca btl tcp,self --mca btl_tcp_if_include 10.213.0.0/24
        --mca oob_tcp_if_include 10.213.0.0/24
        --mca rtc ^hwloc)
# rtc ^hwloc: the two "hosts" share this machine's /dev/shm, and the
# daemons of both writing hwloc's shared topology there at once crashed
# orted (SIGSEGV in hwloc_shmem_topology_write) in one run of two.
# TWO_HOSTS_DEFAULT_KEEPALIVE=1: OpenMPI's own (minutes), for tp-run's
# warning about it.
[ -n "${TWO_HOSTS_DEFAULT_KEEPALIVE:-}" ] ||
  mpirun+=(--mca oob_tcp_keepalive_time 1 --mca oob_tcp_keepalive_intvl 1
           --mca oob_tcp_keepalive_probes 3)
echo "two-hosts: ${mpirun[*]} $*"
limit=${TWO_HOSTS_LIMIT:-120}
if [ -z "${TWO_HOSTS_CUT:-}" ]; then
  timeout -k 5 "$limit" ip netns exec "$a" env TMPDIR="$dir/session-$a" "${mpirun[@]}" "$@"
  echo "two-hosts: $(( $(rx) - before )) bytes received over the link by host 2"
  exit 0
fi

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
start=$(now)
(
  sleep "$TWO_HOSTS_CUT"
  ip -n "$b" link set "tpv$$b" down
  now > "$dir/cut-at"
) &
rc=0
timeout -k 5 "$limit" ip netns exec "$a" env TMPDIR="$dir/session-$a" "${mpirun[@]}" "$@" || rc=$?
wait
echo "two-hosts: mpirun returned $rc, $(since "$(cat "$dir/cut-at")") s after" \
     "the link went down ($TWO_HOSTS_CUT s after it started)"
# What is left on each host: mpirun, its daemons (orted), the ranks.
left() { ip netns pids "$1" | xargs -r ps -o comm= -p | sort | tr '\n' ' '; }
for i in $(seq 50); do
  [ -z "$(left "$a")$(left "$b")" ] && break
  sleep 0.1
done
echo "two-hosts: left on host 1: $(left "$a")(end)"
echo "two-hosts: left on host 2: $(left "$b")(end)"
exit "$rc"
