# An offline stand-in for apachepulsar/pulsar:<version>, built only where that image cannot be
# pulled (scripts/docker-images.sh). Laid out as the official image is: the distribution in
# /pulsar (the working directory, bin/ on PATH), a JRE at $JAVA_HOME, uid 10000 in group root
# with conf, data and logs writable by that group, and bin/apply-config-from-env.py. Its
# parts: Debian's OpenJDK 17 JRE and the Pulsar distribution from Maven Central (the one
# scripts/pulsar-broker.sh caches), passed in the build context.
FROM debian:bookworm-slim
ENV LANG=C.UTF-8
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends openjdk-17-jre-headless python3 curl ca-certificates procps \
 && rm -rf /var/lib/apt/lists/*
COPY pulsar /pulsar
COPY apply-config-from-env.py /pulsar/bin/apply-config-from-env.py
RUN rm -f /pulsar/bin/*.cmd \
 && for d in conf data download logs instances/deps packages-storage; do mkdir -p /pulsar/$d; chmod -R ug+rwx /pulsar/$d; chown -R 10000:0 /pulsar/$d; done \
 && chmod -R g+rx /pulsar/bin && chmod -R o+rx /pulsar \
 && useradd --uid 10000 --gid 0 --no-create-home --home-dir /pulsar/data pulsar
ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 \
    PULSAR_PID_DIR=/pulsar/logs
ENV PATH=$PATH:$JAVA_HOME/bin:/pulsar/bin
WORKDIR /pulsar
USER 10000
