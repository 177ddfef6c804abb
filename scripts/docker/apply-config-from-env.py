#!/usr/bin/env python3
"""Write environment variables into Pulsar .conf files, as the official image's script does:
a variable named like a key already in the file (brokerServicePort=...) replaces its value;
PULSAR_PREFIX_<key> sets <key> whether or not the file has it (appended when it does not).
Written for toolwire's offline stand-in image; the official image ships its own.
Usage: apply-config-from-env.py FILE [FILE...]"""
import os
import sys

PREFIX = 'PULSAR_PREFIX_'


def apply(path):
    with open(path) as f:
        lines = f.read().splitlines()
    keys = {}
    for i, line in enumerate(lines):
        if line and not line.startswith('#') and '=' in line:
            keys[line.split('=', 1)[0].strip()] = i
    wanted = {}
    for name, value in os.environ.items():
        if name.startswith(PREFIX):
            wanted[name[len(PREFIX):]] = value
        elif name in keys:
            wanted[name] = value
    for key, value in sorted(wanted.items()):
        print(f'[{path}] {key}={value}')
        if key in keys:
            lines[keys[key]] = f'{key}={value}'
        else:
            lines.append(f'{key}={value}')
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        apply(p)
