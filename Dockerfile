# LobbyTalks in a container: one process, data in the /data volume, configured by LOBBYTALKS_*.
#
#   docker build -t lobbytalks .
#   docker run -d --name lobbytalks -p 8000:8000 -v lobbytalks-data:/data lobbytalks
#
# Behind nginx or Caddy, publish the port to the proxy only and trust its headers:
#   docker run ... -p 127.0.0.1:8000:8000 -e LOBBYTALKS_TRUSTED_PROXIES=1 lobbytalks
# Admin commands run inside it, e.g. `docker exec lobbytalks lobbytalks backup /data/b.db`.
# See docs/admin.md.

# --- stage 1: build the wheel and the wheels it depends on --------------------------------
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY lobbytalks ./lobbytalks
# [scale]: the Redis client, so the image can share rate limits (LOBBYTALKS_RATELIMIT_STORAGE).
RUN python3 -m pip wheel --no-cache-dir --wheel-dir /wheels '.[scale]'

# --- stage 2: install them into a virtualenv on a clean image -----------------------------
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/lobbytalks/bin:$PATH \
    LOBBYTALKS_DATA_DIR=/data \
    LOBBYTALKS_HOST=0.0.0.0 \
    LOBBYTALKS_PORT=8000
# The wheels are mounted from stage 1 for this one step, so they add nothing to the image.
RUN --mount=type=bind,from=build,source=/wheels,target=/wheels \
    python3 -m venv /opt/lobbytalks \
 && /opt/lobbytalks/bin/pip install --no-cache-dir --no-index --find-links /wheels 'lobbytalks[scale]' \
 && useradd --uid 10001 --user-group --no-create-home --home-dir /data --shell /usr/sbin/nologin lobbytalks \
 && mkdir -p /data \
 && chown lobbytalks:lobbytalks /data \
 && chmod 700 /data
USER lobbytalks
WORKDIR /data
VOLUME ["/data"]
EXPOSE 8000
# `lobbytalks serve` turns SIGTERM (docker stop) into a clean stop: in-flight requests finish,
# the database lock is released, exit status 0.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD lobbytalks healthcheck "http://127.0.0.1:${LOBBYTALKS_PORT:-8000}" || exit 1
ENTRYPOINT ["lobbytalks"]
CMD ["serve"]
