#!/bin/sh
# Install the JavaScript libraries the export tests load models with:
# TensorFlow.js (core, layers, CPU backend) and onnxruntime-node, from the
# npm registry into $B/node (tests/cli/tf-export.bats finds them there).
# onnxruntime-node is installed without running its install script, which
# downloads GPU files; the CPU binaries ship in the package.  Without npm
# or the registry the tests that need these skip, saying so.
set -e
B=${B:-build}
dir=$B/node
pkgs="@tensorflow/tfjs-core@4.22.0 @tensorflow/tfjs-layers@4.22.0
      @tensorflow/tfjs-backend-cpu@4.22.0 onnxruntime-node@1.30.0"
if [ -d "$dir/node_modules/onnxruntime-node" ] &&
	[ -d "$dir/node_modules/@tensorflow/tfjs-layers" ]; then
	exit 0
fi
if ! command -v npm > /dev/null 2>&1; then
	if [ "$(id -u)" = 0 ] && command -v apt-get > /dev/null 2>&1; then
		echo "tfkit: installing nodejs npm"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends nodejs npm > /dev/null
	else
		echo "tfkit: npm is missing: the TensorFlow.js and ONNX checks will skip" >&2
		exit 0
	fi
fi
mkdir -p "$dir"
echo "tfkit: installing $(echo $pkgs) into $dir"
# shellcheck disable=SC2086
# (bounded: a machine that cannot reach the registry gives up within
# about two minutes, not npm's default of a quarter of an hour)
npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund \
	--fetch-timeout=30000 --fetch-retries=1 --fetch-retry-maxtimeout=10000 \
	--loglevel=error $pkgs > /dev/null ||
	echo "tfkit: npm install failed: the TensorFlow.js and ONNX checks will skip" >&2
