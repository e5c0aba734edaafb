#!/usr/bin/env bash
# Regenerates Sources/StrataWire/Generated/strata.pb.swift from
# Protocol/strata.proto with protoc and protoc-gen-swift.
#
# protoc: Debian's protobuf-compiler (installed when absent).
# protoc-gen-swift: built from the swift-protobuf version the package
# resolves (a release build of the plugin takes several minutes the first
# time; it is cached under .build-protoc/). Set PROTOC_GEN_SWIFT to use a
# plugin you already have.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v protoc >/dev/null; then
    if [ "$(id -u)" = 0 ]; then
        apt-get update -qq && apt-get install -y -qq protobuf-compiler
    else
        sudo apt-get update -qq && sudo apt-get install -y -qq protobuf-compiler
    fi
fi

plugin="${PROTOC_GEN_SWIFT:-}"
if [ -z "$plugin" ]; then
    swift package resolve >/dev/null
    version=$(git -C .build/checkouts/swift-protobuf describe --tags --exact-match 2>/dev/null || echo unknown)
    echo "building protoc-gen-swift from swift-protobuf $version"
    swift build -c release --package-path .build/checkouts/swift-protobuf \
        --scratch-path .build-protoc --product protoc-gen-swift
    plugin="$(swift build -c release --package-path .build/checkouts/swift-protobuf \
        --scratch-path .build-protoc --show-bin-path)/protoc-gen-swift"
fi

mkdir -p Sources/StrataWire/Generated
protoc --plugin="protoc-gen-swift=$plugin" \
    --proto_path=Protocol \
    --swift_opt=Visibility=Public \
    --swift_out=Sources/StrataWire/Generated \
    Protocol/strata.proto
echo "wrote Sources/StrataWire/Generated/strata.pb.swift"
