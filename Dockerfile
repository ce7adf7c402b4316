# FactLab image: the web app, Celery workers and management commands.
FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
    FACTLAB_PRODUCTION=1
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends build-essential libpq5 curl && rm -rf /var/lib/apt/lists/*
COPY requirements.txt constraints.txt ./
# The CPU build of torch by default; a GPU image installs its CUDA build first (see README).
ARG TORCH_INDEX=""
RUN if [ -n "$TORCH_INDEX" ]; then pip install torch==2.13.0 --index-url "$TORCH_INDEX"; fi \
    && pip install -r requirements.txt -c constraints.txt
COPY . .
# Throwaway keys for the build step only (production collectstatic writes the hashed-name manifest).
RUN python scripts/install_wordnet.py \
    && DJANGO_SECRET_KEY=build-only FACTLAB_PSEUDONYM_KEY=build-only-pseudonyms python manage.py collectstatic --noinput
# Processes run as an unprivileged user; the folders that compose mounts as volumes belong to it (a new
# named volume takes the owner of the image's folder), so it writes uploads, keys and model caches there.
RUN useradd --create-home --uid 10001 --user-group factlab \
    && mkdir -p /app/media /app/var /secrets /models \
    && chown factlab:factlab /app/media /app/var /secrets /models
USER factlab
# Production settings; generates the secret and pseudonym keys into /secrets on first start unless given.
ENTRYPOINT ["/app/scripts/docker-entrypoint.sh"]
EXPOSE 8000
# gunicorn.conf.py (read from /app) keeps FACTLAB_PRODUCTION=1 unless the environment says otherwise.
CMD ["gunicorn", "factlab.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--timeout", "60"]
