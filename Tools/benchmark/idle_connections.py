#!/usr/bin/env python3
"""Opens N idle strata connections (each says hello), reports the server's
resident memory before and after, then closes them.

usage: idle_connections.py PORT SERVER_PID N
"""
import socket
import struct
import sys
import time


def varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number, wire_type, payload):
    return varint((number << 3) | wire_type) + payload


def hello_frame():
    version = field(1, 0, varint(1))                       # ProtocolVersion.major = 1
    hello = field(1, 2, varint(len(version)) + version)   # HelloRequest.version
    hello += field(2, 2, varint(4) + b"idle")             # HelloRequest.client_name
    frame = field(1, 0, varint(1))                         # ClientFrame.request_id = 1
    frame += field(10, 2, varint(len(hello)) + hello)      # ClientFrame.hello
    return struct.pack(">BI", 0, len(frame)) + frame


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    port, pid, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    before = rss_kib(pid)
    sockets = []
    frame = hello_frame()
    for _ in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(frame)
        sockets.append(s)
    for s in sockets:
        s.settimeout(10)
        header = s.recv(5)
        if len(header) < 5:
            raise SystemExit("a connection was closed before its hello was answered")
        length = struct.unpack(">I", header[1:5])[0]
        remaining = length
        while remaining:
            remaining -= len(s.recv(remaining))
    time.sleep(1)
    after = rss_kib(pid)
    print(f"{count} {before} {after} {(after - before) / count:.1f}")
    for s in sockets:
        s.close()


if __name__ == "__main__":
    main()
