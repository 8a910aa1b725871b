#!/usr/bin/env python3
"""Draws the "Rust (GPU)" kernel logos (a rust-orange rounded square holding a white chip with
pins) as 32x32 and 64x64 PNGs, using only the standard library."""
import struct
import sys
import zlib
from pathlib import Path

ORANGE = (206, 66, 43, 255)
WHITE = (255, 255, 255, 255)
DARK = (40, 40, 40, 255)
CLEAR = (0, 0, 0, 0)


def pixel(x: float, y: float) -> tuple:
    """Colour at (x, y) in the unit square."""
    r = 0.18  # corner radius of the background
    cx = min(max(x, r), 1 - r)
    cy = min(max(y, r), 1 - r)
    if (x - cx) ** 2 + (y - cy) ** 2 > r * r:
        return CLEAR
    chip = 0.3 <= x <= 0.7 and 0.3 <= y <= 0.7
    if chip:
        core = 0.42 <= x <= 0.58 and 0.42 <= y <= 0.58
        return DARK if core else WHITE
    for p in (0.36, 0.5, 0.64):
        pin_v = abs(x - p) < 0.035 and (0.18 <= y < 0.3 or 0.7 < y <= 0.82)
        pin_h = abs(y - p) < 0.035 and (0.18 <= x < 0.3 or 0.7 < x <= 0.82)
        if pin_v or pin_h:
            return WHITE
    return ORANGE


def png(size: int) -> bytes:
    """A size x size RGBA PNG of the logo (4x4 supersampled)."""
    rows = []
    for j in range(size):
        row = bytearray([0])
        for i in range(size):
            acc = [0, 0, 0, 0]
            for sj in range(4):
                for si in range(4):
                    c = pixel((i + (si + 0.5) / 4) / size, (j + (sj + 0.5) / 4) / size)
                    for k in range(4):
                        acc[k] += c[k]
            row.extend(v // 16 for v in acc)
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b""))


def main() -> None:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "kernels" / "rust-gpu"
    for size in (32, 64):
        (out / f"logo-{size}x{size}.png").write_bytes(png(size))


if __name__ == "__main__":
    main()
