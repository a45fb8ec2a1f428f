# dreamd daemon image: `docker compose up` runs it next to Redis (see docker-compose.yml).
# Node 24, the current LTS line (Node 20 reached its end of life in April 2026).

# --- build: compile TypeScript to dist/ -------------------------------------------------------------------------
FROM node:24-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY bin ./bin
COPY src ./src
COPY workers ./workers
RUN npm run build

# --- runtime: production dependencies and the compiled code only -----------------------------------------------
FROM node:24-slim
ENV NODE_ENV=production
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
# Sessions in, memory out (dreamd's own state lives in the memory folder's .dreamd/); owned by the unprivileged
# `node` user (uid 1000) the daemon runs as. Named volumes start as copies of these directories, so they are
# writable. For bind mounts of folders owned by someone else, run the container as that owner
# (`user: "${UID}:${GID}"` in docker-compose.yml): dreamd needs no home directory and writes only to the mounts.
RUN mkdir -p /data/sessions /data/memory && chown -R node:node /data
USER node
ENV DREAMD_HOST=0.0.0.0 \
    DREAMD_PORT=7077 \
    DREAMD_SESSIONS_DIR=/data/sessions \
    DREAMD_MEMORY_DIR=/data/memory
EXPOSE 7077
# The slim image has no curl: ask /healthz with Node's own fetch, on the port the daemon was given (DREAMD_PORT).
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.DREAMD_PORT||7077)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "bin/dreamd.js", "start"]
