#!/usr/bin/env python3
"""CPU ticks (user + system) of every process of one PostgreSQL server:
the postmaster's own and its reaped children's, and each live backend's.

Usage: postgres-cpu-ticks.py DATA_DIR/postmaster.pid
"""
import os
import sys

postmaster = int(open(sys.argv[1]).readline())
total = 0
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(pid) == postmaster:
        total += int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
    elif int(fields[1]) == postmaster:
        total += int(fields[11]) + int(fields[12])
print(total)
