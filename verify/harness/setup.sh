#!/usr/bin/env bash
# Installs, on Debian and as root, what the fault harness (verify/harness) needs:
# iproute2 (ip), nftables (nft), iptables (NFQUEUE for delays), etcd-server and
# etcd-client, redis-server, redis-sentinel and redis-tools, postgresql (initdb and
# postgres under /usr/lib/postgresql/*/bin), util-linux (setpriv), and ZooKeeper's
# server with a headless Java (libzookeeper-java, default-jre-headless). Nothing is
# started: the harness starts its own servers inside network namespaces.
set -euo pipefail
need=()
have() { command -v "$1" >/dev/null 2>&1; }
have ip || need+=(iproute2)
have nft || need+=(nftables)
have iptables || need+=(iptables)
have etcd || need+=(etcd-server)
have etcdctl || need+=(etcd-client)
have redis-server || need+=(redis-server)
have redis-sentinel || need+=(redis-sentinel)
have redis-cli || need+=(redis-tools)
have setpriv || need+=(util-linux)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
[ -f /usr/share/java/zookeeper.jar ] || need+=(libzookeeper-java)
have java || need+=(default-jre-headless)
if ((${#need[@]})); then
	echo "harness setup: installing ${need[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
echo "harness setup: ok"
