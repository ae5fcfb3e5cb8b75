#!/usr/bin/env bash
# Makes the infrastructure images docker-compose.yml names (nats, postgres) from Debian packages, for
# machines that reach no image registry; tags them with the names the compose file uses, so it runs
# unchanged. Needs the local base (deploy/scripts/make-base-image.sh) and podman (or docker).
#   deploy/compose/make-images.sh
# Jaeger has no Debian package: where no registry answers, leave the jaeger service out (docs/deploy.md).
set -euo pipefail
cd "$(dirname "$0")"
CLI=${CONTAINER_CLI:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}
BASE_IMAGE=${BASE_IMAGE:-localhost/ratchet-node:20}
"$CLI" build --network=host --build-arg BASE_IMAGE="$BASE_IMAGE" -f nats.Containerfile \
  -t docker.io/library/nats:2.10-alpine .
"$CLI" build --network=host --build-arg BASE_IMAGE="$BASE_IMAGE" -f postgres.Containerfile \
  -t docker.io/library/postgres:16 .
echo "made docker.io/library/nats:2.10-alpine and docker.io/library/postgres:16 from Debian packages"
