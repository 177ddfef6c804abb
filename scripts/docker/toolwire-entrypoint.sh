#!/bin/sh
# The image's entrypoint: `node bin/toolwire.js "$@"` with no_new_privs and, when started as
# root, only CAP_SETUID, CAP_SETGID and CAP_KILL (whatever capabilities `docker run` gave).
#
# Why uid 0 and not the `node` user: the worker switches stdio MCP servers and slim to
# MCP_STDIO_UID / DIFY_SLIM_UID (10001 in this image), which needs CAP_SETUID and CAP_SETGID
# (and CAP_KILL to stop them). Docker gives a non-root user no capabilities; a non-root
# process could hold them only as ambient capabilities, and those pass to every child across
# the uid switch and its exec: the server could switch back and read the worker's
# /proc/<pid>/environ and secrets. A switch from uid 0 to another makes the kernel clear the
# child's capabilities, ambient ones included, and no_new_privs keeps it from regaining any
# through a setuid binary. Without CAP_DAC_OVERRIDE, uid 0 reads only files whose mode bits
# let it, and with CAP_SETUID any worker could become uid 0 anyway: the capabilities bound
# the worker, the uid number does not.
set -eu
keep=0xe0 # CAP_KILL (5), CAP_SETGID (6), CAP_SETUID (7)
if [ "$(id -u)" = 0 ]; then
  bounding=$(sed -n 's/^CapBnd:[[:space:]]*//p' /proc/self/status)
  if [ $((0x$bounding & ~$keep)) -ne 0 ]; then
    exec setpriv --bounding-set=-all,+kill,+setgid,+setuid --inh-caps=-all --no-new-privs -- node /app/bin/toolwire.js "$@"
  fi
fi
exec setpriv --no-new-privs -- node /app/bin/toolwire.js "$@"
