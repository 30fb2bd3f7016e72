#!/bin/sh
# Stream a minimal rootfs to stdout as a tar: python3.11, the stdlib modules the
# stand-in server imports, and their shared libraries.
set -e
R=/tmp/rootfs
mkdir -p $R/usr/bin $R/usr/local/bin $R/tmp $R/etc $R/lib64
cp /usr/bin/python3.11 $R/usr/bin/ && ln -s python3.11 $R/usr/bin/python3
# the image's `vllm` runs by itself too (the weight cache's daemon has `vllm preload` as its entry point)
{ echo '#!/usr/bin/python3 -B'; cat /src/vllm; } > $R/usr/local/bin/vllm && chmod 755 $R/usr/local/bin/vllm
python3 -B /src/vllm --print-module-files > /tmp/modules.txt
cp -r /usr/lib/python3.11/encodings $R/usr/lib/python3.11/ 2>/dev/null || { mkdir -p $R/usr/lib/python3.11 && cp -r /usr/lib/python3.11/encodings $R/usr/lib/python3.11/; }
while read -r f; do
  case $f in /src/*) continue ;; esac
  mkdir -p "$R$(dirname "$f")" && cp "$f" "$R$f"
done < /tmp/modules.txt
for f in /usr/bin/python3.11 $(grep '\.so$' /tmp/modules.txt); do ldd "$f"; done \
  | awk '/=>/ {print $3} /ld-linux/ {print $1}' | sort -u | while read -r lib; do
    [ -f "$lib" ] && mkdir -p "$R$(dirname "$lib")" && cp -L "$lib" "$R$lib"
  done
cp -L /lib64/ld-linux-x86-64.so.2 $R/lib64/
echo 'root:x:0:0:root:/root:/bin/sh' > $R/etc/passwd
find $R -name __pycache__ -prune -exec rm -rf {} +
chmod 1777 $R/tmp
tar -C $R -c .
