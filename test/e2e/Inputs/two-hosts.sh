#!/usr/bin/env bash
# Runs COMMAND under mpirun on two "hosts": two network namespaces joined
# by a virtual Ethernet pair (10.213.0.1 and 10.213.0.2), SLOTS ranks on
# each, with the TCP settings of docs/Runtime.md ("Ranks on several
# machines"): a hostfile, --mca btl tcp,self, and the network given as a
# subnet for both the messages and mpirun's own wiring. mpirun runs in the
# first namespace and starts a daemon in each through `ip netns exec` (the
# launcher that ssh would be between real machines). Prints the mpirun
# command, then COMMAND's output, then how many bytes crossed the link.
# Needs root and `ip netns` (lit's `netns` feature); removes the namespaces
# on exit, whatever happens.
#
#   two-hosts.sh DIR SLOTS COMMAND...     (DIR: a scratch folder)
set -euo pipefail
dir=$1 slots=$2
shift 2
mkdir -p "$dir"
a=tp$$a b=tp$$b
cleanup() {
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
for ns in "$a" "$b"; do ip -n "$ns" link set lo up; done
ip -n "$a" link set "tpv$$a" up
ip -n "$b" link set "tpv$$b" up

# The hostfile names the namespaces; the launcher runs the daemon's
# command line (one string, as ssh passes it) in the namespace named.
printf '%s slots=%s\n%s slots=%s\n' "$a" "$slots" "$b" "$slots" > "$dir/hosts"
cat > "$dir/netns-launch.sh" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in -*) shift ;; *) break ;; esac; done
host=$1
shift
exec ip netns exec "$host" sh -c "$*"
EOF
chmod +x "$dir/netns-launch.sh"

rx() { ip netns exec "$b" cat "/sys/class/net/tpv$$b/statistics/rx_bytes"; }
before=$(rx)
mpirun=(mpirun --allow-run-as-root -np $((2 * slots)) --hostfile "$dir/hosts"
        --mca plm_rsh_agent "$dir/netns-launch.sh"
        --mca btl tcp,self --mca btl_tcp_if_include 10.213.0.0/24
        --mca oob_tcp_if_include 10.213.0.0/24)
echo "two-hosts: ${mpirun[*]} $*"
timeout 120 ip netns exec "$a" "${mpirun[@]}" "$@"
echo "two-hosts: $(( $(rx) - before )) bytes received over the link by host 2"
