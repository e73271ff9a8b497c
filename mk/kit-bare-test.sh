#!/bin/sh
# mk/kit-bare-test.sh - the device kit's CPU self-test in a bare Debian
# root (debootstrap --variant=minbase: none of tfkit's libraries, no
# python, no curl; Debian's /etc/hosts, localhost ::1 and 127.0.0.1), so
# that a library the kit lacks shows here and not on a lent GPU machine.
#   sh mk/kit-bare-test.sh BUILD [ROOT]     (as root; ROOT is made once)
set -eu
B=${1:-build}
R=${2:-/srv/tfkit-bare}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
[ "$(id -u)" = 0 ] || { echo "kit-bare-test: needs root (debootstrap, chroot)" >&2; exit 77; }
[ -s "$B/device-kit.tar.xz" ] || { echo "kit-bare-test: make device-kit first" >&2; exit 66; }
if [ ! -x "$R/bin/sh" ]; then
	command -v debootstrap > /dev/null || apt-get install -y -qq debootstrap
	debootstrap --variant=minbase bookworm "$R" http://deb.debian.org/debian
fi
printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' > "$R/etc/hosts"
for m in proc dev tmp; do
	if ! mountpoint -q "$R/$m"; then
		case $m in
		proc) mount -t proc proc "$R/proc" ;;
		dev) mount --rbind /dev "$R/dev" ;;
		tmp) mount -t tmpfs tmpfs "$R/tmp" ;;
		esac
	fi
done
rm -rf "$R/root/device-kit"
tar -xJf "$B/device-kit.tar.xz" -C "$R/root"
chroot "$R" /bin/sh -c 'cd /root/device-kit && sh kit/selftest'
