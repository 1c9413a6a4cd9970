#!/usr/bin/env bash
# ensure_packages PKG...: installs the Debian packages named that are not installed yet (as root,
# or through sudo). Sourced by the build, sanitizer and fuzzing scripts.
ensure_packages() {
    local missing=() p
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -gt 0 ] || return 0
    echo "accelsim: installing ${missing[*]}"
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# What every build of accelsim needs.
accelsim_build_packages=(g++ cmake ninja-build pkg-config libsystemc-dev libboost-program-options-dev
                         nlohmann-json3-dev libeigen3-dev libgtest-dev libgmock-dev gnuplot-nox
                         libonnx-dev libprotobuf-dev zlib1g-dev)
