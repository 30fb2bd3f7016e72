#!/usr/bin/env bash
# Build the simulated-node image: Debian minbase with systemd, as a bare
# server would have it (no docker, no vendor packages: the roles install those). nftables is in a
# standard Debian install; the node with a network namespace of its own (molecule/harness) reaches no mirror.
# usage: node-image.sh MIRROR TAG [SUITE]   (SUITE: bookworm, the default, or trixie)
set -euo pipefail
MIRROR=${1:?mirror} TAG=${2:?tag} SUITE=${3:-bookworm}
ROOT=$(mktemp -d /var/tmp/inferops-rootfs.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
debootstrap --variant=minbase \
  --include=python3,python3-apt,ca-certificates,iproute2,procps,curl,gnupg,systemd,systemd-sysv,dbus,sudo,kmod,pciutils,openssh-server,nftables \
  "$SUITE" "$ROOT" "$MIRROR" >/dev/null
# Units that cannot work in a container and would mark the system degraded.
for unit in getty@tty1.service console-getty.service systemd-udevd.service \
            systemd-udev-trigger.service systemd-logind.service systemd-remount-fs.service; do
  ln -sf /dev/null "$ROOT/etc/systemd/system/$unit"
done
# sshd starts only on nodes a scenario reaches over SSH, each on its own address (the nodes share
# the host's network: one sshd on 0.0.0.0:22 per node would collide).
rm -f "$ROOT"/etc/systemd/system/multi-user.target.wants/ssh.service "$ROOT"/etc/systemd/system/sshd.service \
      "$ROOT"/etc/systemd/system/sockets.target.wants/ssh.socket
# Debian 13 installs its sources as deb822 (debootstrap still writes the one-line file): as a trixie server has them.
if [[ $SUITE != bookworm ]]; then
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$MIRROR" "$SUITE" >"$ROOT/etc/apt/sources.list.d/debian.sources"
  rm -f "$ROOT/etc/apt/sources.list"
fi
# dpkg without an fsync per file, as Debian's own container images have it (docker-apt-speedup): a simulated node
# is thrown away after its run, and with fsync each node's docker.io install took 47 s instead of 9 (2026-12-06).
echo force-unsafe-io >"$ROOT/etc/dpkg/dpkg.cfg.d/inferops-unsafe-io"
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*
tar -C "$ROOT" -c . | docker import -c 'CMD ["/sbin/init"]' -c 'ENV container=docker' -c 'ENV LANG=C.UTF-8' - "$TAG" >/dev/null
