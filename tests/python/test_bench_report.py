"""bench/png_chart.py: the stdlib PNG writer gives a file a PNG decoder reads back pixel for pixel,
and the bar chart puts its bars where it says, colored by which side of 1.0 they fall;
bench/suite_table.py: the suite's Markdown table and ratios from its records.
Needs only the standard library (the GPU machine has no matplotlib; these tests need no torch)."""
import os
import struct
import sys
import tempfile
import unittest
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
import png_chart  # noqa: E402
import suite_table  # noqa: E402


def decode(data):
    """(width, height, rgb bytes) of an 8-bit RGB PNG whose rows use filter 0; checks every CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "signature"
    pos, idat, header = 8, b"", None
    kinds = []
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF, f"CRC of {kind}"
        kinds.append(kind)
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    assert kinds[0] == b"IHDR" and kinds[-1] == b"IEND", kinds
    width, height, depth, color, _, _, interlace = header
    assert (depth, color, interlace) == (8, 2, 0), header
    raw = zlib.decompress(idat)
    stride = 1 + 3 * width
    assert len(raw) == stride * height
    rows = [raw[y * stride:(y + 1) * stride] for y in range(height)]
    assert all(row[0] == 0 for row in rows), "filter bytes"
    return width, height, b"".join(row[1:] for row in rows)


class PngWriter(unittest.TestCase):
    def test_round_trip(self):
        width, height = 7, 5
        rgb = bytes((x * 30 + y, y * 40, (x ^ y) * 17)[c] for y in range(height)
                    for x in range(width) for c in range(3))
        self.assertEqual(decode(png_chart.png_bytes(width, height, rgb)), (width, height, rgb))

    def test_wrong_size_refused(self):
        with self.assertRaises(ValueError):
            png_chart.png_bytes(2, 2, b"\x00" * 11)

    def test_canvas_rect_clips(self):
        canvas = png_chart.Canvas(4, 3)
        canvas.rect(2, 1, 10, 10, png_chart.RED)
        self.assertEqual(canvas.pixel(3, 2), png_chart.RED)
        self.assertEqual(canvas.pixel(1, 2), png_chart.WHITE)
        self.assertEqual(canvas.pixel(3, 0), png_chart.WHITE)

    def test_text_lights_glyph_pixels(self):
        canvas = png_chart.Canvas(20, 12)
        end = canvas.text(0, 0, "1", scale=2)
        self.assertEqual(end, 8)
        # "1" is .#. on its top row: the middle column is lit, the left one is not.
        self.assertEqual(canvas.pixel(2, 0), png_chart.BLACK)
        self.assertEqual(canvas.pixel(0, 0), png_chart.WHITE)


class BarChart(unittest.TestCase):
    def test_bars_and_colors(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "chart.png")
            bars = png_chart.bar_chart(path, ["fast", "slow", "missing"], [0.5, 4.0, None],
                                       "ratio")
            with open(path, "rb") as f:
                width, _, rgb = decode(f.read())

        def pixel(x, y):
            start = (y * width + x) * 3
            return tuple(rgb[start:start + 3])

        self.assertEqual(sorted(bars), ["fast", "slow"])
        fast, slow = bars["fast"], bars["slow"]
        # Both bars start at 1.0: the fast one ends there, the slow one begins there.
        self.assertEqual(fast[2], slow[0])
        # Log axis: 4.0 is two octaves right of 1.0, 0.5 one octave left.
        self.assertAlmostEqual((slow[2] - slow[0]) / (fast[2] - fast[0]), 2.0, delta=0.05)
        self.assertEqual(pixel((fast[0] + fast[2]) // 2, (fast[1] + fast[3]) // 2),
                         png_chart.GREEN)
        self.assertEqual(pixel((slow[0] + slow[2]) // 2, (slow[1] + slow[3]) // 2),
                         png_chart.RED)
        # The 1.0 line is drawn over the bars' common edge.
        self.assertEqual(pixel(slow[0], slow[1]), png_chart.BLACK)


def record(gen, hand, check="ok", error=None):
    return {"kernel": "matmul", "dims": {"M": 8, "N": 8, "K": 8}, "dtype": "float16",
            "flops": 4e12, "bytes": 100,
            "variants": {"generated": {"ms": gen, "check": "ok"},
                         "hand-written": {"ms": hand, "check": check, "error": error},
                         "eager": {"ms": 2.0, "check": "ok"}, "compile": {"ms": 4.0, "check": "ok"},
                         "copy": {"ms": 0.5}}}


class SuiteTable(unittest.TestCase):
    def test_row_ratios(self):
        cells = dict(zip(suite_table.COLUMNS, suite_table.row(record(2.0, 1.0))))
        self.assertEqual(cells["gen / hand"], "2.00x")
        self.assertEqual(cells["gen / compile"], "0.50x")
        self.assertEqual(cells["copy / gen"], "0.25")
        # 4e12 flops in 2 ms and in 1 ms.
        self.assertEqual(cells["TFLOP/s gen / hand"], "2000 / 4000")
        self.assertEqual(cells["notes"], "")

    def test_failed_reference_is_not_a_ratio(self):
        cells = dict(zip(suite_table.COLUMNS,
                         suite_table.row(record(2.0, None, check="FAIL (error 0.3 > 0.02)"))))
        self.assertEqual(cells["hand-written ms"], "-")
        self.assertEqual(cells["gen / hand"], "-")
        self.assertIn("hand-written: FAIL", cells["notes"])

    def test_failed_case_is_noted(self):
        failed = {"kernel": "softmax", "dims": {"M": 4}, "dtype": "float16", "flops": None,
                  "bytes": None, "variants": {}, "error": "OutOfMemoryError: no"}
        cells = dict(zip(suite_table.COLUMNS, suite_table.row(failed)))
        self.assertEqual(cells["generated ms"], "-")
        self.assertEqual(cells["notes"], "case: OutOfMemoryError: no")

    def test_report_files(self):
        records = [record(2.0, 1.0), record(0.5, 1.0, error="boom | bang")]
        with tempfile.TemporaryDirectory() as tmp:
            table = suite_table.write_report(records, tmp)
            with open(os.path.join(tmp, "ratio.png"), "rb") as f:
                decode(f.read())
            with open(os.path.join(tmp, "table.md")) as f:
                self.assertEqual(f.read(), table)
        lines = table.splitlines()
        self.assertEqual(len(lines), 4)
        # A "|" in an error message must not split the row.
        self.assertEqual(lines[3].count("|"), len(suite_table.COLUMNS) + 1)


if __name__ == "__main__":
    unittest.main()
