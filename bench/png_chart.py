"""A PNG writer and a horizontal bar chart rasterized by hand: standard library only (zlib,
struct), since the GPU machine has no matplotlib.

    bar_chart(path, labels, values, title)  draws one bar per label on a log2 axis around 1.0.
"""
import math
import struct
import zlib

WHITE, BLACK, GREY = (255, 255, 255), (0, 0, 0), (200, 200, 200)
GREEN, RED = (46, 139, 87), (205, 55, 55)

# A 3x5 pixel font: five rows of three columns per glyph, '#' lit. Lower case prints as upper.
_GLYPHS = {
    "0": "###|#.#|#.#|#.#|###", "1": ".#.|##.|.#.|.#.|###", "2": "###|..#|###|#..|###",
    "3": "###|..#|###|..#|###", "4": "#.#|#.#|###|..#|..#", "5": "###|#..|###|..#|###",
    "6": "###|#..|###|#.#|###", "7": "###|..#|..#|..#|..#", "8": "###|#.#|###|#.#|###",
    "9": "###|#.#|###|..#|###", "A": ".#.|#.#|###|#.#|#.#", "B": "##.|#.#|##.|#.#|##.",
    "C": "###|#..|#..|#..|###", "D": "##.|#.#|#.#|#.#|##.", "E": "###|#..|###|#..|###",
    "F": "###|#..|###|#..|#..", "G": "###|#..|#.#|#.#|###", "H": "#.#|#.#|###|#.#|#.#",
    "I": "###|.#.|.#.|.#.|###", "J": "..#|..#|..#|#.#|###", "K": "#.#|#.#|##.|#.#|#.#",
    "L": "#..|#..|#..|#..|###", "M": "#.#|###|###|#.#|#.#", "N": "##.|#.#|#.#|#.#|#.#",
    "O": ".#.|#.#|#.#|#.#|.#.", "P": "###|#.#|###|#..|#..", "Q": "###|#.#|#.#|###|..#",
    "R": "##.|#.#|##.|#.#|#.#", "S": "###|#..|###|..#|###", "T": "###|.#.|.#.|.#.|.#.",
    "U": "#.#|#.#|#.#|#.#|###", "V": "#.#|#.#|#.#|#.#|.#.", "W": "#.#|#.#|###|###|#.#",
    "X": "#.#|#.#|.#.|#.#|#.#", "Y": "#.#|#.#|.#.|.#.|.#.", "Z": "###|..#|.#.|#..|###",
    " ": "...|...|...|...|...", ".": "...|...|...|...|.#.", "-": "...|...|###|...|...",
    "/": "..#|..#|.#.|#..|#..", "=": "...|###|...|###|...", ":": "...|.#.|...|.#.|...",
    "_": "...|...|...|...|###", "(": ".#.|#..|#..|#..|.#.", ")": ".#.|..#|..#|..#|.#.",
    ",": "...|...|...|.#.|#..", "+": "...|.#.|###|.#.|...", "%": "#.#|..#|.#.|#..|#.#",
    ";": "...|.#.|...|.#.|#..", "<": "..#|.#.|#..|.#.|..#", ">": "#..|.#.|..#|.#.|#..",
    "?": "###|..#|.#.|...|.#.",
}


def png_bytes(width, height, rgb):
    """An 8-bit RGB PNG of rgb (bytes, row-major, 3 per pixel), every row with filter 0."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"{len(rgb)} bytes for a {width}x{height} RGB image")
    stride = width * 3
    raw = b"".join(b"\x00" + bytes(rgb[y * stride:(y + 1) * stride]) for y in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9))
            + chunk(b"IEND", b""))


class Canvas:
    def __init__(self, width, height, background=WHITE):
        self.width, self.height = width, height
        self.pixels = bytearray(bytes(background) * (width * height))

    def rect(self, x0, y0, x1, y1, color):
        """Fills [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, int(x0)), min(self.width, int(x1))
        y0, y1 = max(0, int(y0)), min(self.height, int(y1))
        if x0 >= x1:
            return
        row = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start:start + len(row)] = row

    def pixel(self, x, y):
        start = (y * self.width + x) * 3
        return tuple(self.pixels[start:start + 3])

    def text(self, x, y, s, color=BLACK, scale=2):
        """Draws s with its top left at (x, y); returns the x after it."""
        for ch in s:
            glyph = _GLYPHS.get(ch.upper(), _GLYPHS["?"])
            for gy, bits in enumerate(glyph.split("|")):
                for gx, bit in enumerate(bits):
                    if bit == "#":
                        self.rect(x + gx * scale, y + gy * scale, x + (gx + 1) * scale,
                                  y + (gy + 1) * scale, color)
            x += 4 * scale
        return x

    def save(self, path):
        with open(path, "wb") as f:
            f.write(png_bytes(self.width, self.height, self.pixels))


def text_width(s, scale=2):
    return 4 * scale * len(s)


def _axis(values):
    """Powers of two (lo, hi) around 1.0 and every value."""
    known = [v for v in values if v is not None and v > 0] + [1.0]
    lo = 2.0 ** math.floor(math.log2(min(known)) - 1e-9)
    hi = 2.0 ** math.ceil(math.log2(max(known)) + 1e-9)
    return lo, max(hi, lo * 2)


def bar_chart(path, labels, values, title, bar_h=16, gap=8, plot_w=480):
    """One bar per label from 1.0 to its value on a log2 axis, green below 1, red above; a value
    of None prints n/a. Saves a PNG at path; returns {label: (x0, y0, x1, y1)} of the bars."""
    lo, hi = _axis(values)
    left = 16 + max([text_width(s) for s in labels] + [0])
    top, bottom = 40, 40
    width = left + plot_w + 80
    height = top + len(labels) * (bar_h + gap) + bottom
    canvas = Canvas(width, height)
    canvas.text(16, 12, title)

    def x_of(v):
        return left + plot_w * (math.log2(v) - math.log2(lo)) / (math.log2(hi) - math.log2(lo))

    plot_bottom = top + len(labels) * (bar_h + gap)
    tick = lo
    while tick <= hi * 1.0001:
        x = int(x_of(tick))
        canvas.rect(x, top - 4, x + 1, plot_bottom, GREY)
        name = f"{tick:g}"
        canvas.text(x - text_width(name) // 2, plot_bottom + 8, name)
        tick *= 2
    bars = {}
    for i, (label, value) in enumerate(zip(labels, values)):
        y = top + i * (bar_h + gap) + gap // 2
        canvas.text(8, y + (bar_h - 10) // 2, label)
        if value is None or value <= 0:
            canvas.text(int(x_of(1.0)) + 6, y + (bar_h - 10) // 2, "n/a")
            continue
        x0, x1 = sorted((x_of(1.0), x_of(value)))
        box = (int(x0), y, max(int(x1), int(x0) + 1), y + bar_h)
        canvas.rect(*box, GREEN if value <= 1.0 else RED)
        bars[label] = box
        canvas.text(box[2] + 6, y + (bar_h - 10) // 2, f"{value:.2f}x")
    one = int(x_of(1.0))
    canvas.rect(one, top - 4, one + 2, plot_bottom, BLACK)
    canvas.save(path)
    return bars
