#!/bin/sh
# Install the Debian packages tfkit needs, when they are missing.
#   sh mk/deps.sh build   libraries and tools to build
#   sh mk/deps.sh check   the same plus what the test suite uses
#   sh mk/deps.sh lint    clang-format and cppcheck
#   sh mk/deps.sh bench   the build set plus the Python baseline's modules
# As root the packages are installed with apt-get; otherwise the exact
# apt-get line is printed and the script fails.
set -e
mode=${1:-build}
pkgs="gcc make pkg-config libcsv-dev zlib1g-dev libarchive-dev libprotobuf-c-dev
      protobuf-c-compiler libnng-dev libopenblas-dev libjansson-dev
      nettle-dev libmicrohttpd-dev libnghttp2-dev libprotobuf-dev curl
      libjpeg62-turbo-dev libpng-dev"
if [ "$mode" = bench ]; then
	pkgs="$pkgs python3 python3-protobuf protobuf-compiler python3-crc32c wrk
	      python3-sklearn python3-torch python3-numpy nghttp2-client python3-grpc-tools
	      time"
fi
if [ "$mode" = lint ]; then
	pkgs="clang-format cppcheck"
fi
if [ "$mode" = check ]; then
	pkgs="$pkgs bats python3 python3-protobuf protobuf-compiler mandoc man-db gzip
	      binutils jq slurmctld slurmd slurm-client munge openmpi-bin mpich
	      python3-yaml openssl python3-grpcio python3-grpc-tools nghttp2-client
	      wrk valgrind"
fi
if ! command -v dpkg-query >/dev/null 2>&1; then
	echo "tfkit: not a Debian system; make sure these are installed: $pkgs" >&2
	exit 0
fi
missing=
for p in $pkgs; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	case "$st" in
	*" installed") ;;
	*) missing="$missing $p" ;;
	esac
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "tfkit: missing packages; run as root:" >&2
	echo "  apt-get update && apt-get install -y$missing" >&2
	exit 1
fi
echo "tfkit: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null
