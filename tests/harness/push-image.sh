#!/usr/bin/env bash
# Push a local image to the test registry and print its digest reference.
# usage: push-image.sh LOCAL_IMAGE REPO[:TAG]   -> 127.0.0.1:5000/REPO@sha256:...
set -euo pipefail
LOCAL=${1:?local image} TARGET=${2:?repo[:tag]}
REGISTRY=${REGISTRY:-127.0.0.1:5000}
repo=${TARGET%%:*}
tag=${TARGET#"$repo"}; tag=${tag#:}; tag=${tag:-latest}
docker tag "$LOCAL" "$REGISTRY/$repo:$tag"
docker push -q "$REGISTRY/$repo:$tag" >/dev/null
digest=$(curl -fsS -o /dev/null -D - \
  -H 'Accept: application/vnd.docker.distribution.manifest.v2+json' \
  -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
  "http://$REGISTRY/v2/$repo/manifests/$tag" | tr -d '\r' | awk -F': ' 'tolower($1)=="docker-content-digest"{print $2}')
[[ $digest == sha256:* ]] || { echo "no digest for $REGISTRY/$repo:$tag" >&2; exit 1; }
echo "$REGISTRY/$repo@$digest"
