#!/usr/bin/env bash
# Builds msmon and msmon-tui statically linked for x86_64 and aarch64 (Debian's cross toolchain) and packs each:
#   dist/msmon-<version>-linux-<arch>.tar.gz  the programs, README, LICENSE, configs/, man pages, completions
#   dist/msmon_<version>_<debarch>.deb         the same installed under /usr
#   dist/SHA256SUMS
# Then runs every archive's programs as a training node would (scripts/package-test.sh; aarch64 under qemu).
# PACKAGE_ARCHS="x86_64" packs one architecture. Build folders: build-static-<arch>.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
bash scripts/setup-package-deps.sh
version=$(sed -n 's/^project(msmon VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
archs=${PACKAGE_ARCHS:-"x86_64 aarch64"}
jobs=$(nproc)
rm -rf dist
mkdir -p dist

for arch in $archs; do
  case "$arch" in
    x86_64) debarch=amd64 toolchain=() ;;
    aarch64) debarch=arm64 toolchain=(-DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake) ;;
    *) echo "package: unknown architecture $arch (x86_64, aarch64)" >&2; exit 2 ;;
  esac
  build="build-static-$arch"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DMSMON_STATIC=ON -DMSMON_BUILD_TESTS=OFF \
    -DMSMON_BUILD_BENCH=OFF -DCMAKE_INSTALL_PREFIX=/usr "${toolchain[@]}" > /dev/null
  cmake --build "$build" -j"$jobs"
  # The .deb's tree: what `cmake --install` puts under /usr, stripped.
  deb_root="dist/deb-$arch"
  DESTDIR="$PWD/$deb_root" cmake --install "$build" --strip > /dev/null
  # The archive: the programs at its top, with their documents.
  name="msmon-$version-linux-$arch"
  top="dist/$name"
  mkdir -p "$top/man" "$top/completions"
  cp "$deb_root/usr/bin/msmon" "$deb_root/usr/bin/msmon-tui" README.md LICENSE "$top/"
  cp -r configs "$top/configs"
  cp "$deb_root"/usr/share/man/man1/*.1 "$top/man/"
  cp "$build/generated/docs/msmon.bash" "$build/generated/docs/msmon-tui.bash" "$build/generated/docs/_msmon" \
    "$build/generated/docs/_msmon-tui" "$top/completions/"
  tar -C dist --owner=0 --group=0 -czf "dist/$name.tar.gz" "$name"
  mkdir -p "$deb_root/DEBIAN" "$deb_root/usr/share/doc/msmon"
  cp LICENSE "$deb_root/usr/share/doc/msmon/copyright"
  cat > "$deb_root/DEBIAN/control" <<CONTROL
Package: msmon
Version: $version
Architecture: $debarch
Maintainer: msmon developers <msmon@localhost>
Section: utils
Priority: optional
Description: terminal monitor for large-model training (msprobe, MindFormers)
 msmon-tui follows msprobe's training monitor and MindFormers output live on the
 training node; msmon is the same engine headless. Statically linked.
CONTROL
  dpkg-deb --root-owner-group --build "$deb_root" "dist/msmon_${version}_$debarch.deb" > /dev/null
  rm -rf "$deb_root" "$top"
done
(cd dist && sha256sum -- *.tar.gz *.deb > SHA256SUMS)
for tarball in dist/*.tar.gz; do bash scripts/package-test.sh "$tarball"; done
ls -l dist
