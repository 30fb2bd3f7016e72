#!/usr/bin/env bash
# Build the simulated-node image: Debian 12 minbase with systemd, as a bare
# server would have it (no docker, no vendor packages: the roles install those).
# usage: node-image.sh MIRROR TAG
set -euo pipefail
MIRROR=${1:?mirror} TAG=${2:?tag}
ROOT=$(mktemp -d /var/tmp/inferops-rootfs.XXXXXX)
trap 'rm -rf "$ROOT"' EXIT
debootstrap --variant=minbase \
  --include=python3,python3-apt,ca-certificates,iproute2,procps,curl,gnupg,systemd,systemd-sysv,dbus,sudo,kmod,pciutils,openssh-server \
  bookworm "$ROOT" "$MIRROR" >/dev/null
# Units that cannot work in a container and would mark the system degraded.
for unit in getty@tty1.service console-getty.service systemd-udevd.service \
            systemd-udev-trigger.service systemd-logind.service systemd-remount-fs.service; do
  ln -sf /dev/null "$ROOT/etc/systemd/system/$unit"
done
# sshd starts only on nodes a scenario reaches over SSH, each on its own address (the nodes share
# the host's network: one sshd on 0.0.0.0:22 per node would collide).
rm -f "$ROOT"/etc/systemd/system/multi-user.target.wants/ssh.service "$ROOT"/etc/systemd/system/sshd.service \
      "$ROOT"/etc/systemd/system/sockets.target.wants/ssh.socket
rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/*
tar -C "$ROOT" -c . | docker import -c 'CMD ["/sbin/init"]' -c 'ENV container=docker' -c 'ENV LANG=C.UTF-8' - "$TAG" >/dev/null
