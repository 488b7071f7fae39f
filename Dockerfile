# syntax=docker/dockerfile:1
# Build stage: install everything, compile TypeScript.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

# Runtime stage: compiled output and production dependencies only, as a non-root user.
FROM node:24-bookworm-slim
ENV NODE_ENV=production PORT=8080 DATA_DIR=/data
# Idle memory (issue 29), as `npm start` does: a fixed malloc mmap threshold returns freed large blocks at
# once (glibc's dynamic one rises to ~9 MB when the start frees PGlite's wasm bytes, and then ~50 MB
# freed by the start stays resident in thread arenas). The API thread keeps V8's default young generation
# (a 4 MB one cost the session check ~17 us of CPU a request, issue 35) and gives it back once idle
# (src/idle-memory.ts). In CMD, --v8-pool-size=2 (one V8 thread a core on the 2 cores we size for, not 4)
# leaves fewer arenas holding freed compile and GC memory.
ENV GLIBC_TUNABLES=glibc.malloc.mmap_threshold=1048576:glibc.malloc.trim_threshold=131072
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The console's static files are served from the sources' folder (src/http/console.ts).
COPY --from=build /app/src/console ./src/console
COPY package.json ./
COPY migrations ./migrations
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# The API's /healthz, or a worker's on its own WORKER_HEALTH_PORT (a worker serves no API).
HEALTHCHECK --interval=15s --timeout=3s --start-period=20s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.WORKER_HEALTH_PORT||process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
CMD ["node", "--v8-pool-size=2", "dist/src/server.js"]
