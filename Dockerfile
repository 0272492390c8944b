# The otelcol-ragprecision container image: one static binary, Debian's CA
# certificates (an https judge must verify its endpoint), a non-root user
# and a default configuration that runs with the offline judge.
#
#   docker build -t otelcol-ragprecision:dev .          # builds the binary in a golang image
#   make image                                          # --target prebuilt: from bin/otelcol-ragprecision
#   docker run -p 4317:4317 -p 4318:4318 -p 8888:8888 -p 13133:13133 otelcol-ragprecision:dev
#   docker run -v $PWD/my.yaml:/etc/my.yaml otelcol-ragprecision:dev --config /etc/my.yaml
#
# Two targets, one image:
#   (default)         the OpenTelemetry Collector Builder runs in a golang image
#                     on builder-config.yaml, whose `replaces:` builds the
#                     processor from this checkout (/src). Needs a container
#                     registry for the golang image (GO_IMAGE).
#   --target prebuilt the binary and CA bundle that `make image` staged in
#                     build/image/rootfs: the binary `make build` made with the
#                     same builder, the same manifest and the same flags (the
#                     builder always compiles with CGO_ENABLED=0 and -trimpath),
#                     and the build machine's Debian ca-certificates bundle. For
#                     machines without a registry, and to avoid compiling the
#                     collector twice.
# Both put the binary on the same `runtime` stage (user, config, ports,
# entrypoint). BuildKit, buildah and podman build only the stages the target
# needs (Docker's legacy builder builds them all: use BuildKit).
ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG BUILDER_VERSION=v0.161.0
# What --version prints and the image's version label: `make image` passes
# scripts/version.sh's (this stage has no .git); empty keeps
# builder-config.yaml's dist.version (the next release, with -dev).
ARG VERSION=

FROM ${GO_IMAGE} AS source
ARG BUILDER_VERSION
ENV CGO_ENABLED=0
WORKDIR /src
RUN go install go.opentelemetry.io/collector/cmd/builder@${BUILDER_VERSION}
# Module downloads are cached in their own layer, independent of the sources.
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION
RUN if [ -n "$VERSION" ]; then sed -i "s/^  version: .*/  version: $VERSION/" builder-config.yaml; fi \
 && builder --config builder-config.yaml \
 && mkdir -p /rootfs/etc/ssl/certs \
 && cp build/otelcol-ragprecision/otelcol-ragprecision /rootfs/otelcol-ragprecision \
 && cp /etc/ssl/certs/ca-certificates.crt /rootfs/etc/ssl/certs/ca-certificates.crt

# Everything but the binary and the CA bundle.
FROM scratch AS runtime
ARG VERSION
LABEL org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.title="otelcol-ragprecision" \
      org.opencontainers.image.description="OpenTelemetry Collector with the ragprecision processor (Contextual Precision of RAG retrievals)" \
      org.opencontainers.image.source="https://github.com/ragprecision/ragprecision" \
      org.opencontainers.image.licenses="Apache-2.0"
# The image redistributes the work: the licence and NOTICE go with it.
COPY LICENSE NOTICE /usr/share/doc/otelcol-ragprecision/
COPY deploy/image/passwd deploy/image/group /etc/
COPY deploy/image/config.yaml /etc/otelcol-ragprecision/config.yaml
# 10001: a user that exists in /etc/passwd (otel) and owns nothing here;
# numeric so that Kubernetes' runAsNonRoot can check it.
USER 10001:10001
# OTLP gRPC, OTLP HTTP, the collector's own metrics (Prometheus), health_check.
EXPOSE 4317 4318 8888 13133
ENTRYPOINT ["/otelcol-ragprecision"]
CMD ["--config", "/etc/otelcol-ragprecision/config.yaml"]

FROM runtime AS prebuilt
COPY build/image/rootfs/ /

# The default target.
FROM runtime
COPY --from=source /rootfs/ /
